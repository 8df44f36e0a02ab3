import { readerView } from '../plain-text.js';
import { readingOf, writeBack } from '../reading.js';
import { DETECTORS, OTP_DETECTOR } from './detectors.js';
import type { Finding, PiiKind, ValueShape } from './kinds.js';
import { shapeOf } from './kinds.js';
import { MAX_SCAN_CHARS } from './limits.js';
import { MASKED_WHOLE, maskValue, maskWhole } from './mask.js';
import { mayHoldIdentity } from './may-hold-identity.js';

export interface ScrubResult {
  text: string;
  findings: Finding[];
  /** The whole string (trimmed) was one detected value. */
  whole: PiiKind | undefined;
}

const WITH_OTP = [...DETECTORS, OTP_DETECTOR];
const clean = (text: string): ScrubResult => ({ text, findings: [], whole: undefined });

function countDigits(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) count += 1;
  }
  return count;
}

/** Cues for the detectors that read words rather than digits; without any, a text with no digit and no `@` holds nothing. */
const LETTER_CUE = new RegExp(`(?:^|[^\\p{L}])(?:at|name|naam|nam)(?:[^\\p{L}]|$)|[[(<{] ?(?:at|@) ?[\\])>}]|एट|ऐट|नाम`, 'iu');

/**
 * Masks every detected identity value inside `text` (the rest stays readable) and says what it
 * found. Strings over the budget are not scanned but dropped with a marker.
 */
export function scrubText(input: string, otpContext = false): ScrubResult {
  if (input.length > MAX_SCAN_CHARS) {
    return { text: `[dropped: ${input.length} chars]`, findings: [{ kind: 'dropped', shape: { length: input.length, digits: 0, letters: 0, kind: 'dropped' } }], whole: 'dropped' };
  }
  if (!mayHoldIdentity(input, otpContext)) return clean(input);
  const view = readerView(input);
  const reading = readingOf(view);
  let text = reading?.text ?? view;
  const digits = countDigits(text);
  const hasAt = text.includes('@');
  if (digits === 0 && !hasAt && !LETTER_CUE.test(text)) return clean(input);
  const findings: Finding[] = [];
  let whole: PiiKind | undefined;
  let trimmed: string | undefined;
  const detectors = otpContext ? WITH_OTP : DETECTORS;
  for (const detector of detectors) {
    if (digits < detector.minDigits || text.length < detector.minLength) continue;
    if ((detector.kind === 'email' || detector.kind === 'upi') && detector.cue === undefined && !hasAt) continue;
    if (detector.cue && !detector.cue.test(text)) continue;
    // A test is far cheaper than a replace with a callback, and most strings match nothing.
    detector.pattern.lastIndex = 0;
    if (!detector.pattern.test(text)) continue;
    detector.pattern.lastIndex = 0;
    trimmed ??= text.trim();
    text = text.replace(detector.pattern, (match: string) => {
      const kind = detector.classify ? detector.classify(match) : detector.kind;
      if (kind === undefined) return match;
      findings.push({ kind, shape: shapeOf(match, kind) });
      if (match === trimmed) whole = kind;
      return detector.maskWhole ? maskWhole(match) : maskValue(match);
    });
  }
  if (findings.length === 0) return clean(input);
  return { text: reading ? writeBack(view, reading, text, maskWhole) : text, findings, whole };
}

/**
 * A value under a sensitive key: masked whatever it looks like, with its shape. A recognised
 * identifier keeps its last four like a hint; dates, codes and text nothing recognises (a name,
 * an address) are masked whole, since a last four there would be a surname or a PIN code.
 */
export function maskKeyed(value: string): { text: string; shape: ValueShape } {
  if (value.length > MAX_SCAN_CHARS) return { text: `[dropped: ${value.length} chars]`, shape: { length: value.length, digits: 0, letters: 0, kind: 'dropped' } };
  const scan = scrubText(value);
  const kind = scan.whole ?? 'text';
  const text = MASKED_WHOLE.has(kind) ? maskWhole(value) : scan.text;
  return { text, shape: shapeOf(value, kind) };
}
