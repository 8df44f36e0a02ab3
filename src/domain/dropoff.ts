/**
 * A drop-off the SDK registered when the app went to the background. The phone number itself is
 * never kept: only whether it can be dialled and its last four digits (docs/decisions/0001-identity-values-masked-on-arrival.md).
 */
export interface Dropoff {
  registered_at: number;
  has_dialable_phone: boolean;
  phone_last4: string | null;
  reason: string | null;
}

/** E.164 allows 15 digits; national numbers in the field have 10. */
const DIALABLE_DIGITS = { min: 10, max: 15 };

export function phoneFacts(phone: string | null | undefined): {
  has_dialable_phone: boolean;
  phone_last4: string | null;
} {
  if (!phone) return { has_dialable_phone: false, phone_last4: null };
  const trimmed = phone.trim();
  // Digits with the usual separators and one leading +; anything else is not a phone number.
  const wellFormed = /^\+?[0-9 ()./-]+$/.test(trimmed);
  const digits = trimmed.replace(/\D/g, '');
  return {
    has_dialable_phone: wellFormed && digits.length >= DIALABLE_DIGITS.min && digits.length <= DIALABLE_DIGITS.max,
    phone_last4: wellFormed && digits.length >= 4 ? digits.slice(-4) : null,
  };
}
