/**
 * A session's component hints: what the user typed where, masked, one per component, the least
 * recently updated going first past the bound.
 */
import type { ComponentHint } from './session-record.js';

/** Bounds that keep one session's memory small whatever a client sends. */
export const MAX_COMPONENT_HINTS = 100;
/** A hint's `properties` are kept only when small: they describe the input, they are not a store. */
export const MAX_HINT_PROPERTIES_BYTES = 1024;

export function upsertHint(hints: ComponentHint[], next: ComponentHint): ComponentHint[] {
  // One array of the final length: the same component typed again is the common case, and it is
  // the newest hint, so the search starts there.
  let replaced = hints.length - 1;
  while (replaced >= 0 && hints[replaced]!.component_id !== next.component_id) replaced -= 1;
  const kept = replaced >= 0 ? hints.length - 1 : hints.length;
  // Least recently updated components go first once the bound is reached.
  const from = Math.max(0, kept + 1 - MAX_COMPONENT_HINTS);
  const updated: ComponentHint[] = new Array<ComponentHint>(kept + 1 - from);
  let at = 0;
  let skipped = 0;
  for (let index = 0; index < hints.length; index += 1) {
    if (index === replaced) continue;
    if (skipped < from) skipped += 1;
    else updated[at++] = hints[index]!;
  }
  updated[at] = next;
  return updated;
}
