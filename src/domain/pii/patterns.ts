// The building blocks the detectors' patterns are written from, each written once.

/**
 * A boundary is where no ASCII letter or digit is next to the match. ASCII rather than any script
 * on purpose: a value glued to a Devanagari word is still found (fail closed), and ASCII classes
 * keep the scan cheap. Digits of other scripts, dashes and spaces are read as ASCII before the
 * scan (plain-text.ts).
 */
export const B = '(?<![A-Za-z0-9])';
export const E = '(?![A-Za-z0-9])';
/** Boundaries in text of any script, for the detectors that read words. */
export const WB = '(?<![\\p{L}\\p{M}\\p{N}])';
export const WE = '(?![\\p{L}\\p{M}\\p{N}])';
/**
 * Between two groups of a value: one to five characters that are neither letters nor digits,
 * whatever they are (`98765 43210`, `98765,43210`, `2345|6789|0124`, `98765;43210`, `98765 -- 43210`,
 * `(98765) 43210`, `98765·43210`): an allow-list of separators is a list of the ways around it.
 * Patterns using it need the `u` flag. A comma also groups amounts (`10,00,000`), which
 * classifyDigits tells apart.
 */
export const GROUP = '(?:[^\\p{L}\\p{N}]{1,5})';
/** Between the characters of a value spelled out (`A B C D E 1 2 3 4 F`, `A, B, C, …`): the same. */
export const SPELLED = GROUP;
export const MONTHS =
  'jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|september|october|november|december|' +
  'जनवरी|फ़रवरी|फरवरी|मार्च|अप्रैल|मई|जून|जुलाई|अगस्त|सितंबर|सितम्बर|अक्टूबर|अक्तूबर|नवंबर|नवम्बर|दिसंबर|दिसम्बर';
export const DAY = '(?:0?[1-9]|[12]\\d|3[01])';
export const MONTH = '(?:0?[1-9]|1[0-2])';
export const DAY2 = '(?:0[1-9]|[12]\\d|3[01])';
export const MONTH2 = '(?:0[1-9]|1[0-2])';
export const YEAR = '(?:19|20)\\d{2}';
/**
 * Between the parts of a date written with four-digit years: one to five characters that are
 * neither letters nor digits, nor a colon, which writes times (`2024 10:30` is a year and a time).
 */
export const DATE_SEP = '(?:[^\\p{L}\\p{N}:]{1,5})';
/** Between a day, a month's name and a year: up to three characters that are neither letters nor digits. */
export const NAMED_SEP = '[^\\p{L}\\p{N}]{0,3}';
/** Between the parts of a date with a two-digit year (`15.06.95`, `15 06 95`): only what dates use, as short numbers are listed with anything else. */
export const SHORT_DATE_SEP = '[-/. ]';
/** A two-digit year, perhaps with its apostrophe (`'95`). */
export const YEAR2 = "'?\\d{2}";
/** The two-letter codes of India's states and union territories, which begin licences and vehicle numbers. */
export const STATES = 'AN|AP|AR|AS|BR|CG|CH|DD|DL|DN|GA|GJ|HP|HR|JH|JK|KA|KL|LA|LD|MH|ML|MN|MP|MZ|NL|OD|OR|PB|PY|RJ|SK|TN|TR|TS|UK|UP|WB|UA';
/** At, as an e-mail address is spoken or disguised: `[at]`, `(at)`, ` at `, ` at the rate `, ` एट `, or `@` itself before a spoken dot. */
export const SPOKEN_AT = '(?: ?[\\[({<] ?(?:at|@) ?[\\])}>] ?| (?:at the rate(?: of)?|at|@|एट द रेट|एट|ऐट) |@)';
export const SPOKEN_DOT = '(?: ?[\\[({<] ?dot ?[\\])}>] ?| (?:dot|डॉट|डोट) |\\.)';
export const MAIL_PART = '[\\p{L}\\p{M}\\p{N}_%+-]{1,64}';
export const MAIL_TLD = '(?:com|in|net|org|co|edu|gov|io|info|me|biz|ai|app|dev|us|uk|कॉम|कोम|इन)';
/** Words that end a told name: "my name is Meera Nair and …", "मेरा नाम मीरा नायर है". */
const NAME_STOP = 'and|aur|but|hai|hain|he|from|here|speaking|calling|please|sir|madam|ji|है|हैं|और|जी';
export const NAME_WORD = `(?!(?:${NAME_STOP})${WE})[\\p{L}][\\p{L}\\p{M}'.-]{0,30}`;
/** Words that put a six-digit number in an address, in English and Hindi. */
export const ADDRESS_WORDS =
  'road|rd|street|st|nagar|colony|sector|flat|house|plot|apartments?|apts?|society|lane|marg|chowk|layout|block|phase|floor|tower|near|opp|opposite|village|vill|district|dist|taluka?|tehsil|mandal|city|town|west|east|north|south|pin|pincode|pin code|नगर|मार्ग|रोड|गली|मोहल्ला|कॉलोनी|सेक्टर|फ्लैट|मकान|पिन|गांव|गाँव|ज़िला|जिला';
export const normalized = (source: string) => source.normalize('NFKC');
