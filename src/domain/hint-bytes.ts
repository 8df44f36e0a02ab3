import type { HintShape } from '../privacy/hints.js';
import { jsonNumberSize, jsonStringSize } from './json-size.js';

/** A hint as far as its weight goes: the session record's `ComponentHint` is one. */
interface Weighed {
  readonly bytes: number;
}

/**
 * The summed `bytes` of a session's hints, for the session budget: read each time, a dozen for a
 * deployed SDK's session and at most MAX_COMPONENT_HINTS. Kept beside each array in a WeakMap
 * before, it cost more than the sum: V8 grew that table, one entry per running session, in a
 * single call of up to 97 ms (docs/decisions/0013-schemas-and-hints-beside-the-state.md).
 */
export function hintsBytes(hints: readonly Weighed[]): number {
  let total = 0;
  for (const hint of hints) total += hint.bytes;
  return total;
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
