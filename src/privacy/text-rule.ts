import { verhoeffValid, luhnValid } from './check-digits.js';
import type { Finding, PiiKind } from './kinds.js';
import { shapeOf } from './kinds.js';
import { maskWhole } from './mask.js';
import {
  ADDRESS_WORDS,
  AND_WORDS,
  HANDLE_PROVIDERS,
  HOON_WORDS,
  MONTH_WORDS,
  NAME_LABELS,
  NAME_STOP_WORDS,
  SAFE_WORDS,
  SPEAKING_AFTER,
  SPEAKING_WORDS,
  SPELLING_WORDS,
  SPOKEN_AT,
  SPOKEN_JOINERS,
  VALUE_LABELS,
} from './words.js';

/**
 * The default-deny rule over one client text, as a reader reads it (docs/explanation/privacy.md, "The
 * rule"): the text has its digits in ASCII and its numbers in words read as digits already
 * (plain-text.ts, reading.ts). The rule tests shapes, not forms: a run of four or more digits
 * however separated, a token mixing letters and digits, letters spelled next to such a run, a
 * handle, a date, a name after a label, an address around a place word. What it marks is starred
 * where it stands, each mask as long as what it replaced, so the caller can write it back onto
 * the text as sent.
 */

interface Token {
  start: number;
  end: number;
  /** Lower case, as the word lists are. */
  word: string;
  digits: number;
  letters: number;
}

/** A stretch the rule masks: tokens `from` to `to`, inclusive. */
interface Group {
  from: number;
  to: number;
  kind: PiiKind;
  /** A 10-digit mobile number or a 12-digit Aadhaar keeps its last four digits (docs/explanation/privacy.md). */
  keepLastFour?: boolean;
}

const TOKEN = /[\p{L}\p{M}\p{N}]+/gu;
const LETTER = /\p{L}/u;
/** Between two groups of one value: up to three characters that are neither letters nor digits. */
const MAX_GAP = 3;
/** A gap that is a separator, not a sentence's end: no more than MAX_GAP characters, none of them letters or digits. */
const isSeparator = (gap: string): boolean => gap.length <= MAX_GAP;

function tokensOf(text: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    const value = match[0];
    let digits = 0;
    let letters = 0;
    for (let i = 0; i < value.length; i += 1) {
      const code = value.charCodeAt(i);
      if (code >= 48 && code <= 57) digits += 1;
      else if (code < 128 || LETTER.test(value[i]!)) letters += 1;
    }
    tokens.push({ start: match.index, end: match.index + value.length, word: value.toLowerCase(), digits, letters });
  }
  return tokens;
}

const isDigits = (token: Token) => token.letters === 0 && token.digits > 0;
const isLetters = (token: Token) => token.digits === 0;
const isSafe = (token: Token) => SAFE_WORDS.has(token.word);
const gapBetween = (text: string, tokens: Token[], left: number, right: number) =>
  text.slice(tokens[left]!.end, tokens[right]!.start);

/** What a run of digits is, for its shape; and whether its mask may keep the last four. */
function digitKind(digits: string, plus: boolean): { kind: PiiKind; keepLastFour: boolean } {
  const n = digits.length;
  const first = digits.charCodeAt(0) - 48;
  if (n === 10 && first >= 6) return { kind: 'phone', keepLastFour: true };
  if (n === 11 && first === 0 && digits.charCodeAt(1) >= 54) return { kind: 'phone', keepLastFour: true };
  if (n === 12 && plus && digits.startsWith('91') && digits.charCodeAt(2) >= 54)
    return { kind: 'phone', keepLastFour: true };
  if (n === 12 && first >= 2 && verhoeffValid(digits)) return { kind: 'aadhaar', keepLastFour: true };
  if (n === 12 && digits.startsWith('91') && digits.charCodeAt(2) >= 54) return { kind: 'phone', keepLastFour: true };
  if (n === 16 && verhoeffValid(digits)) return { kind: 'vid', keepLastFour: false };
  if (n >= 13 && n <= 19 && luhnValid(digits)) return { kind: 'card', keepLastFour: false };
  return { kind: 'number', keepLastFour: false };
}

