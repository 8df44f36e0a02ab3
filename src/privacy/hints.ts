import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import type { ValueShape } from './kinds.js';
import { shapeOf } from './kinds.js';
import { patternSize } from './pattern-size.js';
import { maskWhole } from './mask.js';
import { KEEPS_LAST_FOUR, scrubText } from './scrub.js';

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
 * The most atoms a client's pattern may hold once its counted repetitions are written out
 * (pattern-size.ts): a field validator needs tens (`^[A-Z]{5}[0-9]{4}[A-Z]$` is 10, a name field's
 * `^[a-zA-Z ]{1,100}$` 100). RE2 runs in time linear in the input, but also in its program: a
 * pattern of many copies of `(?:\w?){1000}` compiles to megabytes and takes seconds to match a short
 * hint (docs/reference/events.md).
 */
const MAX_PATTERN_ATOMS = 300;
/** The compiled programs kept, counted in instructions (about 120 bytes each on the heap): a few MiB at most. */
const MAX_KEPT_INSTRUCTIONS = 50_000;

/**
 * Compiling costs ~70 times a match, and every hint on a screen with a schema needs its
 * component's pattern. Bounded by count and by program size: patterns come from clients.
 * `'invalid'` remembers one that does not compile, or is too large to.
 */
const compiledPatterns = new LRUCache<string, RE2JS | 'invalid'>({
  max: 512,
  maxSize: MAX_KEPT_INSTRUCTIONS,
  sizeCalculation: (entry) => (entry === 'invalid' ? 1 : Math.max(1, entry.programSize())),
});

function compiled(pattern: string): RE2JS | undefined {
  let entry = compiledPatterns.get(pattern);
  if (entry === undefined) {
    try {
      entry = patternSize(pattern) > MAX_PATTERN_ATOMS ? 'invalid' : RE2JS.compile(pattern);
    } catch {
      entry = 'invalid';
    }
    compiledPatterns.set(pattern, entry);
  }
  return entry === 'invalid' ? undefined : entry;
}

/**
 * Full match, as a form validator applies it. RE2 semantics run in linear time, and a pattern
 * past MAX_PATTERN_ATOMS is not compiled at all (no match is said), so a hostile pattern in a
 * client-sent schema or event cannot stall the process or fill its memory.
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
  /** The component's name or type says it holds an identity value (`otp_input`, `account_type`): no choice label is kept. */
  sensitive?: boolean;
}

const HAS_DIGIT = /\p{Nd}/u;

/** How the deployed SDKs write an empty field: no text, or the `__EMPTY__` marker (docs/decisions/0017-what-the-deployed-sdks-do.md). */
export const isEmptyHint = (hint: string): boolean => hint.trim() === '' || hint === '__EMPTY__';

/** Labels of a choice that say nothing of the person: yes/no, on/off, a state, a file type. */
const GENERIC_LABELS = new Set([
  'yes',
  'no',
  'true',
  'false',
  'on',
  'off',
  'checked',
  'unchecked',
  'selected',
  'unselected',
  'deselected',
  'tapped',
  'clicked',
  'pressed',
  'submitted',
  'uploaded',
  'captured',
  'accepted',
  'declined',
  'agree',
  'disagree',
  'ok',
  'cancel',
  'skip',
  'skipped',
  'none',
  'other',
  'na',
  'n/a',
  'male',
  'female',
  'transgender',
  'single',
  'married',
  'divorced',
  'widowed',
  'separated',
  'resident',
  'non-resident',
  'nri',
  'salaried',
  'self-employed',
  'self employed',
  'business',
  'student',
  'retired',
  'homemaker',
  'housewife',
  'unemployed',
  'professional',
]);
const FILE_LABEL = /^[\w-]{1,24}\.(?:png|jpe?g|gif|webp|heic|pdf|tiff?|bmp|mp4|mov)$/i;
/** One lower-case word or snake/kebab-case id (`proceed_with_aadhaar`): how apps name a choice's value, never how a person is written. */
const MACHINE_VALUE = /^[a-z][a-z0-9]*(?:[_.-][a-z0-9]+)*$/;

/**
 * A choice hint is kept only when it reads as a choice's value, not something a person typed or
 * is called: a generic label, a file name, or an app's own value id. "Meera Nair" chosen from a
 * list of nominees is masked like a typed name (fail closed).
 */
export function isChoiceLabel(hint: string, sensitive = false): boolean {
  if (hint.length > MAX_LABEL_CHARS || HAS_DIGIT.test(hint)) return false;
  const trimmed = hint.trim();
  // A component that says it holds an identity value keeps only labels that say nothing of anyone.
  return (
    GENERIC_LABELS.has(trimmed.toLowerCase()) || FILE_LABEL.test(trimmed) || (!sensitive && MACHINE_VALUE.test(trimmed))
  );
}

