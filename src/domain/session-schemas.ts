/**
 * The screen schemas a session holds: registered from schema events, bounded in number and size,
 * and read for the validation pattern a masked hint is matched against.
 */
import type { RedactedEvent } from './event-redaction.js';
import { own } from './own.js';
import type { HintShape } from '../privacy/hints.js';
import { schemaIndex } from './schema-index.js';
import type { RegisteredSchema } from './screen-schema.js';
import { screenKey } from './screen-schema.js';
import type { SessionRecord } from './session-record.js';

export const MAX_SCHEMAS = 32;
/** Schemas are kept whole, so the budget is on their total size (oldest dropped first). */
export const MAX_SCHEMA_BYTES = 256 * 1024;

export interface SchemaPush {
  screen_id: string;
  schema_hash: string;
  replaced: boolean;
}

export type HintMatcher = (pattern: string) => boolean | undefined;

/** Validation pattern for a component from the schemas this session holds, current screen first. */
export function patternFor(
  record: SessionRecord,
  componentId: string | undefined,
  screen: string | undefined,
): string | undefined {
  if (!componentId) return undefined;
  const { patterns } = schemaIndex(record.schemas);
  // The index holds every component with a pattern in any schema: most inputs have none, and one
  // lookup says so without reading the current screen's schema.
  if (!patterns.has(componentId)) return undefined;
  const current = screen ? own(record.schemas, screenKey(screen)) : undefined;
  const fromCurrent = current ? own(current.patterns, componentId) : undefined;
  if (fromCurrent) return fromCurrent;
  return patterns.get(componentId);
}

/**
 * Completes the shape of a server-masked hint with `matches_pattern` against the component's
 * registered schema, the one thing the redaction pass could not know.
 */
export function withSchemaMatch(
  record: SessionRecord,
  event: RedactedEvent,
  matchHint: HintMatcher | undefined,
): RedactedEvent {
  const shape = event.shape as HintShape | undefined;
  if (!matchHint || !shape || shape.matches_pattern !== undefined) return event;
  const screen = event.screen ?? event.screen_id ?? record.screen ?? undefined;
  const pattern = patternFor(record, event.component_id ?? undefined, screen);
  const matches = pattern === undefined ? undefined : matchHint(pattern);
  return matches === undefined ? event : { ...event, shape: { ...shape, matches_pattern: matches } };
}

export function registerSchema(
  schemas: Record<string, RegisteredSchema>,
  schema: RegisteredSchema,
): { schemas: Record<string, RegisteredSchema>; push: SchemaPush | undefined } {
  const key = screenKey(schema.screen_id);
  const existing = own(schemas, key);
  if (existing?.schema_hash === schema.schema_hash) return { schemas, push: undefined };
  // fromEntries defines own properties, so even a `__proto__` screen id is stored as data.
  const next: Record<string, RegisteredSchema> = Object.fromEntries([
    ...Object.entries(schemas).filter(([held]) => held !== key),
    [key, schema],
  ]);
  let bytes = Object.values(next).reduce((total, held) => total + held.bytes, 0);
  for (const oldest of Object.keys(next)) {
    if (oldest === key || (Object.keys(next).length <= MAX_SCHEMAS && bytes <= MAX_SCHEMA_BYTES)) break;
    bytes -= next[oldest]!.bytes;
    delete next[oldest];
  }
  return {
    schemas: next,
    push: { screen_id: schema.screen_id, schema_hash: schema.schema_hash, replaced: existing !== undefined },
  };
}
