/**
 * What leaves the process through inspection: session contexts, commands and the results of
 * invoked actors, minus anything a viewer must not see. Hints are masked already, but a viewer
 * page is an audience of its own, so they are withheld here too (fail closed).
 */

/** Values shown as withheld, wherever they appear: hints (as sent, or masked) and participant tokens. */
const WITHHELD = new Set(['hint', 'token']);
/**
 * Values dropped outright: reply callbacks of the ask pattern, and the knowledge base that
 * context fetches carry by reference (large, and no part of a session's state).
 */
const DROPPED = new Set(['reply', 'sources']);

export const WITHHELD_MARK = '[redacted]';

/** Deeper than any session context; past it a value is summarised rather than walked. */
const MAX_DEPTH = 12;

/**
 * A copy of `value` fit for an inspection viewer: functions dropped, hints and tokens
 * withheld under any key path, errors reduced to their name and message. Never mutates.
 */
export function redactForInspection(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (depth >= MAX_DEPTH) return '[…]';
  if (Array.isArray(value)) return value.map((item) => redactForInspection(item, depth + 1) ?? null);
  if (value instanceof Error) return { name: value.name, message: value.message };
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (DROPPED.has(key) || typeof item === 'function') continue;
    copy[key] = WITHHELD.has(key) && item !== null && item !== undefined ? WITHHELD_MARK : redactForInspection(item, depth + 1);
  }
  return copy;
}
