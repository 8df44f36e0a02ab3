import type { RegisteredSchema } from './screen-schema.js';
import { screenKey } from './screen-schema.js';

/** Decisions 4: the KYC steps where an idle user most likely needs help. `CRITICAL_STEPS` replaces them. */
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

/** Screen ids as the lookups compare them: apps send `PAN_DETAILS` and `pan_details` for one screen. */
export const criticalStepKeys = (steps: readonly string[]): string[] => [...new Set(steps.map(screenKey))];

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
  const key = screenKey(screen);
  return criticalSteps.includes(key) || (Object.hasOwn(schemas, key) && schemas[key]!.critical);
}
