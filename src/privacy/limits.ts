/** Past these, a value is not scanned: it is dropped with a marker (fail closed). */
export const MAX_SCAN_CHARS = 4096;
export const MAX_SCAN_DEPTH = 8;
/** Shapes listed next to an event; more redactions than this are counted, not described. */
export const MAX_SHAPES = 32;