/** Day, month and year in any order, split (`15/06/1995`, `1995-06-15`, `17.8.93`): its kind is a date. */
const NUMERIC_DATE = /^(?:\d{1,2}[^\d]{1,3}\d{1,2}[^\d]{1,3}(?:\d{2}|\d{4})|\d{4}[^\d]{1,3}\d{1,2}[^\d]{1,3}\d{1,2})$/;

/** Document shapes, read on a value's letters and digits run together, for the kind its shape reports. */
const DOCUMENT_SHAPES: readonly [RegExp, PiiKind][] = [
  [/^\d{2}[A-Z]{5}\d{4}[A-Z][0-9A-Z]Z[0-9A-Z]$/, 'gstin'],
  [/^[A-Z]{5}\d{4}[A-Z]$/, 'pan'],
  [/^[A-Z]{4}0[A-Z0-9]{6}$/, 'ifsc'],
  [/^[A-Z]{3}\d{7}$/, 'voter_id'],
  [/^[A-Z]\d{7}$/, 'passport'],
  [/^[A-Z]{2}\d{13}$/, 'driving_licence'],
  [/^[A-Z]{2}\d{1,2}[A-Z]{1,3}\d{4}$/, 'vehicle'],
];

export function documentKind(compact: string): PiiKind | undefined {
  const upper = compact.toUpperCase();
  return DOCUMENT_SHAPES.find(([shape]) => shape.test(upper))?.[1];
}

/** A text's letters and digits, run together. */
export const compactOf = (text: string): string => text.replace(/[^\p{L}\p{N}]+/gu, '');

/** Months, said (`August`) or written in another script (`ஆகஸ்ட்`); NFKC and lower case. */
const isMonth = (token: Token) => MONTH_WORDS.has(token.word);

/**
 * Four digits just after a mask's stars (`******3210`, `XXXX XXXX 9012`): the last four a mask
 * keeps, read again. Masking them would make the rule undo its own output on a second pass.
 */
