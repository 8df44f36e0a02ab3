/** What is masked beyond the built-in rules, and the key of the digests that stand for identity-looking ids. */
import { z } from 'zod';
import type { PiiRules } from '../privacy/rules.js';
import { EXTRA_KEY_PATTERN } from '../privacy/keys.js';
import { createPiiRules } from '../privacy/rules.js';
import { credential, csv } from './env-values.js';

export const privacyEnv = z.object({
  ID_DIGEST_SECRET: credential(z.string().trim().min(16, { error: 'must be at least 16 characters' }).optional()),
  // Keys masked whatever their value, on top of the built-in list (docs/explanation/privacy.md).
  PII_EXTRA_KEYS: csv
    .pipe(
      z
        .array(
          z.string().regex(EXTRA_KEY_PATTERN, {
            error:
              'must be a comma-separated list of field names (a letter, then letters, digits, _ or -; at most 64 characters each)',
          }),
        )
        .max(200, { error: 'must list at most 200 keys' }),
    )
    .optional(),
});

export interface PrivacySection {
  /** ID_DIGEST_SECRET: the key of the digests that stand for identity-looking session ids; unset, the store's own. */
  idDigestSecret: string | undefined;
  /** PII_EXTRA_KEYS as given. */
  piiExtraKeys: string[];
  /** The built-in key rules plus PII_EXTRA_KEYS (the text rule is one for all): what events, logs and inspection redact. */
  piiRules: PiiRules;
}

export function privacySection(e: z.infer<typeof privacyEnv>): PrivacySection {
  const piiExtraKeys = e.PII_EXTRA_KEYS ?? [];
  return { idDigestSecret: e.ID_DIGEST_SECRET, piiExtraKeys, piiRules: createPiiRules(piiExtraKeys) };
}
