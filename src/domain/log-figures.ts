/**
 * Byte counts as log lines give them. The log masks every number of seven digits or more that
 * could be an identity value (event-redaction.ts, docs/explanation/privacy.md), a
 * budget of 51 MiB in bytes among them, so sizes are logged in KiB or MiB, under names that say so.
 */
export const kib = (bytes: number): number => Math.round(bytes / 1024);
export const mib = (bytes: number): number => Math.round(bytes / 2 ** 20);
