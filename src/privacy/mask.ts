/** One star per UTF-16 unit: a mask keeps the length of what it replaced, so masks can be written back onto the text they came from. */
const stars = (char: string) => (char.length === 1 ? '*' : '**');
/**
 * A letter (with its combining marks, so a Devanagari word leaves no vowel signs behind), a digit,
 * or a symbol that draws one (`🅐`, `🇦`: other symbols, \p{So}).
 */
const MASKABLE = /[\p{L}\p{M}\p{N}\p{So}]/gu;

/**
 * Every letter and digit starred, separators kept: what a date or an OTP is masked to. Text all in
 * ASCII is starred by char code: of the ASCII characters MASKABLE matches exactly the 62 letters
 * and digits (no ASCII character is a mark or an \p{So} symbol), and each is one UTF-16 unit, so
 * the result is the regex's, without its per-match callback (git show d1df1cf:docs/benchmark-history.md, 2026-11-29).
 */
export function maskWhole(value: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code > 127) return value.replace(MASKABLE, stars);
    if ((code >= 48 && code <= 57) || ((code | 32) >= 97 && (code | 32) <= 122)) {
      if (from < i) out += value.slice(from, i);
      out += '*';
      from = i + 1;
    }
  }
  return from === 0 ? value : from < value.length ? out + value.slice(from) : out;
}
