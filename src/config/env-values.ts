/**
 * The kinds of value an environment variable holds (a list, a flag, a count, a URL, a JSON map),
 * each a zod schema with the message a wrong value gets. Every setting is one of these, so a new
 * one reads its value the way the others do.
 */
import { z } from 'zod';

/** Comma-separated list; blank entries dropped. */
export const csv = z.string().transform((raw) =>
  raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0),
);

export const optionalText = z
  .string()
  .transform((raw) => raw.trim())
  .transform((raw) => (raw.length > 0 ? raw : undefined))
  .optional();

export const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
export const nonNegativeInt = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);

/** true/false/1/0, any case: what people write in .env files and CI settings. */
export const booleanText = z
  .string()
  .transform((raw) => raw.trim().toLowerCase())
  .pipe(z.enum(['true', 'false', '1', '0'], { error: 'must be true, false, 1 or 0' }))
  .transform((raw) => raw === 'true' || raw === '1');
export const booleanFlag = (fallback: boolean) => booleanText.default(fallback);

export const featureFlagOverrides = z
  .string()
  .transform((raw, ctx) => {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object, e.g. {"trigger.v2_scoring":true}' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string().min(1), z.boolean(), { error: 'must map flag names to booleans' }))
  .optional();

/** `publickeyv1_` and the base58 of a 32-byte Ed25519 public key. */
export const RESTATE_PUBLIC_KEY = /^publickeyv1_[1-9A-HJ-NP-Za-km-z]{40,50}$/;

// The Restate ingress and admin API: loopback or a private network only (every handler is callable there).
export const restateUrl = z
  .string()
  .trim()
  .regex(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { error: 'must be an http:// or https:// URL' })
  .transform((raw) => (raw.endsWith('/') ? raw : `${raw}/`))
  .optional();

/** Where the SDK can reach the media server: it needs a lower-case scheme it knows. */
export const mediaServerUrl = z
  .string()
  .trim()
  .regex(/^(wss?|https?):\/\/[^\s/]+/, { error: 'must be a ws://, wss://, http:// or https:// URL' })
  .optional();

const CREDENTIALS = new WeakSet<z.ZodType>();

/** Marks a setting whose value is a credential: an error about it never repeats the value, which may reach a shared log. */
export function credential<T extends z.ZodType>(schema: T): T {
  CREDENTIALS.add(schema);
  return schema;
}

export const isCredential = (schema: z.ZodType | undefined): boolean => schema !== undefined && CREDENTIALS.has(schema);
