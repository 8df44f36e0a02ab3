/**
 * Numbers said or typed in words, as a voice transcript writes them: "nine eight seven six …",
 * "नौ आठ सात छह …", "nau aath saat …", "ninety eight seventy six …", "double five", mixed with
 * digits ("98765 four three two one zero"). Read into digits so the rule (text-rule.ts) can judge
 * them like any other digits (docs/explanation/privacy.md, "Numbers in words").
 *
 * Digit by digit and in pairs is how people say phone, Aadhaar and account numbers; "hundred"
 * after a digit is read too ("nine hundred eighty seven" is 987), and words glued together
 * ("nineeightseven", "ninetyeight") read as the words they are made of.
 */

type WordValue =
  /** One or more digits said as they are: "nine", "fifteen", "नौ", "अट्ठानवे". */
  | { kind: 'digits'; digits: string }
  /** "twenty": a following unit joins it ("twenty one" is 21), else it is 20. */
  | { kind: 'tens'; digit: string }
  /** "double", "triple": the next digit said so many times. */
  | { kind: 'repeat'; times: number }
  /** "oh", "o": zero only between other number words, never alone ("oh I see"). */
  | { kind: 'zero-ish' }
  /** "hundred": the digit before it, then two places the words after it fill. */
  | { kind: 'hundred' };

const ENGLISH_UNITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const ENGLISH_TEENS = [
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const ENGLISH_TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const ENGLISH_ORDINALS = [
  '',
  'first',
  'second',
  'third',
  'fourth',
  'fifth',
  'sixth',
  'seventh',
  'eighth',
  'ninth',
  'tenth',
  'eleventh',
  'twelfth',
  'thirteenth',
  'fourteenth',
  'fifteenth',
  'sixteenth',
  'seventeenth',
  'eighteenth',
  'nineteenth',
  'twentieth',
];
/** Hindi zero to ninety-nine, in Devanagari; spelling variants after a comma. */
const HINDI = [
  'शून्य,सुन्न,ज़ीरो,जीरो',
  'एक',
  'दो',
  'तीन',
  'चार',
  'पांच,पाँच',
  'छह,छः,छे,छै',
  'सात',
  'आठ',
  'नौ,नो',
  'दस',
  'ग्यारह',
  'बारह',
  'तेरह',
  'चौदह',
  'पंद्रह,पन्द्रह',
  'सोलह',
  'सत्रह',
  'अठारह',
  'उन्नीस',
  'बीस',
  'इक्कीस',
  'बाईस',
  'तेईस',
  'चौबीस',
  'पच्चीस',
  'छब्बीस',
  'सत्ताईस',
  'अट्ठाईस',
  'उनतीस',
  'तीस',
  'इकतीस',
  'बत्तीस',
  'तैंतीस',
  'चौंतीस',
  'पैंतीस',
  'छत्तीस',
  'सैंतीस',
  'अड़तीस',
  'उनतालीस',
  'चालीस',
  'इकतालीस',
  'बयालीस',
  'तैंतालीस',
  'चवालीस,चौवालीस',
  'पैंतालीस',
  'छियालीस',
  'सैंतालीस',
  'अड़तालीस',
  'उनचास',
  'पचास',
  'इक्यावन',
  'बावन',
  'तिरपन',
  'चौवन',
  'पचपन',
  'छप्पन',
  'सत्तावन',
  'अट्ठावन',
  'उनसठ',
  'साठ',
  'इकसठ',
  'बासठ',
  'तिरसठ',
  'चौंसठ',
  'पैंसठ',
  'छियासठ',
  'सड़सठ',
  'अड़सठ',
  'उनहत्तर',
  'सत्तर',
  'इकहत्तर',
  'बहत्तर',
  'तिहत्तर',
  'चौहत्तर',
  'पचहत्तर',
  'छिहत्तर',
  'सतहत्तर',
  'अठहत्तर',
  'उन्यासी,उनासी',
  'अस्सी',
  'इक्यासी',
  'बयासी',
  'तिरासी',
  'चौरासी',
  'पचासी',
  'छियासी',
  'सत्तासी',
  'अट्ठासी',
  'नवासी',
  'नब्बे',
  'इक्यानवे',
  'बानवे',
  'तिरानवे',
  'चौरानवे',
  'पचानवे',
  'छियानवे',
  'सत्तानवे',
  'अट्ठानवे',
  'निन्यानवे',
];
/** Hindi digits as typed in Latin letters (Hinglish). */
const HINGLISH_UNITS = [
  'shunya,shoonya,sunya,sifar',
  'ek',
  'do',
  'teen,tin',
  'char,chaar',
  'paanch,panch,paach',
  'chhe,chhah,chheh,chah,chhey,chhah',
  'saat,sat',
  'aath,aat,ath',
  'nau,nao,nou',
  'das',
];

/**
 * Nukta, anusvara and chandrabindu are spelt in more than one way (पांच, पाँच; अड़तीस with a
 * composed or a separate nukta): words are compared without them.
 */
const fold = (word: string) =>
  word
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u0901\u0902\u093c]/g, '');