function isKeptLastFour(text: string, token: Token): boolean {
  if (token.digits !== 4 || token.letters !== 0) return false;
  const before = text.slice(Math.max(0, token.start - 8), token.start);
  return /[*•●#]{2}[^\p{L}\p{N}]{0,3}$/u.test(before) || /(?<![A-Za-z])[xX]{4}[^\p{L}\p{N}]{0,3}$/u.test(before);
}

class Marks {
  readonly groups: Group[] = [];
  readonly masked: boolean[];
  /** Tokens of a handle written with `@`: an "at" before them is the text's, not another handle's. */
  readonly atHandle = new Set<number>();
  constructor(readonly tokens: Token[]) {
    this.masked = tokens.map(() => false);
  }
  add(from: number, to: number, kind: PiiKind, keepLastFour = false): void {
    if (from > to) return;
    this.groups.push({ from, to, kind, keepLastFour });
    for (let i = from; i <= to; i += 1) this.masked[i] = true;
  }
}

/** Runs of digits across separators (and "and"): four digits or more are a value. */
function markDigitRuns(text: string, marks: Marks): void {
  const { tokens } = marks;
  // Digits glued to a few letters count too: `Y66 10j` is four digits split by a space. A token
  // with more letters (`ABCDE1234F`) is a value of its own, masked by markMixed.
  const holdsDigits = (token: Token) =>
    token.digits > 0 && token.letters <= 3 && !HEX_ID.test(text.slice(token.start, token.end));
  const digitsIn = (token: Token) => text.slice(token.start, token.end).replace(/\D/g, '');
  // A long word's digits at the edge that touches a run join it (`FAZMW6 1_6 1S` is four digits
  // split by separators): its letters are then masked with the run. Digits inside the word do not.
  const edgeDigits = (token: Token, edge: 'head' | 'tail'): string => {
    const source = text.slice(token.start, token.end);
    if (token.digits === 0 || HEX_ID.test(source)) return '';
    return (edge === 'head' ? /^\d+/ : /\d+$/).exec(source)?.[0] ?? '';
  };
  const joins = (from: number, to: number) => to < tokens.length && isSeparator(gapBetween(text, tokens, from, to));
  let i = 0;
  while (i < tokens.length) {
    const leading = holdsDigits(tokens[i]!) ? '' : edgeDigits(tokens[i]!, 'tail');
    if (!holdsDigits(tokens[i]!) && !(leading !== '' && joins(i, i + 1) && holdsDigits(tokens[i + 1]!))) {
      i += 1;
      continue;
    }
    let end = i;
    let digits = leading || digitsIn(tokens[i]!);
    for (let next = i + 1; next < tokens.length; next += 1) {
      const token = tokens[next]!;
      if (holdsDigits(token) && isSeparator(gapBetween(text, tokens, next - 1, next))) {
        digits += digitsIn(token);
        end = next;
        continue;
      }
      const trailing = edgeDigits(token, 'head');
      if (trailing !== '' && end > i && isSeparator(gapBetween(text, tokens, next - 1, next))) {
        digits += trailing;
        end = next;
        break;
      }
      // "1234 and 5678": "and" joins two parts of one number.
      const after = tokens[next + 1];
      if (
        AND_WORDS.has(token.word) &&
        after !== undefined &&
        isDigits(after) &&
        isSeparator(gapBetween(text, tokens, next - 1, next)) &&
        isSeparator(gapBetween(text, tokens, next, next + 1))
      ) {
        continue;
      }
      break;
    }
    // A mixed token alone is judged by markMixed; a run of them by their digits together.
    if (end === i && !isDigits(tokens[i]!)) {
      i += 1;
      continue;
    }
    const span = text.slice(tokens[i]!.start, tokens[end]!.end);
    // A host's address names a machine, not a person; with letters spelled beside it (`BHU CJ
    // 10.2.5.4 T`) it is a document's digits.
    if (isIpv4(span)) {
      const [from, to] = spelledAround(text, marks, i, end);
      const lettersOfDocument = (index: number) =>
        tokens[index]!.letters === 1 || /^[A-Z]{2,5}$/.test(text.slice(tokens[index]!.start, tokens[index]!.end));
      let spelledBeside = false;
      for (let index = from; index <= to; index += 1)
        if ((index < i || index > end) && lettersOfDocument(index)) spelledBeside = true;
      // Letters in lower case make a document with the digits as well (`abc 10.23.45.6`, a voter ID).
      if (from < i || to > end)
        spelledBeside ||= documentKind(compactOf(text.slice(tokens[from]!.start, tokens[to]!.end))) !== undefined;
      if (!spelledBeside) {
        i = end + 1;
        continue;
      }
    }
    if (digits.length < 4 && afterCodeLabel(tokens, i)) {
      marks.add(i, end, 'otp');
    } else if (digits.length >= 4 && !(end === i && isKeptLastFour(text, tokens[i]!))) {
      const { kind, keepLastFour } = NUMERIC_DATE.test(span)
        ? { kind: 'date' as const, keepLastFour: false }
        : digitKind(digits, text.charAt(tokens[i]!.start - 1) === '+');
      const [from, to] = spelledAround(text, marks, i, end);
      const compactKind =
        from < i || to > end ? documentKind(compactOf(text.slice(tokens[from]!.start, tokens[to]!.end))) : undefined;
      // Letters spelled beside a mobile number or an Aadhaar are masked too; its last four are still all it may keep.
      marks.add(from, to, compactKind ?? kind, keepLastFour && compactKind === undefined);
    }
    i = end + 1;
  }
}

/**
 * A loopback, private or link-local IPv4 address, perhaps with a port (`127.0.0.1`, `10.0.0.12:8080`),
 * or `0.0.0.0`: the service's own hosts. Any other dotted quad is read as digits: an OTP written
 * `4.31.8.16` is one, and a user's public address is personal data anyway. Only octets as an
 * address is written count (no leading zero), and of `0.…` only `0.0.0.0`: an IFSC's fifth
 * character is always 0, so one spaced and dotted (`vtnp 0.16.23.36`, `vtnp 010.16.2.3`) read
 * as a host's address and was kept (docs/explanation/privacy.md, Tests).
 */
const isIpv4 = (span: string): boolean => {
  if (!/^(?:0|[1-9]\d{0,2})(?:\.(?:0|[1-9]\d{0,2})){3}(?::\d{1,5})?$/.test(span)) return false;
  const parts = span.split(':')[0]!.split('.').map(Number);
  if (parts.some((part) => part > 255)) return false;
  const [a, b] = parts as [number, number];
  return (
    a === 127 ||
    a === 10 ||
    parts.every((part) => part === 0) ||
    (a === 192 && b === 168) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 169 && b === 254)
  );
};

