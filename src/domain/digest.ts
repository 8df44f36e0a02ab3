import { createHash } from 'node:crypto';

/** A short, fixed-size name for the parts together: kept or compared instead of client text. */
export const digestOf = (...parts: string[]): string =>
  createHash('sha256').update(parts.join('\n')).digest('base64url');
