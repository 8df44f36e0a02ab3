/**
 * Where the settings build a deployment's privacy rules from. The rules themselves live in pii/,
 * one concept a file: kinds.ts, check-digits.ts, digit-runs.ts, patterns.ts, detectors.ts,
 * keys.ts, limits.ts, mask.ts, may-hold-identity.ts, scrub.ts, rules.ts.
 */
export type { PiiRules } from './pii/rules.js';
export { EXTRA_KEY_PATTERN } from './pii/keys.js';
export { createPiiRules } from './pii/rules.js';
