/** One star per UTF-16 unit: a mask keeps the length of what it replaced, so masks can be written back onto the text they came from. */
const stars = (char: string) => (char.length === 1 ? '*' : '**');
/**
 * A letter (with its combining marks, so a Devanagari word leaves no vowel signs behind), a digit,
 * or a symbol that draws one (`🅐`, `🇦`: other symbols, \p{So}).
 */
const MASKABLE = /[\p{L}\p{M}\p{N}\p{So}]/gu;

/** Every letter and digit starred, separators kept: what a date or an OTP is masked to. */
export const maskWhole = (value: string) => value.replace(MASKABLE, stars);
