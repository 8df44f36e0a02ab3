import { numberRuns } from '../src/privacy/number-words.js';
import { readerView } from '../src/privacy/plain-text.js';
import { scrubText } from '../src/privacy/scrub.js';

/**
 * A call is one text said in pieces: the user pauses in the middle of a number ("nine eight
 * seven", a breath, "six five four …") and the voice detector ends the turn there, any number of
 * times. Each piece alone may hold too few digits for the rule to mask, so digits are judged across
 * the whole call (docs/reference/voice-agent.md, "What the agent reads and sends").
 */

/** Hinglish number words that are also English words ("do", "teen"): alone, they say no digit. */
const ALSO_ENGLISH = new Set(['do', 'teen', 'tin', 'das', 'sat', 'char', 'ek', 'aath', 'nau']);

/** Whether a turn says any digit, in figures of any script or in words. */
export function holdsDigits(text: string): boolean {
  const view = readerView(text);
  return (
    /\d/.test(view) || numberRuns(view).some((run) => !ALSO_ENGLISH.has(view.slice(run.start, run.end).toLowerCase()))
  );
}

/** A turn with every digit hidden, in figures or in words, after the rule has masked it. */
export function withoutDigits(text: string): string {
  let out = scrubText(text).text;
  for (const run of numberRuns(out).reverse()) {
    if (ALSO_ENGLISH.has(out.slice(run.start, run.end).toLowerCase())) continue;
    out = out.slice(0, run.start) + out.slice(run.start, run.end).replace(/[\p{L}\p{M}]/gu, '*') + out.slice(run.end);
  }
  return out.replace(/\p{N}/gu, '*');
}

export interface Turn {
  role: 'user' | 'assistant';
  text: string;
}

/**
 * Every turn of a call as it may leave the agent (to the model, to the service's stored turns):
 * masked by the rule, and with its digits hidden when it is part of a run of user turns that say
 * digits one after another (a value in pieces, however many), or an assistant turn answering one
 * (its echo of the value). A single turn with a few digits and no neighbour saying more ("step
 * 2") keeps them.
 */
export function maskCall(turns: readonly Turn[]): string[] {
  const digits = turns.map((turn) => holdsDigits(turn.text));
  const userIndexes = turns.flatMap((turn, index) => (turn.role === 'user' ? [index] : []));
  const split = new Set<number>();
  userIndexes.forEach((index, at) => {
    const next = userIndexes[at + 1];
    if (next !== undefined && digits[index] && digits[next]) split.add(index).add(next);
  });
  let echoing = false;
  return turns.map((turn, index) => {
    if (turn.role === 'user') {
      echoing = split.has(index);
      return echoing ? withoutDigits(turn.text) : scrubText(turn.text).text;
    }
    return echoing && digits[index] ? withoutDigits(turn.text) : scrubText(turn.text).text;
  });
}
