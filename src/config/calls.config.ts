/**
 * Calls, consent and webhooks: where webhooks go, how they are signed, how long transcripts are kept
 * (docs/explanation/calls.md, docs/reference/webhooks.md).
 */
import { z } from 'zod';
import { invalidConfiguration } from './config-error.js';
import { credential, csv, nonNegativeInt } from './env-values.js';

/** A Standard Webhooks secret: `whsec_` and the base64 of at least 24 bytes. */
export const WEBHOOK_SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;

export const callsEnv = z.object({
  WEBHOOK_URL: csv
    .pipe(
      z
        .array(z.url({ protocol: /^https?$/, error: 'must be http(s) URLs, comma-separated' }))
        .max(10, { error: 'must list at most 10 URLs' }),
    )
    .optional(),
  // Two during a rotation: every message is signed with each (docs/reference/webhooks.md).
  WEBHOOK_SECRET: credential(
    csv
      .pipe(
        z
          .array(
            z
              .string()
              .regex(WEBHOOK_SECRET_PATTERN, { error: 'must be whsec_ followed by base64 of at least 24 bytes' }),
          )
          .min(1)
          .max(2, { error: 'must hold one secret, or two during a rotation' }),
      )
      .optional(),
  ),
  TRANSCRIPT_RETENTION_DAYS: nonNegativeInt(30),
  CALL_RESOLVE_WINDOW_MINUTES: nonNegativeInt(10).pipe(z.number().max(1440, { error: 'must be at most 1440 (a day)' })),
  CALL_SUMMARY_MODEL_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  CALL_SUMMARY_MODEL_API_KEY: credential(z.string().trim().optional()),
  CALL_SUMMARY_MODEL: z.string().trim().default('gpt-4o-mini'),
});

export interface CallsSection {
  /** WEBHOOK_URL: every message goes to each; empty, none is queued. */
  webhookUrls: string[];
  /** WEBHOOK_SECRET: one, or two during a rotation. */
  webhookSecrets: string[];
  /** TRANSCRIPT_RETENTION_DAYS: calls (transcripts and reports) ended longer ago are removed; 0 keeps them. */
  transcriptRetentionDays: number;
  /** CALL_RESOLVE_WINDOW_MINUTES: an ended call whose user moves past its step this long after it becomes resolved; 0, the outcome is decided at the end. */
  resolveWindowMinutes: number;
  /** CALL_SUMMARY_MODEL_*: an OpenAI-compatible `/chat/completions` that writes each call's summary from the masked transcript; undefined, the summary is composed from the record. */
  summaryModel: { baseUrl: string; apiKey: string | undefined; model: string } | undefined;
}

export function callsSection(e: z.infer<typeof callsEnv>): CallsSection {
  // An unsigned message could be sent by anyone: no address without a secret to sign for it.
  if ((e.WEBHOOK_URL ?? []).length > 0 && (e.WEBHOOK_SECRET ?? []).length === 0)
    throw invalidConfiguration(
      'WEBHOOK_URL is set without WEBHOOK_SECRET: set a secret (whsec_ and base64, docs/reference/webhooks.md)',
    );
  return {
    webhookUrls: e.WEBHOOK_URL ?? [],
    webhookSecrets: e.WEBHOOK_SECRET ?? [],
    transcriptRetentionDays: e.TRANSCRIPT_RETENTION_DAYS,
    resolveWindowMinutes: e.CALL_RESOLVE_WINDOW_MINUTES,
    summaryModel: e.CALL_SUMMARY_MODEL_BASE_URL
      ? { baseUrl: e.CALL_SUMMARY_MODEL_BASE_URL, apiKey: e.CALL_SUMMARY_MODEL_API_KEY, model: e.CALL_SUMMARY_MODEL }
      : undefined,
  };
}