/** Words that name a short secret: the digits after them are one however few (`cvv 123`, `pin is 42`). */
const CODE_LABELS = new Set(['cvv', 'cvc', 'pin', 'mpin', 'tpin', 'otp', 'ओटीपी', 'पिन']);
function afterCodeLabel(tokens: Token[], index: number): boolean {
  for (let back = index - 1; back >= Math.max(0, index - 3); back -= 1) {
    const word = tokens[back]!.word;
    if (CODE_LABELS.has(word)) return true;
    if (word !== 'is' && word !== 'was' && word !== 'my' && word !== 'the' && word !== 'hai') return false;
  }
  return false;
}

/**
 * Letters spelled next to a run of digits belong to it (`K L M 3 9 2 8 1 7 4`, `hdfc 0001234`,
 * `ADE PS 8624 F`): short words that are not common talk, up to five before and four after, and
 * short digit groups among them (`27 ABCDE 1234`).
 */
function spelledAround(text: string, marks: Marks, from: number, to: number, fromSpelling = false): [number, number] {
  const { tokens } = marks;
  // A single letter, or capitals (`KA`, `ID`), are spelled whatever word they also are.
  const spelled = (token: Token) =>
    token.letters === 1 || (token.letters <= 3 && text.slice(token.start, token.end) === token.word.toUpperCase());
  const belongs = (token: Token) =>
    (isLetters(token) && token.letters <= 5 && (!isSafe(token) || spelled(token))) ||
    (isDigits(token) && token.digits <= 3) ||
    (token.digits > 0 && token.digits <= 2 && token.letters <= 3);
  let start = from;
  for (let taken = 0; taken < 5 && start > 0; taken += 1) {
    const previous = tokens[start - 1]!;
    if (marks.masked[start - 1] || !belongs(previous) || !isSeparator(gapBetween(text, tokens, start - 1, start)))
      break;
    start -= 1;
  }
  let end = to;
  for (let taken = 0; taken < 4 && end < tokens.length - 1; taken += 1) {
    const next = tokens[end + 1]!;
    if (marks.masked[end + 1]) break;
    const short =
      (isLetters(next) && next.letters <= (fromSpelling ? 5 : 3) && (!isSafe(next) || next.letters === 1)) ||
      (isDigits(next) && (fromSpelling || next.digits <= 3)) ||
      (next.digits > 0 && next.letters > 0);
    if (!short || !isSeparator(gapBetween(text, tokens, end, end + 1))) break;
    end += 1;
  }
  return [start, end];
}

/**
 * Letters spelled one at a time, three or more in a row (`a.f.m.h`, `K L M`, `V-I-J-A-Y`): nobody
 * writes words so, only values; masked with what is spelled around them, digits or words.
 */