/** What a client's mask is written with: stars, bullets, hashes, or a run of x. */
const MASK_CHARACTER = /[*•●∙·#×✱]|[xX]{2,}/;
/** A client's mask keeps at most the last four digits of an identifier. */
const MAX_KEPT_DIGITS = 4;

/**
 * Whether a hint the client calls masked is masked: it keeps at most four digits, and either
 * shows a mask or is a marker word (`redacted`, `file_uploaded`). "9100 3712 3456 7890" or
 * "Meera Nair" sent with `masked: true` is not, and is masked again by the server.
 */
export function clientMaskHolds(hint: string): boolean {
  let digits = 0;
  for (const char of hint) if (HAS_DIGIT.test(char)) digits += 1;
  if (digits > MAX_KEPT_DIGITS) return false;
  if (MACHINE_VALUE.test(hint.trim())) return true;
  // No mask at all: only a last four digits (`3210`) is masked; any letter (`Ravi`, `मीरा`) is what was typed.
  if (!MASK_CHARACTER.test(hint)) return shapeOf(hint).letters === 0;
  const kept = keptCharacters(hint);
  return kept.longestRun <= MAX_KEPT_RUN && kept.total <= MAX_KEPT_CHARACTERS;
}

/**
 * The most a deployed SDK's mask leaves readable (docs/explanation/privacy.md, "What `masked: true` means"):
 * four characters in a row (`ABCD****`, `******3210`, `Mee***`) and six in all (a three-word name
 * kept first and last letter of each word: `V*****a R****a R*o`). `ABCDE****` shows more.
 */
const MAX_KEPT_RUN = 4;
const MAX_KEPT_CHARACTERS = 6;
const MASK_RUNS = /[*•●∙·#×✱]+|[xX]{2,}/gu;
/** Readable characters in a row, a script's vowel signs and other marks among them (`मीरा` is four, not two). */
const READABLE_RUN = /[\p{L}\p{M}\p{N}]+/gu;
/** What follows an e-mail's `@` when it is a domain: no spaces, a dot, letters after it. */
const MAIL_DOMAIN = /^[\p{L}\p{M}\p{N}-]+(?:\.[\p{L}\p{M}\p{N}-]+)*\.\p{L}{2,}$/u;

/**
 * What a mask leaves readable, before an e-mail's domain (the SDKs keep `@gmail.com`, which names
 * nobody). Only a domain is left out: `*@Meera Nair` shows a name after its `@`.
 */
function keptCharacters(hint: string): { total: number; longestRun: number } {
  const at = hint.indexOf('@');
  const local = (at >= 0 && MAIL_DOMAIN.test(hint.slice(at + 1)) ? hint.slice(0, at) : hint).replace(MASK_RUNS, ' ');
  let total = 0;
  let longestRun = 0;
  for (const [run] of local.matchAll(READABLE_RUN)) {
    const length = [...run].length;
    total += length;
    longestRun = Math.max(longestRun, length);
  }
  return { total, longestRun };
}

/**
 * Decide what of a hint may be kept. Returns undefined when the hint is kept as sent: masked by
 * the client with nothing detected in it and the mask verified, or a choice that reads as a
 * label. Everything else is masked (dates, names and OTPs whole) with its shape, and the kind of
 * identity value it is.
 */
export function redactHint(input: HintInput): RedactedHint | undefined {
  // An empty field holds nothing to mask, and its shape would only say "0 characters".
  if (isEmptyHint(input.hint)) return undefined;
  const scan = scrubText(input.hint);
  if (scan.findings.length === 0) {
    if (input.masked === true && clientMaskHolds(input.hint)) return undefined;
    if (
      input.masked !== true &&
      isChoiceComponent(input.componentType) &&
      isChoiceLabel(input.hint, input.sensitive === true)
    )
      return undefined;
  }
  if (input.masked === true) {
    // Masked by the client, yet something in it reads as an identity value or the mask does not
    // hold: mask what was found, or the whole of it.
    return {
      hint: scan.findings.length > 0 ? scan.text : maskWhole(input.hint),
      masked: true,
      masked_by: 'server',
      shape: shapeOf(input.hint, scan.whole),
    };
  }
  const shape = describeShape(input.hint, input.pattern);
  if (scan.whole !== undefined) shape.kind = scan.whole;
  if (scan.whole === 'dropped') return { hint: scan.text, masked: true, masked_by: 'server', shape };
  // A mobile number or an Aadhaar alone keeps its last four, as the SDKs' own masks do; anything
  // else (a name, an address, a code, a date, a value mistyped) is masked whole, since its last
  // four could be a surname or a PIN code. The shape says what it was.
  const keepsLastFour = scan.whole !== undefined && KEEPS_LAST_FOUR.has(scan.whole);
  return { hint: keepsLastFour ? scan.text : maskWhole(input.hint), masked: true, masked_by: 'server', shape };
}