const WORDS = new Map<string, WordValue>();
const add = (spellings: string, value: WordValue) => {
  for (const spelling of spellings.split(',')) WORDS.set(fold(spelling), value);
};
ENGLISH_UNITS.forEach((word, digit) => add(word, { kind: 'digits', digits: String(digit) }));
ENGLISH_TEENS.forEach((word, index) => add(word, { kind: 'digits', digits: String(10 + index) }));
ENGLISH_TENS.forEach((word, digit) => word !== '' && add(word, { kind: 'tens', digit: String(digit) }));
add('fourty', { kind: 'tens', digit: '4' });
ENGLISH_ORDINALS.forEach((word, value) => word !== '' && add(word, { kind: 'digits', digits: String(value) }));
add('thirtieth', { kind: 'digits', digits: '30' });
HINDI.forEach((words, value) => add(words, { kind: 'digits', digits: String(value) }));
HINGLISH_UNITS.forEach((words, value) => add(words, { kind: 'digits', digits: String(value) }));
add('double,dubble,डबल', { kind: 'repeat', times: 2 });
add('triple,tripple,ट्रिपल', { kind: 'repeat', times: 3 });
add('oh,o', { kind: 'zero-ish' });
add('hundred,sau,सौ', { kind: 'hundred' });

const LETTER = /[\p{L}\p{M}]/u;

/**
 * What a word or a run of digits is, as part of a number; undefined for any other word. Digits
 * glued to letters (`m5`, `v2`, `5th`) belong to that word, not to a number said around them.
 */
function valueOf(text: string, start: number, end: number): WordValue | undefined {
  const code = text.charCodeAt(start);
  if (code >= 48 && code <= 57) {
    const glued = (start > 0 && LETTER.test(text[start - 1]!)) || (end < text.length && LETTER.test(text[end]!));
    return glued ? undefined : { kind: 'digits', digits: text.slice(start, end) };
  }
  const word = fold(text.slice(start, end));
  return WORDS.get(word) ?? gluedValue(word);
}

/** The longest glued word read: longer words are no number anyone says. */
const MAX_GLUED = 120;
const GLUABLE = [...WORDS.entries()]
  .filter(([word, value]) => word.length > 2 && value.kind !== 'zero-ish' && /^[a-z]+$/.test(word))
  .sort((a, b) => b[0].length - a[0].length);

/**
 * Number words written without spaces ("nineeightsevensix", "ninetyeight"): the word split into
 * table words, each at least three letters, and read as they would be spaced. Undefined unless
 * the whole word splits so into at least two.
 */
/** The first three letters of every gluable word: a word starting otherwise is no glued number. */
const GLUABLE_STARTS = new Set(GLUABLE.map(([spelling]) => spelling.slice(0, 3)));

function gluedValue(word: string): WordValue | undefined {
  if (word.length < 6 || word.length > MAX_GLUED || !GLUABLE_STARTS.has(word.slice(0, 3)) || !/^[a-z]+$/.test(word))
    return undefined;
  const parts: WordValue[] = [];
  let at = 0;
  while (at < word.length) {
    const next = GLUABLE.find(([spelling]) => word.startsWith(spelling, at));
    if (next === undefined) return undefined;
    parts.push(next[1]);
    at += next[0].length;
  }
  if (parts.length < 2) return undefined;
  const digits = digitsOf(parts.map((value) => ({ start: 0, end: 0, value })));
  return digits === '' ? undefined : { kind: 'digits', digits };
}

/**
 * Words (letters with their combining marks) and runs of ASCII digits. A word ends where its script
 * does: `uHRपांच` is a Latin word and a Hindi number glued to it.
 */
const TOKEN = /\p{Script=Latin}+|(?:(?!\p{Script=Latin})[\p{L}\p{M}])+|\d+/gu;
/**
 * What may stand between two parts of one number: up to three characters that are neither
 * letters nor digits (a space, a comma, a dash, a dot, a slash, an underscore, a control
 * character read as a space), or "and" with them.
 */
const JOINER = /^[^\p{L}\p{M}\p{N}]{0,3}$|^[^\p{L}\p{M}\p{N}]{0,3}(?:and|aur|और)[^\p{L}\p{M}\p{N}]{0,3}$/iu;
const AND = /^(?:and|aur|और)$/iu;

/** A stretch of the text read as one number. */
export interface NumberRun {
  start: number;
  end: number;
  digits: string;
}

interface Token {
  start: number;
  end: number;
  value: WordValue;
}

