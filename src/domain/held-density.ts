import type { EventSizes } from './event-redaction.js';

/**
 * What the memory budget charges a session per byte of client data it holds (`held_bytes`, a
 * JSON size), unless its data is more nested than usual: parsed objects and strings cost the heap
 * about twice their JSON text (docs/reference/limits.md, "Memory").
 */
export const HELD_BYTES_FACTOR = 2;

/**
 * What the heap spends per JSON byte of an event, at least the usual factor: what its values cost
 * beyond their text, as the redaction pass counted them, per byte of its JSON (the factor's 2
 * covers the text itself in an SDK's events). A deployed SDK's events come to 2–2.7; 12,000 empty
 * arrays to 13.3 (13.4 measured), empty objects to 21.3 (21.4), random five-letter strings to 4.0
 * (4.0), objects each with a key of its own to 15.3 (15.4), an object of 4,400 keys to 12.4 (5.5).
 */
export function heldDensity(sizes: EventSizes | undefined): number {
  if (sizes?.structureBytes === undefined || sizes.bytes <= 0) return HELD_BYTES_FACTOR;
  return Math.max(HELD_BYTES_FACTOR, sizes.structureBytes / sizes.bytes);
}
