import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';

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

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;
const KEEP_TAIL = 4;
const SHORT_VALUE = 8;
const MAX_PATTERN_LENGTH = 512;

export interface HintShape {
  length: number;
  digits: number;
  letters: number;
  matches_pattern?: boolean;
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
 * Values of 8+ characters keep their last 4 characters and their separators; shorter
 * values are masked whole, because 4 of 6 characters would give most of an OTP away.
 */
export function maskValue(value: string): string {
  const chars = Array.from(value);
  if (chars.length < SHORT_VALUE) return '*'.repeat(chars.length);
  const tailStart = chars.length - KEEP_TAIL;
  return chars.map((char, index) => (index >= tailStart || !LETTER_OR_DIGIT.test(char) ? char : '*')).join('');
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
  let digits = 0;
  let letters = 0;
  let length = 0;
  for (const char of value) {
    length += 1;
    if (DIGIT.test(char)) digits += 1;
    else if (LETTER.test(char)) letters += 1;
  }
  const shape: HintShape = { length, digits, letters };
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

/**
 * Decide what of a hint may be kept. Returns undefined when the hint is kept as sent
 * (already masked by the client, or a choice component), otherwise the server-masked form.
 */
export function redactHint(input: HintInput): RedactedHint | undefined {
  if (input.masked === true || isChoiceComponent(input.componentType)) return undefined;
  return {
    hint: maskValue(input.hint),
    masked: true,
    masked_by: 'server',
    shape: describeShape(input.hint, input.pattern),
  };
}