function markSpelledLetters(text: string, marks: Marks): void {
  const { tokens } = marks;
  const single = (index: number) =>
    !marks.masked[index] &&
    tokens[index]!.letters === 1 &&
    tokens[index]!.digits === 0 &&
    tokens[index]!.end - tokens[index]!.start <= 2;
  let i = 0;
  while (i < tokens.length) {
    let end = i;
    // Letters a mask left (`V*****a R*o`) are no spelling: a gap with a mask's stars ends the run.
    const spacer = (gap: string) => isSeparator(gap) && !/[*•●#×]/.test(gap);
    while (end + 1 < tokens.length && single(end) && single(end + 1) && spacer(gapBetween(text, tokens, end, end + 1)))
      end += 1;
    if (single(i) && end - i >= 2) {
      const [from, to] = spelledAround(text, marks, i, end, true);
      marks.add(from, to, documentKind(compactOf(text.slice(tokens[from]!.start, tokens[to]!.end))) ?? 'text');
    }
    i = end + 1;
  }
}

/** A trace id or a digest in text: 16 to 64 hex digits, random, with no ten decimal digits in a row. */
const HEX_ID = /^(?=[0-9a-f]*[a-f])(?![0-9a-f]*\d{10})[0-9a-f]{16,64}$/i;

/**
 * Tokens that mix letters and digits are masked to their shape; two digits or fewer (`v2`, `4B`,
 * `step_21`) say nothing, and a hex id's digits are random.
 */
function markMixed(text: string, marks: Marks): void {
  marks.tokens.forEach((token, index) => {
    if (marks.masked[index] || token.digits === 0 || token.letters === 0) return;
    if (token.digits <= 2 || HEX_ID.test(text.slice(token.start, token.end))) return;
    marks.add(index, index, documentKind(text.slice(token.start, token.end)) ?? 'number');
  });
}

/** The parts of a handle joined by `.`, `_`, `-`, `+` or a spoken "dot", from `at` outwards. */
function handleChain(text: string, marks: Marks, at: number, step: 1 | -1): [number, number] | undefined {
  const { tokens } = marks;
  const first = at + step;
  if (first < 0 || first >= tokens.length) return undefined;
  let edge = first;
  for (;;) {
    const joiner = edge + step;
    if (joiner < 0 || joiner >= tokens.length) break;
    const gap = step === 1 ? gapBetween(text, tokens, edge, joiner) : gapBetween(text, tokens, joiner, edge);
    if (/^\s?[._+-]\s?$/.test(gap)) {
      edge = joiner;
      continue;
    }
    const spoken = tokens[joiner]!;
    const beyond = joiner + step;
    if (SPOKEN_JOINERS.has(spoken.word) && beyond >= 0 && beyond < tokens.length && /^\s$/.test(gap)) {
      edge = beyond;
      continue;
    }
    break;
  }
  return step === 1 ? [first, edge] : [edge, first];
}

/** `x@y`, `x @ y`, `x at y`, `x (at) y`, `x at the rate y`, with or without a domain after. */
function markHandles(text: string, marks: Marks): void {
  const { tokens } = marks;
  for (let i = 0; i + 1 < tokens.length; i += 1) {
    const gap = gapBetween(text, tokens, i, i + 1);
    if (gap.includes('@') && gap.trim().length <= 3) {
      const left = handleChain(text, marks, i + 1, -1);
      const right = handleChain(text, marks, i, 1);
      if (left && right) {
        const kind: PiiKind = right[1] > right[0] ? 'email' : 'upi';
        marks.add(left[0], right[1], kind);
        for (let token = left[0]; token <= right[1]; token += 1) marks.atHandle.add(token);
      }
    }
  }
  for (let at = 1; at + 1 < tokens.length; at += 1) {
    if (!SPOKEN_AT.has(tokens[at]!.word)) continue;
    const before = gapBetween(text, tokens, at - 1, at);
    const after = gapBetween(text, tokens, at, at + 1);
    const bracketed = /[[({<]\s*$/.test(before) && /^\s*[\])}>]/.test(after);
    // "at the rate (of)" is how `@` is read out.
    let rightFrom = at;
    if (tokens[at + 1]?.word === 'the' && tokens[at + 2]?.word === 'rate')
      rightFrom = tokens[at + 3]?.word === 'of' ? at + 3 : at + 2;
    const spokenRate = rightFrom !== at;
    const left = handleChain(text, marks, at, -1);
    const right = handleChain(text, marks, rightFrom, 1);
    // "mail me at a.b@x.in": what follows is a handle masked already, not the right side of this one.
    if (!left || !right || marks.atHandle.has(right[0])) continue;
    const leftWord = tokens[left[1]]!;
    const rightWord = tokens[right[0]]!;
    const joined = left[1] > left[0] || right[1] > right[0];
    const handle =
      bracketed ||
      spokenRate ||
      HANDLE_PROVIDERS.has(rightWord.word) ||
      joined ||
      (!isSafe(leftWord) && !isSafe(rightWord));
    if (handle) marks.add(left[0], right[1], right[1] > right[0] ? 'email' : 'upi');
  }
}

/**
 * Dates: a month's name next to a day or a year (in any order, any script's digits), and a day
 * and a four-digit year with any one word between them (`17 ஆகஸ்ட் 1993`, a month in a script no
 * list holds). Numeric dates are runs of four digits or more, masked above.
 */
function markDates(text: string, marks: Marks): void {
  const { tokens } = marks;
  const dayOrYear = (token: Token | undefined) =>
    token !== undefined &&
    ((isDigits(token) && token.digits <= 4) || (token.digits > 0 && token.digits <= 2 && token.letters <= 2));
  const filler = (token: Token | undefined) => token !== undefined && (token.word === 'of' || token.word === 'the');
  tokens.forEach((token, index) => {
    if (isMonth(token)) {
      let from = index;
      let to = index;
      for (let back = index - 1, seen = 0; back >= 0 && seen < 2; back -= 1) {
        if (filler(tokens[back])) continue;
        if (!dayOrYear(tokens[back])) break;
        from = back;
        seen += 1;
      }
      for (let ahead = index + 1, seen = 0; ahead < tokens.length && seen < 2; ahead += 1) {
        if (filler(tokens[ahead])) continue;
        if (!dayOrYear(tokens[ahead])) break;
        to = ahead;
        seen += 1;
      }
      if (from < index || to > index) marks.add(from, to, 'date');
      return;
    }
    // D word YYYY, YYYY word D.
    const previous = tokens[index - 1];
    const next = tokens[index + 1];
    if (previous && next && isLetters(token) && !isSafe(token)) {
      const day = (t: Token) => isDigits(t) && t.digits <= 2;
      const year = (t: Token) => isDigits(t) && t.digits === 4;
      if ((day(previous) && year(next)) || (year(previous) && day(next))) marks.add(index - 1, index + 1, 'date');
    }
  });
}

const LABEL_STARTS = [...new Set(NAME_LABELS.map((label) => label.split(' ')[0]!))];
const LABELS_BY_LENGTH = [...NAME_LABELS].sort((a, b) => b.length - a.length);

/** A name told after a label or phrase: the words that follow, up to three, that are not common talk. */
function markNames(text: string, marks: Marks): void {
  const { tokens } = marks;
  const lower = text.toLowerCase();
  for (let i = 0; i < tokens.length; i += 1) {
    if (!LABEL_STARTS.includes(tokens[i]!.word) && !/^[cdsw]$/.test(tokens[i]!.word)) continue;
    const at = tokens[i]!.start;
    const label = LABELS_BY_LENGTH.find(
      (candidate) => lower.startsWith(candidate, at) && !/[\p{L}\p{M}\p{N}]/u.test(lower.charAt(at + candidate.length)),
    );
    if (label === undefined) continue;
    let next = i;
    while (next < tokens.length && tokens[next]!.end <= tokens[i]!.start + label.length) next += 1;
    // A label is followed by a space or a colon, as people write one (an honorific by its dot too); `name_extra` is an id's words.
    if (next >= tokens.length || !/^[\s:=,.-]*[\s:=][\s:=,.-]*$/.test(gapBetween(text, tokens, next - 1, next)))
      continue;
    let end = next - 1;
    for (let taken = 0; taken < 3 && end + 1 < tokens.length; taken += 1) {
      const word = tokens[end + 1]!;
      if (!isLetters(word) || isSafe(word) || NAME_STOP_WORDS.has(word.word)) break;
      end += 1;
    }
    if (end >= next) marks.add(next, end, 'name');
  }
  // Hindi "main Priya Nair hoon" (I am …): a name between "main" and "hoon"; "Sukhwinder bol raha hoon" (… speaking): before "bol raha".
  for (let i = 0; i < tokens.length; i += 1) {
    if (tokens[i]!.word === 'main' || tokens[i]!.word === 'मैं') {
      let end = i;
      while (
        end + 1 < tokens.length &&
        end - i < 3 &&
        isLetters(tokens[end + 1]!) &&
        !isSafe(tokens[end + 1]!) &&
        !HOON_WORDS.has(tokens[end + 1]!.word)
      )
        end += 1;
      if (end > i && HOON_WORDS.has(tokens[end + 1]?.word ?? '')) marks.add(i + 1, end, 'name');
    }
    if (SPEAKING_WORDS.has(tokens[i]!.word) && SPEAKING_AFTER.has(tokens[i + 1]?.word ?? '')) {
      let from = i;
      while (
        from > 0 &&
        i - from < 3 &&
        isLetters(tokens[from - 1]!) &&
        !isSafe(tokens[from - 1]!) &&
        !NAME_STOP_WORDS.has(tokens[from - 1]!.word)
      )
        from -= 1;
      if (from < i) marks.add(from, i - 1, 'name');
    }
  }
  // `Label: Capital Words`: words in capitals after a field's label and a colon.
  for (let i = 0; i + 1 < tokens.length; i += 1) {
    if (!/^\s*[:=]\s*$/.test(gapBetween(text, tokens, i, i + 1))) continue;
    let end = i;
    for (let taken = 0; taken < 3 && end + 1 < tokens.length; taken += 1) {
      const word = tokens[end + 1]!;
      const source = text.slice(word.start, word.end);
      if (!isLetters(word) || isSafe(word) || source.charAt(0) === source.charAt(0).toLowerCase()) break;
      end += 1;
    }
    if (end > i) marks.add(i + 1, end, 'name');
  }
}

/** How many words after a value's label (`PAN`, `mail`, `account`) its parts are looked for. */
const VALUE_REACH = 5;

/**
 * After a word that says a document, an account, a card or a handle is told (words.ts,
 * VALUE_LABELS), a few words on: what reads as part of a value is masked with no digit run to
 * find it (a PAN's letters told apart from its digits, a mail id's local part). Capitals of three
 * to five letters, a token with digits, and parts joined by `.`, `_` or a spoken "dot".
 */
function markLabelledValues(text: string, marks: Marks): void {
  const { tokens } = marks;
  // Parts of one handle: `.` or `_` with no space, or a spoken "dot" between spaces (a dot and a space end a sentence).
  const joinedTo = (at: number): number | undefined => {
    if (at + 1 < tokens.length && /^[._]$/.test(gapBetween(text, tokens, at, at + 1))) return at + 1;
    if (
      at + 2 < tokens.length &&
      SPOKEN_JOINERS.has(tokens[at + 1]!.word) &&
      gapBetween(text, tokens, at, at + 1) === ' ' &&
      gapBetween(text, tokens, at + 1, at + 2) === ' '
    )
      return at + 2;
    return undefined;
  };
  tokens.forEach((token, index) => {
    // A label stands alone: `PAN_FORMAT` and `pan_details` are an id's words.
    if (
      !VALUE_LABELS.has(token.word) ||
      index + 1 >= tokens.length ||
      !/^[\s:=-]*[\s:=][\s:=-]*$/.test(gapBetween(text, tokens, index, index + 1))
    )
      return;
    for (let at = index + 1; at < tokens.length && at <= index + VALUE_REACH; at += 1) {
      // A sentence's end ends the label's reach.
      if (/[!?;\n]|\.\s/.test(gapBetween(text, tokens, at - 1, at))) return;
      const word = tokens[at]!;
      if (marks.masked[at] || isSafe(word) || SPOKEN_AT.has(word.word)) continue;
      let end = at;
      for (let next = joinedTo(end); next !== undefined; next = joinedTo(end)) end = next;
      const source = text.slice(word.start, word.end);
      // Three digits or more, or two among letters (`a 12 digit number`, `PAN v2` and an ordinal
      // read as digits, "first" is 1, say nothing); capitals of three to five letters, as a
      // document's letters are grouped.
      const capitals =
        word.digits === 0 &&
        word.letters >= 3 &&
        word.letters <= 5 &&
        source === source.toUpperCase() &&
        source !== source.toLowerCase();
      const valueLike = (word.digits >= 2 && word.letters > 0) || word.digits >= 3 || capitals;
      if (end > at || valueLike) marks.add(at, end, 'text');
      at = end;
    }
  });
}

/**
 * A value spelled with words: three words of the spelling alphabet or more (`alpha bravo charlie`),
 * or two letters or more each told "for" a word (`B for Bombay N for Nagpur`), with the digits
 * and single letters said among and after them.
 */
function markSpelledWords(text: string, marks: Marks): void {
  const { tokens } = marks;
  const single = (index: number) =>
    tokens[index] !== undefined && tokens[index].letters === 1 && tokens[index].digits === 0;
  const joins = (left: number) => left + 1 < tokens.length && isSeparator(gapBetween(text, tokens, left, left + 1));
  let i = 0;
  while (i < tokens.length) {
    let end = i - 1;
    let spelled = 0;
    for (;;) {
      const at = end + 1;
      if (at >= tokens.length || (at > i && !joins(end))) break;
      if (SPELLING_WORDS.has(tokens[at]!.word)) {
        spelled += 1;
        end = at;
      } else if (
        single(at) &&
        tokens[at + 1]?.word === 'for' &&
        tokens[at + 2] !== undefined &&
        isLetters(tokens[at + 2]!) &&
        joins(at) &&
        joins(at + 1)
      ) {
        spelled += 1.5;
        end = at + 2;
      } else if (spelled > 0 && (isDigits(tokens[at]!) || single(at))) {
        end = at;
      } else break;
    }
    if (spelled >= 3) {
      marks.add(i, end, 'text');
      i = end + 1;
    } else i += 1;
  }
}

/** How far after a place word a PIN code still belongs to the same address. */
const ADDRESS_REACH = 160;

/** Around a place word, the two words either side; from a place word to a six-digit PIN code after it, everything. */
function markAddresses(text: string, marks: Marks): void {
  const { tokens } = marks;
  tokens.forEach((token, index) => {
    if (!ADDRESS_WORDS.has(token.word)) return;
    let from = index;
    for (let back = index - 1; back >= Math.max(0, index - 2); back -= 1) {
      if (isSafe(tokens[back]!) || tokens[back]!.digits > 6) break;
      from = back;
    }
    let to = index;
    for (let ahead = index + 1; ahead <= Math.min(tokens.length - 1, index + 2); ahead += 1) {
      if (isSafe(tokens[ahead]!) && !isDigits(tokens[ahead]!)) break;
      to = ahead;
    }
    for (
      let ahead = index + 1;
      ahead < tokens.length && tokens[ahead]!.start - token.end <= ADDRESS_REACH;
      ahead += 1
    ) {
      const candidate = tokens[ahead]!;
      const pin =
        isDigits(candidate) &&
        (candidate.digits === 6 ||
          (candidate.digits === 3 && tokens[ahead + 1]?.digits === 3 && isDigits(tokens[ahead + 1]!)));
      if (pin) to = Math.max(to, candidate.digits === 3 ? ahead + 1 : ahead);
    }
    if (to > from || from < index) marks.add(from, to, 'address');
  });
}

export interface RuleResult {
  /** The text with every marked token starred; as long as the text, unit for unit. */
  text: string;
  findings: Finding[];
  /** The whole text was one masked value of this kind. */
  whole: PiiKind | undefined;
}

/** One star per UTF-16 unit of a letter or digit (and its marks): the mask of mask.ts. */
const starred = maskWhole;

/** Applies the rule to `text` (a reader's view with numbers in words read as digits). */
export function applyRule(text: string): RuleResult {
  const tokens = tokensOf(text);
  if (tokens.length === 0) return { text, findings: [], whole: undefined };
  const marks = new Marks(tokens);
  // Handles first: the letters of a handle are not spelled beside a number after it.
  markHandles(text, marks);
  markDigitRuns(text, marks);
  markMixed(text, marks);
  markSpelledLetters(text, marks);
  markSpelledWords(text, marks);
  markLabelledValues(text, marks);
  markDates(text, marks);
  markNames(text, marks);
  markAddresses(text, marks);
  if (marks.groups.length === 0) return { text, findings: [], whole: undefined };
  const findings: Finding[] = [];
  const keep = new Set<number>();
  for (const group of marks.groups) {
    const value = text.slice(tokens[group.from]!.start, tokens[group.to]!.end);
    findings.push({ kind: group.kind, shape: shapeOf(value, group.kind) });
    // Only a group no other group touched keeps its last four.
    const alone = marks.groups.every((other) => other === group || other.to < group.from || other.from > group.to);
    if (group.keepLastFour && alone) keep.add(group.to);
  }
  let out = '';
  let at = 0;
  tokens.forEach((token, index) => {
    if (!marks.masked[index]) return;
    out += text.slice(at, token.start);
    const value = text.slice(token.start, token.end);
    out += keep.has(index) && value.length >= 4 ? starred(value.slice(0, -4)) + value.slice(-4) : starred(value);
    at = token.end;
  });
  out += text.slice(at);
  const allMasked = marks.masked.every(Boolean);
  const whole = allMasked ? (marks.groups.length === 1 ? marks.groups[0]!.kind : wholeKind(marks.groups)) : undefined;
  return { text: out, findings, whole };
}

/** A text masked through by several groups is what its widest group says (a handle over the digits inside it, a date over its year). */
function wholeKind(groups: Group[]): PiiKind {
  // A run of digits is the least said of a value: on a tie, what says more (a date, a handle) names it.
  const weight = (group: Group) => (group.to - group.from) * 2 + (group.kind === 'number' ? 0 : 1);
  let widest = groups[0]!;
  for (const group of groups) if (weight(group) > weight(widest)) widest = group;
  return widest.kind;
}
