import type { voice } from '@livekit/agents';

/**
 * How long the local voice waits before it takes the user's turn as finished (docs/reference/voice-agent.md,
 * "Local voice"; docs/decisions/0030-local-voice.md). The framework's defaults (the silero VAD's
 * 550 ms of silence, 500 ms of endpointing, and its end-of-turn model, which holds a turn it judges
 * unfinished for up to 3 s) suit a model that transcribes free speech and a language model that
 * answers it; the local recogniser decodes one short request against a grammar, so a pause inside
 * it is rare and waiting longer only delays the answer. Measured in `npm run bench -- --only=local-voice`.
 */

/** Silence (ms) after which the VAD ends an utterance, when the recogniser is local. */
export const LOCAL_VAD_MIN_SILENCE_MS = 350;

/**
 * Audio kept from before the VAD heard speech start (ms), when the recogniser is local (the silero
 * default is 500 ms). Shorter than the silence that ends an utterance: the user's track carries
 * nothing while the user is silent, so the VAD's lead-in holds what it heard last, and at 500 ms
 * that was the end of the user's previous request, which the recogniser then heard as a word
 * before the new one (docs/decisions/0030-local-voice.md).
 */
export const LOCAL_VAD_PREFIX_PADDING_MS = 200;

/** Endpointing floor (ms): in VAD mode the turn ends at max(VAD silence, this). */
export const LOCAL_ENDPOINTING_MIN_DELAY_MS = 300;

/**
 * The session's turn handling with the local recogniser: the turn ends when the VAD says so. Left
 * to its default, the framework runs its end-of-turn model (`turn-detector-v1-mini`) on the user's
 * audio; on espeak-ng's requests it judged most turns unfinished and waited its 3 s maximum, so the
 * answer came 2.8 s after the request instead of 0.7 s (docs/decisions/0030-local-voice.md).
 * A new object for each session: the framework writes its resolved settings into the one it is given.
 */
export function localTurnHandling(): NonNullable<voice.AgentSessionOptions['turnHandling']> {
  return { turnDetection: 'vad', endpointing: { minDelay: LOCAL_ENDPOINTING_MIN_DELAY_MS } };
}
