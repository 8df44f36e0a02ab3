/** What a hint holds, measured once when it was stored (`ComponentHint.bytes`). */
interface Measured {
  readonly bytes: number;
}

/**
 * The hints' sizes summed, per hints array. A session's hints array is never changed once built
 * (an input builds a new one), so its sum holds for as long as it lives, and an input works out
 * its new array's sum from the old one's instead of touching every hint it holds on each event
 * (BENCHMARKS.md, "Eighth round"). A WeakMap, so a sum goes with its array.
 */
const sums = new WeakMap<readonly Measured[], number>();

export function hintBytes(hints: readonly Measured[]): number {
  let bytes = sums.get(hints);
  if (bytes === undefined) {
    bytes = 0;
    for (const hint of hints) bytes += hint.bytes;
    sums.set(hints, bytes);
  }
  return bytes;
}

/** Records the sum of a hints array just built; the caller has worked it out from the one it replaces. */
export function rememberHintBytes(hints: readonly Measured[], bytes: number): void {
  sums.set(hints, bytes);
}
