/**
 * What the local recogniser is given to decode, made from the utterance the VAD cut
 * (docs/decisions/0030-local-voice.md, "What was measured"). pocketsphinx's US-English model was
 * trained on recorded speech, which always has a noise floor, and it decodes a request best when
 * the speech starts at once:
 * - the VAD's lead-in (half a second of what the microphone heard before the speech) is cut off,
 *   and the tail after the last loud frame as well: 50 ms of silence before a request took the
 *   phrase set's accuracy from 89 to 80 %;
 * - a faint, fixed noise floor is added: digital silence (a synthetic voice, a codec's silent
 *   frames) is far from anything the model heard, and with the floor 94 to 96 % of the same set
 *   was understood against 89 %. It is 60 dB below full scale, under a real microphone's own floor,
 *   and made by a seeded generator, so the same audio always decodes to the same words.
 */

/** Frames of 10 ms are weighed for loudness. */
const FRAME_SECONDS = 0.01;
/** A frame is part of the speech when its RMS is at least this share of the loudest frame's (-34 dB). */
const SPEECH_SHARE_OF_PEAK = 0.02;
/** Below this RMS (16-bit samples) nothing is speech, however quiet the rest. */
const SPEECH_FLOOR_RMS = 60;
/** Kept before the first and after the last loud frame: the soft start and end of a word. */
const MARGIN_SECONDS = 0.02;
/** RMS of the noise floor added, in 16-bit samples (about -60 dBFS). */
export const NOISE_FLOOR_RMS = 30;

/** RMS of each whole 10 ms frame. */
function frameLoudness(pcm: Int16Array, frame: number): number[] {
  const loudness: number[] = [];
  for (let start = 0; start + frame <= pcm.length; start += frame) {
    let sum = 0;
    for (let i = start; i < start + frame; i += 1) sum += pcm[i]! * pcm[i]!;
    loudness.push(Math.sqrt(sum / frame));
  }
  return loudness;
}

/**
 * The part of `pcm` from a little before its first loud frame to a little after its last one; the
 * whole of it when nothing in it is loud (the recogniser then hears what there is, and finds no request).
 */
export function speechSpan(pcm: Int16Array, sampleRate: number): Int16Array {
  const frame = Math.max(1, Math.round(sampleRate * FRAME_SECONDS));
  const loudness = frameLoudness(pcm, frame);
  const threshold = Math.max(SPEECH_FLOOR_RMS, SPEECH_SHARE_OF_PEAK * Math.max(0, ...loudness));
  const first = loudness.findIndex((rms) => rms >= threshold);
  if (first < 0) return pcm;
  const last = loudness.findLastIndex((rms) => rms >= threshold);
  const margin = Math.round(MARGIN_SECONDS / FRAME_SECONDS) * frame;
  return pcm.subarray(Math.max(0, first * frame - margin), Math.min(pcm.length, (last + 1) * frame + margin));
}

/**
 * `speech` followed by `trailingSeconds` of silence, with the noise floor added throughout: a new
 * array, the same for the same input (a fixed-seed Park–Miller generator, uniform noise).
 */
export function withNoiseFloor(speech: Int16Array, sampleRate: number, trailingSeconds: number): Int16Array {
  const out = new Int16Array(speech.length + Math.round(trailingSeconds * sampleRate));
  out.set(speech);
  // Uniform noise on [-a, a] has RMS a / √3.
  const amplitude = NOISE_FLOOR_RMS * Math.sqrt(3);
  let state = 20_240_229;
  for (let i = 0; i < out.length; i += 1) {
    state = (state * 48_271) % 2_147_483_647;
    const noise = Math.round(((state / 2_147_483_647) * 2 - 1) * amplitude);
    out[i] = Math.max(-32_768, Math.min(32_767, out[i]! + noise));
  }
  return out;
}
