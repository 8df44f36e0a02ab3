/**
 * How long the local voice waits before it takes the user's turn as finished (docs/voice-agent.md,
 * "Local voice"). The framework's defaults (the silero VAD's 550 ms of silence, 500 ms of
 * endpointing) suit a model that transcribes free speech and a language model that answers it;
 * the local recogniser decodes one short request against a grammar, so a pause inside it is rare
 * and waiting longer only delays the answer. Measured in `npm run bench -- --only=local-voice`.
 */

/** Silence (ms) after which the VAD ends an utterance, when the recogniser is local. */
export const LOCAL_VAD_MIN_SILENCE_MS = 350;

/** Endpointing floor (ms): in VAD mode the turn ends at max(VAD silence, this). */
export const LOCAL_ENDPOINTING_MIN_DELAY_MS = 300;
