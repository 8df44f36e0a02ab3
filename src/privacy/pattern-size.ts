/**
 * How many atoms a regular expression holds once its counted repetitions are written out:
 * `[A-Z]{5}[0-9]{4}` is 9, `(?:\w?){1000}` is 1,000, `((ab){3}){2}` is 12. RE2 compiles each
 * repetition into copies, so its program, the time to compile it and the time each match takes
 * all grow with this. Read from the text alone, before anything is compiled: an over-estimate
 * where alternatives are summed (`a|bc` is 3). Escapes and character classes are one atom each.
 */
export function patternSize(pattern: string): number {
  // Each open group's running total, and the size of its last atom (what a quantifier repeats).
  const frames: { total: number; last: number }[] = [{ total: 0, last: 0 }];
  const top = () => frames[frames.length - 1]!;
  const atom = (size: number) => {
    top().total += size;
    top().last = size;
  };
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i]!;
    if (char === '\\') {
      // `\p{Greek}`, `\x{41}`: the braces belong to the escape.
      const next = pattern[i + 1];
      i += 1;
      if ((next === 'p' || next === 'P' || next === 'x') && pattern[i + 1] === '{') i = skipTo(pattern, i + 1, '}');
      atom(1);
    } else if (char === '[') {
      i = classEnd(pattern, i);
      atom(1);
    } else if (char === '(') {
      frames.push({ total: 0, last: 0 });
      // `(?:`, `(?i:`, `(?P<name>`, `(?<name>`: the group's prefix is no atom; `(?i)` sets flags and holds none.
      if (pattern[i + 1] === '?') {
        const prefix = /^\(\?(?:P?<[^>]*>|[a-zA-Z-]*:|([a-zA-Z-]*\)))/.exec(pattern.slice(i));
        if (prefix) {
          i += prefix[0].length - 1;
          if (prefix[1] !== undefined) frames.pop();
        }
      }
    } else if (char === ')') {
      if (frames.length > 1) atom(frames.pop()!.total);
    } else if (char === '{') {
      const repeat = /^\{(\d{1,7})(?:(,)(\d{0,7}))?\}/.exec(pattern.slice(i));
      if (!repeat) {
        atom(1);
        continue;
      }
      const min = Number(repeat[1]);
      const max = repeat[2] === undefined ? min : repeat[3] === '' ? min + 1 : Number(repeat[3]);
      const frame = top();
      frame.total += frame.last * (Math.max(min, max) - 1);
      frame.last *= Math.max(min, max);
      i += repeat[0].length - 1;
    } else if (char === '|') {
      top().last = 0;
    } else if (char !== '*' && char !== '+' && char !== '?' && char !== '^' && char !== '$') {
      atom(1);
    }
  }
  // Groups left open (the pattern does not compile anyway) count as written.
  return frames.reduce((sum, frame) => sum + frame.total, 0);
}

function skipTo(pattern: string, from: number, close: string): number {
  const end = pattern.indexOf(close, from);
  return end === -1 ? pattern.length : end;
}

/** The index of a character class's closing `]`: a `]` first in it (after `^`) is a member, escapes are skipped. */
function classEnd(pattern: string, open: number): number {
  let i = open + 1;
  if (pattern[i] === '^') i += 1;
  if (pattern[i] === ']') i += 1;
  for (; i < pattern.length; i += 1) {
    if (pattern[i] === '\\') i += 1;
    else if (pattern[i] === ']') return i;
  }
  return pattern.length;
}
