import type { EventSizes } from './event-redaction.js';

/**
 * What the memory budget charges a session per byte of client data it holds (`held_bytes`, a
 * JSON size), unless its data is more nested than usual: parsed objects and strings cost the heap
 * about twice their JSON text (docs/limits.md, "Memory").
 */
export const HELD_BYTES_FACTOR = 2;

/**
 * What the heap spends per JSON byte of an event, at least the usual factor: what its objects,
 * arrays and keys cost beyond their text, as the redaction pass counted them, per byte of its
 * JSON. A deployed SDK's event comes to about 2 (the factor covers it, with its text); 19,000
 * empty arrays in 57 KB to about 13, as measured, and empty objects to about 24 (21 measured).
 */
export function heldDensity(sizes: EventSizes | undefined): number {
  if (sizes?.structureBytes === undefined || sizes.bytes <= 0) return HELD_BYTES_FACTOR;
  return Math.max(HELD_BYTES_FACTOR, sizes.structureBytes / sizes.bytes);
}
