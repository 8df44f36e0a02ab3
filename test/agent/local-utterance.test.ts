import { describe, expect, it } from 'vitest';
import { NOISE_FLOOR_RMS, speechSpan, withNoiseFloor } from '../../agent/local-voice/utterance.js';

const RATE = 24_000;

/** `seconds` of a 200 Hz tone at `amplitude`, or of digital silence at 0. */
function tone(seconds: number, amplitude: number): Int16Array {
  return Int16Array.from({ length: Math.round(seconds * RATE) }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * 200 * i) / RATE)),
  );
}

function joined(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const rms = (pcm: Int16Array) => Math.sqrt(pcm.reduce((sum, sample) => sum + sample * sample, 0) / pcm.length);

describe('the utterance the local recogniser decodes (docs/decisions/0030-local-voice.md)', () => {
  it("cuts the VAD's lead-in and the silence after the speech, keeping 20 ms either side", () => {
    const speech = tone(0.3, 8000);
    const span = speechSpan(joined(tone(0.5, 0), speech, tone(0.4, 0)), RATE);
    expect(span.length).toBe(Math.round(0.34 * RATE));
    expect(Array.from(span.subarray(0, 0.02 * RATE)).every((sample) => sample === 0)).toBe(true);
    expect(Array.from(span.subarray(0.02 * RATE, 0.32 * RATE))).toEqual(Array.from(speech));
  });

  it('keeps a soft stretch inside the speech and at its end that is loud enough to be part of it', () => {
    // 5 % of the peak is above the -34 dB cut; a faint hum of 1 % before the speech is not.
    const span = speechSpan(
      joined(tone(0.2, 80), tone(0.2, 8000), tone(0.1, 400), tone(0.2, 8000), tone(0.1, 400), tone(0.3, 0)),
      RATE,
    );
    expect(span.length).toBe(Math.round(0.64 * RATE));
  });

  it('leaves audio with nothing loud in it whole', () => {
    const quiet = tone(0.5, 40);
    expect(speechSpan(quiet, RATE)).toEqual(quiet);
    expect(speechSpan(tone(0.5, 0), RATE).length).toBe(0.5 * RATE);
  });

  it('adds trailing silence and a faint noise floor, the same every time', () => {
    const speech = tone(0.3, 8000);
    const conditioned = withNoiseFloor(speech, RATE, 0.5);
    expect(conditioned.length).toBe(Math.round(0.8 * RATE));
    const floor = rms(conditioned.subarray(0.3 * RATE));
    expect(floor).toBeGreaterThan(NOISE_FLOOR_RMS * 0.9);
    expect(floor).toBeLessThan(NOISE_FLOOR_RMS * 1.1);
    // The speech is only disturbed by the floor: no sample moves by more than its amplitude.
    const moved = Math.max(...Array.from(speech, (sample, i) => Math.abs(conditioned[i]! - sample)));
    expect(moved).toBeLessThanOrEqual(Math.ceil(NOISE_FLOOR_RMS * Math.sqrt(3)));
    expect(moved).toBeGreaterThan(0);
    expect(withNoiseFloor(speech, RATE, 0.5)).toEqual(conditioned);
    // The input is left as it was.
    expect(Array.from(speech)).toEqual(Array.from(tone(0.3, 8000)));
  });

  it('keeps samples within 16 bits where the speech is at full scale', () => {
    const conditioned = withNoiseFloor(tone(0.1, 32_767), RATE, 0);
    expect(Math.max(...conditioned)).toBeLessThanOrEqual(32_767);
    expect(Math.min(...conditioned)).toBeGreaterThanOrEqual(-32_768);
  });
});
