import type { PiiRules } from './rules.js';
import { DEFAULT_PII_RULES } from './rules.js';
import { scrubText } from './scrub.js';

/**
 * What leaves the process through inspection: session contexts, commands and the results of
 * invoked actors, minus anything a viewer must not see. Events are redacted before a session
 * sees them, but a viewer page is an audience of its own, so the same key rules and text rule
 * (src/privacy/) run again here, and hints are withheld outright (fail closed).
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

const scrub = (text: string) => scrubText(text).text;

/**
 * A copy of `value` fit for an inspection viewer: functions dropped, hints, tokens and values
 * under sensitive keys withheld under any key path, identity values in any other string masked,
 * errors reduced to their name and message. Never mutates.
 */
export function redactForInspection(value: unknown, rules: PiiRules = DEFAULT_PII_RULES, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (depth >= MAX_DEPTH) return '[…]';
  if (Array.isArray(value)) return value.map((item) => redactForInspection(item, rules, depth + 1) ?? null);
  if (value instanceof Error) return { name: value.name, message: scrub(value.message) };
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (DROPPED.has(key) || typeof item === 'function') continue;
    const withheld = (WITHHELD.has(key) || rules.isSensitiveKey(key)) && item !== null && item !== undefined;
    copy[scrub(key)] = withheld ? WITHHELD_MARK : redactForInspection(item, rules, depth + 1);
  }
  return copy;
}
