import { numberRuns } from '../src/domain/number-words.js';
import { scrubText } from '../src/domain/pii/scrub.js';

/**
 * A value said across two turns: the user paused in the middle of a number ("nine eight seven six
 * five", a breath, "four three two one zero") and the voice detector ended the turn there. Each half
 * alone is no identity value, so masking each turn on its own leaves both; read together they are
 * one. True when the two texts joined hold a value neither holds alone.
 */
export function valueSpansTurns(previous: string, next: string): boolean {
  if (previous === '' || next === '') return false;
  const apart = scrubText(previous).findings.length + scrubText(next).findings.length;
  return scrubText(`${previous} ${next}`).findings.length > apart;
}

/** A turn with every digit hidden, in figures or in words: what is left of a value that spans turns says nothing of it. */
export function withoutDigits(text: string): string {
  let out = scrubText(text).text;
  for (const run of numberRuns(out).reverse()) out = out.slice(0, run.start) + out.slice(run.start, run.end).replace(/[\p{L}\p{M}]/gu, '*') + out.slice(run.end);
  return out.replace(/\p{N}/gu, '*');
}
