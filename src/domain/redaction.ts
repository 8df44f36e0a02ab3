import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import type { ValueShape } from './pii.js';
import { jsonNumberSize, jsonStringSize } from './json-size.js';
import { maskValue, maskWhole, scrubText, shapeOf } from './pii.js';

export { maskValue } from './pii.js';

/**
 * Hint redaction: the backend never keeps a raw input value. Everything here is a
 * pure function of the hint and the rule it is checked against.
 */

/** Components whose hint is a choice, not a secret ("checked", "tapped", a file name). */
const CHOICE_COMPONENT_TYPES = new Set([
  'checkbox',
  'switch',
  'radio_button',
  'dropdown',
  'button',
  'file_upload',
  'camera',
]);

const MAX_PATTERN_LENGTH = 512;
/** A choice hint is kept only when it reads as a label: short, no digits, nothing detected. */
const MAX_LABEL_CHARS = 32;

export interface HintShape extends ValueShape {
  matches_pattern?: boolean;
}

const SHAPE_KEYS = { length: jsonStringSize('length') + 1, digits: jsonStringSize('digits') + 1, letters: jsonStringSize('letters') + 1, kind: jsonStringSize('kind') + 1, matches: jsonStringSize('matches_pattern') + 1 };

/** A shape's JSON size from its known fields: every shape is built here or in pii.ts, never taken from a client. */
export function hintShapeSize(shape: HintShape): number {
  let size = 2 + SHAPE_KEYS.length + jsonNumberSize(shape.length) + 1 + SHAPE_KEYS.digits + jsonNumberSize(shape.digits) + 1 + SHAPE_KEYS.letters + jsonNumberSize(shape.letters);
  if (shape.kind !== undefined) size += 1 + SHAPE_KEYS.kind + jsonStringSize(shape.kind);
  if (shape.matches_pattern !== undefined) size += 1 + SHAPE_KEYS.matches + (shape.matches_pattern ? 4 : 5);
  return size;
}

export interface RedactedHint {
  hint: string;
  masked: true;
  masked_by?: 'server';
  shape?: HintShape;
}

export function isChoiceComponent(componentType: string | undefined): boolean {
  return componentType !== undefined && CHOICE_COMPONENT_TYPES.has(componentType.toLowerCase());
}

/**
 * Compiling costs ~70 times a match, and every hint on a screen with a schema needs its
 * component's pattern. Bounded: patterns come from clients. `'invalid'` remembers one that does not compile.
 */
const compiledPatterns = new LRUCache<string, RE2JS | 'invalid'>({ max: 512 });

function compiled(pattern: string): RE2JS | undefined {
  let entry = compiledPatterns.get(pattern);
  if (entry === undefined) {
    try {
      entry = RE2JS.compile(pattern);
    } catch {
      entry = 'invalid';
    }
    compiledPatterns.set(pattern, entry);
  }
  return entry === 'invalid' ? undefined : entry;
}

/**
 * Full match, as a form validator applies it. RE2 semantics run in linear time,
 * so a hostile pattern in a client-sent schema cannot stall the process.
 */
export function matchesPattern(value: string, pattern: string): boolean | undefined {
  if (pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH) return undefined;
  return compiled(pattern)?.matches(value);
}

export function describeShape(value: string, pattern: string | undefined): HintShape {
  const shape: HintShape = shapeOf(value);
  const matches = pattern === undefined ? undefined : matchesPattern(value, pattern);
  if (matches !== undefined) shape.matches_pattern = matches;
  return shape;
}

export interface HintInput {
  hint: string;
  masked: boolean | undefined;
  componentType: string | undefined;
  pattern: string | undefined;
}

const HAS_DIGIT = /\p{Nd}/u;

/** How the deployed SDKs write an empty field: no text, or the `__EMPTY__` marker (docs/decisions/0017-what-the-deployed-sdks-do.md). */
export const isEmptyHint = (hint: string): boolean => hint.trim() === '' || hint === '__EMPTY__';

/**
 * Decide what of a hint may be kept. Returns undefined when the hint is kept as sent: masked by
 * the client with nothing detected in it, or a choice that reads as a short label. Everything
 * else is masked (dates and OTPs whole) with its shape, and the kind of identity value it is.
 */
export function redactHint(input: HintInput): RedactedHint | undefined {
  // An empty field holds nothing to mask, and its shape would only say "0 characters".
  if (isEmptyHint(input.hint)) return undefined;
  const scan = scrubText(input.hint);
  if (scan.findings.length === 0) {
    if (input.masked === true) return undefined;
    const label = input.hint.length <= MAX_LABEL_CHARS && !HAS_DIGIT.test(input.hint);
    if (label && isChoiceComponent(input.componentType)) return undefined;
  }
  if (input.masked === true) {
    // Masked by the client, yet something in it reads as an identity value: mask what was found.
    return { hint: scan.text, masked: true, masked_by: 'server', shape: shapeOf(input.hint, scan.whole) };
  }
  const shape = describeShape(input.hint, input.pattern);
  if (scan.whole !== undefined) shape.kind = scan.whole;
  if (scan.whole === 'dropped') return { hint: scan.text, masked: true, masked_by: 'server', shape };
  // A recognised identifier keeps its last four, as the SDKs' own masks do; text nothing
  // recognises (a name, an address, a value mistyped) is masked whole, since its last four could
  // be a surname or a PIN code. Dates and OTPs are masked whole. The shape says what it was.
  const keepsLastFour = scan.whole !== undefined && scan.whole !== 'date' && scan.whole !== 'otp';
  return { hint: keepsLastFour ? maskValue(input.hint) : maskWhole(input.hint), masked: true, masked_by: 'server', shape };
}
