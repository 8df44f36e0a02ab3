import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import { z } from 'zod';
import { normaliseStepId } from './step-id.js';

/**
 * A screen schema as deployed SDKs push it in `screen_schema.properties`. Only the parts
 * the backend reads are typed; everything else is kept verbatim.
 */
const ValidationRule = z.looseObject({
  rule_id: z.string().optional(),
  pattern: z.string().optional(),
  error_codes: z.array(z.string()).optional(),
});

const Component = z.looseObject({
  id: z.string(),
  type: z.string().optional(),
  validations: z.array(z.unknown()).optional(),
});

const SchemaShape = z.looseObject({
  screen_id: z.string().optional(),
  components: z.array(z.unknown()).optional(),
  critical: z.boolean().optional(),
});

export interface RegisteredSchema {
  screen_id: string;
  schema_hash: string;
  /** Size of the canonical JSON, for the per-session schema budget. */
  bytes: number;
  schema: Record<string, unknown>;
  /** component id → first validation pattern, precomputed so redaction does not re-parse. */
  patterns: Record<string, string>;
  critical: boolean;
}

/** Schemas are keyed by the one step-id spelling, so `N_PAN_DETAILS` finds the schema of `pan_details`. */
export const screenKey = (screen: string): string => normaliseStepId(screen);

const canonicalJson = (schema: Record<string, unknown>): string => stringify(schema) ?? '';

function patternsOf(components: unknown[] | undefined): Record<string, string> {
  const patterns: [string, string][] = [];
  for (const raw of components ?? []) {
    const component = Component.safeParse(raw);
    if (!component.success) continue;
    const rule = (component.data.validations ?? [])
      .map((candidate) => ValidationRule.safeParse(candidate))
      .find((parsed) => parsed.success && parsed.data.pattern);
    if (rule?.success && rule.data.pattern) patterns.push([component.data.id, rule.data.pattern]);
  }
  // fromEntries defines own properties: a component id such as `__proto__` stays plain data.
  return Object.fromEntries(patterns);
}

/** The schema a `screen_schema` event registers, or undefined when it carries none. */
export function schemaFromEvent(
  properties: Record<string, unknown> | undefined,
  fallbackScreen: string | undefined,
): RegisteredSchema | undefined {
  if (!properties) return undefined;
  const shape = SchemaShape.safeParse(properties);
  if (!shape.success) return undefined;
  const screenId = shape.data.screen_id ?? fallbackScreen;
  if (!screenId) return undefined;
  const json = canonicalJson(properties);
  return {
    screen_id: screenId,
    schema_hash: createHash('sha256').update(json).digest('hex'),
    bytes: Buffer.byteLength(json),
    schema: properties,
    patterns: patternsOf(shape.data.components),
    critical: shape.data.critical === true,
  };
}
