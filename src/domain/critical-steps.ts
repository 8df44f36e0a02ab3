import type { RegisteredSchema } from './screen-schema.js';
import { screenKey } from './screen-schema.js';
import { normaliseStepId } from './step-id.js';

/** The KYC steps (docs/decisions/0005-trigger-policy.md) where an idle user most likely needs help. `CRITICAL_STEPS` replaces them. */
export const DEFAULT_CRITICAL_STEPS: readonly string[] = [
  'phone_otp',
  'email_otp',
  'pan_details',
  'personal_details',
  'digilocker_aadhaar',
  'upload_aadhaar_front',
  'upload_aadhaar_back',
  'selfie_capture',
  'signature',
];

/** Screen ids as the lookups compare them: apps send `PAN_DETAILS`, `pan_details` and `n_pan_details` for one screen. */
export const criticalStepKeys = (steps: readonly string[]): string[] => [
  ...new Set(steps.map((step) => normaliseStepId(step))),
];

/**
 * A screen is critical when the configured list names it or a schema this session registered
 * for it says `critical: true`.
 */
export function isCriticalStep(
  screen: string | null | undefined,
  criticalSteps: readonly string[],
  schemas: Readonly<Record<string, RegisteredSchema>> = {},
): boolean {
  if (!screen) return false;
  const schemaKey = screenKey(screen);
  if (Object.hasOwn(schemas, schemaKey) && schemas[schemaKey]!.critical) return true;
  return criticalSteps.includes(normaliseStepId(screen, (id) => criticalSteps.includes(id)));
}
