import type { HintShape } from '../privacy/hints.js';
import { jsonNumberSize, jsonStringSize } from './json-size.js';

/** A hint as far as its weight goes: the session record's `ComponentHint` is one. */
interface Weighed {
  readonly bytes: number;
}

/**
 * The summed `bytes` of a session's hints, for the session budget. A hints array is never changed
 * once built (an input builds a new one), so its sum holds for as long as it lives, and an input
 * works out the new array's sum from the old one's instead of reading every hint the session
 * holds: a deployed SDK's session holds a dozen, each a read from memory the event does not
 * otherwise touch (docs/decisions/0013-schemas-and-hints-beside-the-state.md). A WeakMap, so a sum goes with its array.
 */
const totals = new WeakMap<readonly Weighed[], number>();

/** The hints' summed `bytes`: known when the array was built by `upsertHint`, else counted once. */
export function hintsBytes(hints: readonly Weighed[]): number {
  let total = totals.get(hints);
  if (total === undefined) {
    total = 0;
    for (const hint of hints) total += hint.bytes;
    totals.set(hints, total);
  }
  return total;
}

/** Records the summed `bytes` of an array just built. */
export function rememberHintsBytes(hints: readonly Weighed[], total: number): void {
  totals.set(hints, total);
}

const SHAPE_KEYS = {
  length: jsonStringSize('length') + 1,
  digits: jsonStringSize('digits') + 1,
  letters: jsonStringSize('letters') + 1,
  kind: jsonStringSize('kind') + 1,
  matches: jsonStringSize('matches_pattern') + 1,
};

/** A shape's JSON size from its known fields: every shape is built by the privacy rule (src/privacy/), never taken from a client. */
export function hintShapeSize(shape: HintShape): number {
  let size =
    2 +
    SHAPE_KEYS.length +
    jsonNumberSize(shape.length) +
    1 +
    SHAPE_KEYS.digits +
    jsonNumberSize(shape.digits) +
    1 +
    SHAPE_KEYS.letters +
    jsonNumberSize(shape.letters);
  if (shape.kind !== undefined) size += 1 + SHAPE_KEYS.kind + jsonStringSize(shape.kind);
  if (shape.matches_pattern !== undefined) size += 1 + SHAPE_KEYS.matches + (shape.matches_pattern ? 4 : 5);
  return size;
}
