import fc from 'fast-check';
import type { IdentityValue } from './identity-values.js';
import {
  EVENT_TYPES,
  embed,
  identityValue,
  innerPath,
  nearMiss,
  nest,
  otpValue,
  plainKey,
  sensitiveKey,
} from './identity-values.js';

/**
 * Events of every type with identity values planted at random depths in random fields, and ids
 * that must stay readable in fields no value is planted in.
 */

export interface Planted {
  value: IdentityValue;
  /** The event as posted. */
  body: Record<string, unknown>;
  /** Near-miss ids and where they were put: they must come back unchanged. */
  readable: { screen_id: string; validation_rule_id: string; flow_key: string; errors: string[]; step: string };
}

type Place = (text: string, value: IdentityValue) => fc.Arbitrary<Record<string, unknown>>;

const CHOICE_TYPES = ['dropdown', 'DROPDOWN', 'checkbox', 'radio_button', 'switch', 'button', 'file_upload', 'camera'];
const TYPED_TYPES = ['text_input', 'pan', 'phone_number', 'date', 'date_picker', 'otp_input', undefined];

const places: Place[] = [
  // A top-level field the schema does not know.
  (text) => fc.tuple(plainKey, innerPath).map(([key, path]) => ({ [`${key}_extra`]: nest(path, text) })),
  // Anywhere under properties, as the old SDK and React Native send.
  (text) => fc.tuple(plainKey, innerPath).map(([key, path]) => ({ properties: { [key]: nest(path, text) } })),
  (text) => innerPath.map((path) => ({ properties: { data: nest(['data', ...path], text) } })),
  // Under an identity-named key, at any depth.
  (text) =>
    fc
      .tuple(sensitiveKey, fc.array(plainKey, { maxLength: 2 }))
      .map(([key, path]) => ({ properties: nest([...path, key], text) as Record<string, unknown> })),
  (text) => sensitiveKey.map((key) => ({ [key]: text })),
  // The hint of any component, masked or not by the client.
  (text) =>
    fc
      .tuple(fc.constantFrom(...CHOICE_TYPES, ...TYPED_TYPES), fc.constantFrom(true, false, undefined))
      .map(([type, masked]) => ({ hint: text, component_type: type, masked })),
  // Envelope fields a client fills in wrongly.
  (text) =>
    fc.constantFrom(
      { screen: text },
      { user_id: text },
      { failure_reason_code: text },
      { component_id: text },
      { client_id: text },
      { mapping_version: text.slice(0, 64) },
    ),
  // Keys, not values.
  (_text, value) => fc.constant({ properties: { [value.raw]: true } }),
  // A number rather than a string, as a careless SDK sends a phone.
  (text, value) =>
    fc.constant(/^\d{9,15}$/.test(value.raw) ? { properties: { n: Number(value.raw) } } : { properties: { n: text } }),
];

const OTP_PLACES = [
  (raw: string) => ({ component_id: 'phone_otp_field', component_type: 'otp_input', hint: raw, masked: false }),
  (raw: string) => ({ properties: { otp: raw } }),
  (raw: string) => ({ properties: { otp_code: raw } }),
  (raw: string) => ({ component_id: 'email_otp', properties: { entered: raw } }),
];

export const plantedEvent = (
  sessionId: fc.Arbitrary<string>,
  values: fc.Arbitrary<IdentityValue> = identityValue,
): fc.Arbitrary<Planted> =>
  fc
    .record({
      sessionId,
      type: fc.constantFrom(...EVENT_TYPES),
      value: fc.oneof({ weight: 9, arbitrary: values }, { weight: 1, arbitrary: otpValue }),
      readable: fc.record({
        screen_id: nearMiss,
        validation_rule_id: nearMiss,
        flow_key: nearMiss,
        errors: fc.array(nearMiss, { minLength: 1, maxLength: 3 }),
        step: nearMiss,
      }),
      placeIndex: fc.nat({ max: places.length - 1 }),
    })
    .chain(({ sessionId: id, type, value, readable, placeIndex }) => {
      const field =
        value.kind === 'otp'
          ? fc.constantFrom(...OTP_PLACES).map((place) => place(value.raw))
          : embed(value.raw).chain((text) => places[placeIndex]!(text, value));
      return field.map((fields) => {
        const { properties, ...rest } = fields as { properties?: Record<string, unknown> };
        const body: Record<string, unknown> = {
          session_id: id,
          event: type,
          screen_id: readable.screen_id,
          validation_rule_id: readable.validation_rule_id,
          flow_key: readable.flow_key,
          errors: readable.errors,
          ...rest,
          properties: { step: readable.step, ...properties },
        };
        return { value, body, readable };
      });
    });
