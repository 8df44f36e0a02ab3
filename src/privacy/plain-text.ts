/**
 * Text as a reader sees it, which is what the rule (text-rule.ts) must see too: a value written
 * in another script's digits, split by invisible characters or grouped with an unusual dash or
 * space is still the value (docs/explanation/privacy.md, "What a value is read as").
 */

const NON_ASCII = /[^\x00-\x7f]/;
const DECIMAL_DIGIT = /\p{Nd}/u;
const ANY_DECIMAL_DIGIT = /\p{Nd}/gu;
/** Every dash (hyphen, en and em dash, the minus sign) and every space (no-break, thin, ideographic, the line and paragraph separators). */
const DASH = /[\p{Pd}\u2212\u2796\uFE63\uFF0D]/gu;
const SPACE = /[\p{Zs}\p{Zl}\p{Zp}]/gu;

/**
 * Unicode encodes each script's decimal digits as a run of ten, zero first, and lists them all
 * under \p{Nd}; some runs touch (mathematical digits come in five runs of ten). So a digit's value
 * is how far it stands from the start of its run, modulo ten: no table of scripts to keep up.
 */
const digitValues = new Map<number, string>();
const MAX_RUN = 60;

function digitValue(codePoint: number): string {
  let value = digitValues.get(codePoint);
  if (value === undefined) {
    let start = codePoint;
    while (codePoint - start < MAX_RUN && DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start -= 1;
    value = String((codePoint - start) % 10);
    // At most the 700-odd decimal digits Unicode has: bounded without a cap.
    digitValues.set(codePoint, value);
  }
  return value;
}

/**
 * Digits and capitals drawn in a circle or a square that NFKC leaves as they are (it folds `①`
 * and `Ⓐ`, not `❶`, `➀`, `⓫`, `🅐`, `🅰` or the regional indicators `🇦`): each range, where it
 * starts, and the value its first character stands for. The digits are read as digits anywhere;
 * the capitals only in a run with a Latin letter or a digit, so a flag (`🇮🇳`, two regional
 * indicators) stays a flag.
 */
const ENCLOSED: readonly { from: number; to: number; first: number; letters?: true }[] = [
  { from: 0x2776, to: 0x277f, first: 1 },
  { from: 0x2780, to: 0x2789, first: 1 },
  { from: 0x278a, to: 0x2793, first: 1 },
  { from: 0x24eb, to: 0x24f4, first: 11 },
  { from: 0x24f5, to: 0x24fe, first: 1 },
  { from: 0x24ff, to: 0x24ff, first: 0 },
  { from: 0x1f10b, to: 0x1f10c, first: 0 },
  // NFKC would write these as `(1)`, `1.`, `(a)`, `(A)`: read as the digit or letter alone.
  { from: 0x2474, to: 0x2487, first: 1 },
  { from: 0x2488, to: 0x249b, first: 1 },
  { from: 0x1f150, to: 0x1f169, first: 0, letters: true },
  { from: 0x1f170, to: 0x1f189, first: 0, letters: true },
  { from: 0x1f1e6, to: 0x1f1ff, first: 0, letters: true },
  { from: 0x249c, to: 0x24b5, first: 0, letters: true },
  { from: 0x1f110, to: 0x1f129, first: 0, letters: true },
];
const ENCLOSED_DIGIT = /[\u2776-\u2793\u24eb-\u24ff\u{1f10b}\u{1f10c}\u2474-\u249b]/gu;
const ENCLOSED_LETTER = /[\u{1f150}-\u{1f169}\u{1f170}-\u{1f189}\u{1f1e6}-\u{1f1ff}\u249c-\u24b5\u{1f110}-\u{1f129}]/u;
const ENCLOSED_LETTERS = new RegExp(ENCLOSED_LETTER.source, 'gu');
/** A run of letters, digits and enclosed capitals: what a value written with them is part of. */
const ENCLOSED_RUN = new RegExp(`(?:[\\p{L}\\p{M}\\p{N}]|${ENCLOSED_LETTER.source})+`, 'gu');

function enclosedValue(char: string): string {
  const code = char.codePointAt(0)!;
  const range = ENCLOSED.find((entry) => code >= entry.from && code <= entry.to)!;
  const offset = code - range.from;
  // Parenthesised small letters (`⒜`) read as capitals too: the rule reads letters either way.
  return range.letters ? String.fromCharCode(65 + offset) : String(range.first + offset);
}

/**
 * Cyrillic and Greek letters drawn as Latin ones. Read as Latin inside a word that also has a
 * Latin letter or digit (`АBCDE1234F` with a Cyrillic А), or, in a text with a digit, in a word
 * made of nothing else (`АВСЕН 1234 К`, `15 ᴊᴜɴᴇ 1995`): a Russian or Greek word has letters no
 * Latin one looks like, and stays as written.
 */
const LOOKALIKES = new Map<string, string>(
  Object.entries({
    А: 'A',
    В: 'B',
    С: 'C',
    Е: 'E',
    Н: 'H',
    І: 'I',
    Ј: 'J',
    К: 'K',
    М: 'M',
    О: 'O',
    Р: 'P',
    Ѕ: 'S',
    Т: 'T',
    Х: 'X',
    У: 'Y',
    Ү: 'Y',
    а: 'a',
    с: 'c',
    е: 'e',
    і: 'i',
    ј: 'j',
    о: 'o',
    р: 'p',
    ѕ: 's',
    х: 'x',
    у: 'y',
    һ: 'h',
    ԁ: 'd',
    ԛ: 'q',
    ԝ: 'w',
    Α: 'A',
    Β: 'B',
    Ε: 'E',
    Ζ: 'Z',
    Η: 'H',
    Ι: 'I',
    Κ: 'K',
    Μ: 'M',
    Ν: 'N',
    Ο: 'O',
    Ρ: 'P',
    Τ: 'T',
    Υ: 'Y',
    Χ: 'X',
    ο: 'o',
    ν: 'v',
    Ϳ: 'J',
    Ϝ: 'F',
    Ԍ: 'G',
    Ԛ: 'Q',
    Ԝ: 'W',
    Ѵ: 'V',
    Ӏ: 'I',
    Ꭱ: 'R',
    Ꭹ: 'Y',
    // Small capitals and Cherokee letters drawn as Latin capitals.
    ᴀ: 'A',
    ʙ: 'B',
    ᴄ: 'C',
    ᴅ: 'D',
    ᴇ: 'E',
    ꜰ: 'F',
    ɢ: 'G',
    ʜ: 'H',
    ɪ: 'I',
    ᴊ: 'J',
    ᴋ: 'K',
    ʟ: 'L',
    ᴍ: 'M',
    ɴ: 'N',
    ᴏ: 'O',
    ᴘ: 'P',
    ʀ: 'R',
    ꜱ: 'S',
    ᴛ: 'T',
    ᴜ: 'U',
    ᴠ: 'V',
    ᴡ: 'W',
    ʏ: 'Y',
    ᴢ: 'Z',
    Ꭺ: 'A',
    Ᏼ: 'B',
    Ꮯ: 'C',
    Ꭰ: 'D',
    Ꭼ: 'E',
    Ꮐ: 'G',
    Ꮋ: 'H',
    Ꭻ: 'J',
    Ꮶ: 'K',
    Ꮮ: 'L',
    Ꮇ: 'M',
    Ꮲ: 'P',
    Ꮪ: 'S',
    Ꭲ: 'T',
    Ꮩ: 'V',
    Ꮃ: 'W',
    Ꮓ: 'Z',
  }),
);
const ANY_LOOKALIKE = new RegExp(`[${[...LOOKALIKES.keys()].join('')}]`, 'u');
const EVERY_LOOKALIKE = new RegExp(ANY_LOOKALIKE.source, 'gu');
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const LATIN_OR_DIGIT = /[A-Za-z0-9]/;

const enclosedCapitals = (text: string): string =>
  ENCLOSED_LETTER.test(text)
    ? text.replace(ENCLOSED_RUN, (run) =>
        LATIN_OR_DIGIT.test(run) ? run.replace(ENCLOSED_LETTERS, enclosedValue) : run,
      )
    : text;

/** Marks on a Latin letter or a digit (`À`, `9̲`, the keycap of `9⃣`): read as the letter or digit beneath. */
const MARKED = /[A-Za-z0-9]\p{M}/u;
const MARKS_ON_LATIN = /(?<=[A-Za-z0-9])\p{M}+/gu;
/** The lunate sigma is drawn as `C`, yet NFKC makes it `Σ`: read as `C` before NFKC runs. */
const LUNATE_SIGMA = /[\u03f9\u03f2]/g;

const unmarkedLatin = (input: string): string => {
  const text = input.replace(LUNATE_SIGMA, (sigma) => (sigma === '\u03f9' ? 'C' : 'c'));
  const decomposed = text.normalize('NFKD');
  return MARKED.test(decomposed) ? decomposed.replace(MARKS_ON_LATIN, '').normalize('NFKC') : text;
};

const ASCII_DIGIT = /[0-9]/;
const allLookalike = (word: string) => [...word].every((char) => LOOKALIKES.has(char) || /\p{M}/u.test(char));

const latinLookalikes = (text: string): string => {
  if (!ANY_LOOKALIKE.test(text)) return text;
  const withDigits = ASCII_DIGIT.test(text);
  return text.replace(WORD, (word) =>
    ANY_LOOKALIKE.test(word) && (LATIN_OR_DIGIT.test(word) || (withDigits && allLookalike(word)))
      ? word.replace(EVERY_LOOKALIKE, (char) => LOOKALIKES.get(char)!)
      : word,
  );
};

/**
 * Digits of every script as ASCII digits, every dash as `-` and every space as ` `, after NFKC
 * (which folds fullwidth forms); digits and capitals in circles and squares as themselves, and
 * Cyrillic or Greek look-alikes in a Latin word as the Latin letters they look like. Most
 * replacements are one UTF-16 unit for one, some are not (an astral digit, `❿` for `10`):
 * callers use the result as the text they scan and return.
 */
export function asciiForms(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return latinLookalikes(
    enclosedCapitals(
      unmarkedLatin(text)
        .normalize('NFKC')
        .replace(ENCLOSED_DIGIT, enclosedValue)
        .replace(ANY_DECIMAL_DIGIT, (digit) =>
          digit.length === 1 && digit.charCodeAt(0) < 128 ? digit : digitValue(digit.codePointAt(0)!),
        )
        .replace(DASH, '-')
        .replace(SPACE, ' '),
    ),
  );
}

/**
 * What a reader does not see: format characters (zero-width space, soft hyphen, bidi marks),
 * every other character Unicode says to draw as nothing when it cannot be shown (combining
 * grapheme joiner, variation selectors, Hangul fillers, Mongolian and Khmer invisibles:
 * Default_Ignorable_Code_Point), and the braille blank, which no \s names.
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\u2800]/gu;
/** Invisible characters, control characters, a whitespace run. */
const HIDING = /[\p{Cf}\p{Default_Ignorable_Code_Point}\u2800\p{Cc}]|\s\s/u;

/**
 * Invisible characters dropped, control characters and runs of whitespace read as one space. A
 * value split by them (`ABCDE\u200b1234F`, `ABCDE\u034f1234F`, `98765\n43210`) is still the value,
 * and the system prompt's flattening would put it back together.
 */
export function plainSpacing(text: string): string {
  if (!HIDING.test(text)) return text;
  return text.replace(INVISIBLE, '').replace(/[\s\p{Cc}]+/gu, ' ');
}

/**
 * Both of the above: the one text every detector reads. Invisible characters go first, since one
 * inside a surrogate pair hides the digit it splits; spacing again after, since NFKC turns wide
 * spaces into ordinary ones.
 */
export const readerView = (text: string): string => plainSpacing(asciiForms(plainSpacing(text)));