function digitsOf(run: Token[]): string {
  let digits = '';
  for (let i = 0; i < run.length; i += 1) {
    const value = run[i]!.value;
    const next = run[i + 1]?.value;
    if (value.kind === 'digits') {
      if (next?.kind === 'hundred' && value.digits.length === 1) {
        const after = run[i + 2]?.value;
        const afterNext = run[i + 3]?.value;
        if (after?.kind === 'tens' && afterNext?.kind === 'digits' && /^[1-9]$/.test(afterNext.digits)) {
          digits += value.digits + after.digit + afterNext.digits;
          i += 3;
        } else if (after?.kind === 'tens') {
          digits += `${value.digits}${after.digit}0`;
          i += 2;
        } else if (after?.kind === 'digits' && after.digits.length <= 2) {
          digits += value.digits + after.digits.padStart(2, '0');
          i += 2;
        } else {
          digits += `${value.digits}00`;
          i += 1;
        }
      } else digits += value.digits;
    } else if (value.kind === 'zero-ish') digits += '0';
    else if (value.kind === 'hundred') digits += '100';
    else if (value.kind === 'tens') {
      if (next?.kind === 'digits' && /^[1-9]$/.test(next.digits)) {
        digits += value.digit + next.digits;
        i += 1;
      } else digits += `${value.digit}0`;
    } else if (next?.kind === 'digits' && next.digits.length === 1) {
      digits += next.digits.repeat(value.times);
      i += 1;
    } else if (next?.kind === 'zero-ish') {
      digits += '0'.repeat(value.times);
      i += 1;
    }
  }
  return digits;
}

/** A run that says a number in words: at least one word, and not a lone "oh" or "double". */
function closeRun(run: Token[], text: string, runs: NumberRun[]): void {
  const words = run.filter((token) => text.charCodeAt(token.start) > 57 || text.charCodeAt(token.start) < 48);
  if (words.length === 0) return;
  const meaningful = run.filter((token) => token.value.kind === 'digits' || token.value.kind === 'tens');
  if (meaningful.length === 0) return;
  // "oh" and "o" count only next to other number words; strip them from the ends of a run.
  let first = 0;
  let last = run.length - 1;
  while (run[first]!.value.kind === 'zero-ish') first += 1;
  while (run[last]!.value.kind === 'zero-ish' || run[last]!.value.kind === 'repeat') last -= 1;
  if (first > last) return;
  const kept = run.slice(first, last + 1);
  const digits = digitsOf(kept);
  if (digits.length === 0) return;
  runs.push({ start: kept[0]!.start, end: kept[kept.length - 1]!.end, digits });
}

/** "one-time" and "one time" say no digit: read as 1, the digits before it would join the code after it. */
const ONE_TIME = /^[- ]times?(?![\p{L}\p{M}])/iu;
const isOneTime = (text: string, start: number, end: number): boolean =>
  end - start === 3 && text.slice(start, end).toLowerCase() === 'one' && ONE_TIME.test(text.slice(end, end + 7));

/** The stretches of `text` that say a number with words, in order; tokens `skip` names (inside an id) are not read. */
export function numberRuns(text: string, skip: (start: number, end: number) => boolean = () => false): NumberRun[] {
  const runs: NumberRun[] = [];
  let run: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    const start = match.index;
    const end = start + match[0].length;
    const value = skip(start, end) || isOneTime(text, start, end) ? undefined : valueOf(text, start, end);
    const previous = run[run.length - 1];
    if (value === undefined) {
      // "and" between two parts of a number keeps the run open; the joiner test below decides.
      if (run.length > 0 && AND.test(match[0])) continue;
      if (run.length > 0) closeRun(run, text, runs);
      run = [];
      continue;
    }
    if (previous !== undefined && !JOINER.test(text.slice(previous.end, start))) {
      closeRun(run, text, runs);
      run = [];
    }
    run.push({ start, end, value });
  }
  if (run.length > 0) closeRun(run, text, runs);
  return runs;
}

/** Cheap test before tokenising: some word of the table, or a spelt-out `double`, is in the text. */
const WORD_CUE = new RegExp(
  `(?<![\\p{L}\\p{M}])(?:${[...WORDS.keys()]
    .filter((word) => word.length > 1)
    .sort((a, b) => b.length - a.length)
    .join('|')})(?![\\p{L}\\p{M}])`,
  'iu',
);
const ASCII_WORD = /[A-Za-z]+/g;
const NOT_ASCII = /[^\x00-\x7f]/;
/** ASCII text, the usual case, word by word against the table: cheaper than the alternation of every spelling. */
/** Whether one lower-case ASCII word is a number word of the table, or number words glued. */
export const isNumberWord = (word: string): boolean =>
  word.length > 1 && (WORDS.has(word) || gluedValue(word) !== undefined);

function mayHoldAsciiNumberWords(text: string): boolean {
  ASCII_WORD.lastIndex = 0;
  for (let match = ASCII_WORD.exec(text); match !== null; match = ASCII_WORD.exec(text)) {
    if (isNumberWord(match[0].toLowerCase())) return true;
  }
  return false;
}
export const mayHoldNumberWords = (text: string): boolean =>
  NOT_ASCII.test(text) ? WORD_CUE.test(fold(text)) : mayHoldAsciiNumberWords(text);
