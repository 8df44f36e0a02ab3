/**
 * Keys whose values are identity values whatever they look like, compared with case and
 * `_`/`-`/space ignored (`full_name`, `fullName`, `full-name`): an exact list, so
 * `display_name` or `component_id` stay readable.
 */
export const SENSITIVE_KEYS: readonly string[] = [
  'phone',
  'mobile',
  'phone_number',
  'mobile_number',
  'mobile_no',
  'phone_no',
  'msisdn',
  'alternate_phone',
  'email',
  'email_address',
  'email_id',
  'pan',
  'pan_number',
  'pan_no',
  'aadhaar',
  'aadhar',
  'aadhaar_number',
  'aadhar_number',
  'aadhaar_no',
  'uidai',
  'vid',
  'dob',
  'date_of_birth',
  'birth_date',
  'birthday',
  'otp',
  'otp_code',
  'pin',
  'password',
  'passcode',
  'account_number',
  'account_no',
  'bank_account',
  'bank_account_number',
  'ifsc',
  'ifsc_code',
  'upi_id',
  'vpa',
  'full_name',
  'first_name',
  'middle_name',
  'last_name',
  'father_name',
  'mother_name',
  'spouse_name',
  'legal_name',
  'address',
  'address_line1',
  'address_line2',
  'street',
  'permanent_address',
  'current_address',
  'passport',
  'passport_number',
  'passport_no',
  'voter_id',
  'epic',
  'epic_number',
  'driving_licence',
  'driving_license',
  'value',
  'input_value',
  'raw',
  'raw_value',
  'transcript',
  'hint',
  'text_value',
];

/**
 * A key ending in `name` holds a person's name (`name`, `customer_name`, `nomineeName`,
 * `account_holder_name`, `surname`) unless it names a thing: fail closed, since what a person is
 * called is an identity value however the field is spelt.
 */
export const NAME_KEY = /names?$/;

/** Words that say a field holds what someone is called, in English and Hindi. */
const NAME_WORDS = new Set(['name', 'names', 'naam', 'नाम']);

/**
 * The key's words, up to and including the first that is `name` (or `names`, `naam`, `नाम`:
 * `name_as_per_pan`, `nameOnCard`, `applicant_name_en`, `name1`), normalised; undefined when no
 * word is. A person's name is as often put first as last: the words before it say whose (or
 * what's) it is. Digits split words, as `name1` is the first of several names.
 */
export function throughNameWord(key: string): string | undefined {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{M}]+/u)
    .filter((word) => word !== '');
  const at = words.findIndex((word) => NAME_WORDS.has(word));
  return at < 0 ? undefined : words.slice(0, at + 1).join('');
}
export const THING_NAME_KEYS: readonly string[] = [
  'event_name',
  'screen_name',
  'display_name',
  'file_name',
  'filename',
  'component_name',
  'field_name',
  'flow_name',
  'step_name',
  'stage_name',
  'rule_name',
  'app_name',
  'device_name',
  'os_name',
  'host_name',
  'hostname',
  'bank_name',
  'branch_name',
  'city_name',
  'state_name',
  'district_name',
  'country_name',
  'package_name',
  'class_name',
  'room_name',
  'agent_name',
  'sdk_name',
  'platform_name',
  'browser_name',
  'model_name',
  'brand_name',
  'document_name',
  'doc_name',
  'document_type_name',
  'key_name',
  'queue_name',
  'service_name',
  'tag_name',
  'type_name',
  'variant_name',
  'experiment_name',
  'feature_name',
  'flag_name',
  'campaign_name',
  'network_name',
  'carrier_name',
  'product_name',
  'plan_name',
  'language_name',
  'locale_name',
  'popup_name',
  'button_name',
  'page_name',
  'activity_name',
  'view_name',
  'route_name',
  'track_name',
  'voice_name',
  'metric_name',
  'label_name',
  'schema_name',
  'workflow_name',
  'journey_name',
  'error_name',
  'exception_name',
  'method_name',
  'function_name',
  'module_name',
  'source_name',
  'channel_name',
];

/** Keys whose value, at a body's top level, is an opaque routing id the service itself depends on: never rewritten there. */
export const ROUTING_KEYS: readonly string[] = ['session_id'];

export const normalizeKey = (key: string) => key.toLowerCase().replace(/[\s_-]/g, '');

/** Extra keys must read as keys: a typo such as a stray comma should not silently match nothing. */
export const EXTRA_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9 _-]{0,63}$/;

/**
 * Words that say a field holds an identity value, whatever else the key says (docs/explanation/privacy.md,
 * "Keys and components"): `upi_pin`, `atmPin`, `cvv`, `otpInput`, `card_no`, `accountNumber`,
 * `residential_address`. Read as words of the key (camelCase, digits and separators split), and
 * `otp`, `cvv`, `mpin`, `upi` also at the start or end of a word (`enterotp`, `otpvalue`).
 */
const IDENTITY_WORDS = new Set([
  'address',
  'addr',
  'pin',
  'pincode',
  'otp',
  'cvv',
  'cvc',
  'mpin',
  'tpin',
  'upi',
  'vpa',
  'account',
  'acct',
  'card',
  'phone',
  'mobile',
  'msisdn',
  'email',
  'aadhaar',
  'aadhar',
  'uidai',
  'dob',
  'birth',
  'birthday',
  'passport',
  'voter',
  'epic',
  'ifsc',
  'password',
  'passcode',
  'licence',
  'license',
  'gstin',
  'uan',
  'ckyc',
  'iban',
  'ssn',
  'street',
]);
const IDENTITY_AFFIXES = ['otp', 'cvv', 'mpin', 'upi', 'aadhaar', 'aadhar', 'passcode', 'password'];

/** A key's words: camelCase, digits and every separator split, lower case. */
export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{M}]+/u)
    .filter((word) => word !== '');
}

/** Whether a key or a component's name says what it holds is an identity value (besides a person's name, which name keys say). */
export function saysIdentity(name: string): boolean {
  return keyWords(name).some(
    (word) =>
      IDENTITY_WORDS.has(word) ||
      IDENTITY_AFFIXES.some((affix) => word.length > affix.length && (word.startsWith(affix) || word.endsWith(affix))),
  );
}

/**
 * Fields whose value is an identifier or a code (docs/explanation/privacy.md, "What is kept"): shown as sent
 * when the text is one (identifier.ts), else masked whole, never read word by word.
 */
const IDENTIFIER_NAMES = new Set([
  'event',
  'traceparent',
  'screen',
  'screen_name',
  'component_type',
  'component_name',
  'failure_reason_code',
  'error_code',
  'reason_code',
  'errors',
  'mapping_version',
]);
/**
 * A version a client names (`notice_version`, `app_version`): kept when it reads as one, a year or
 * a small number first and dotted or dashed groups of up to three digits after (`2026-11`,
 * `1.4.2`, `v2.10.0-beta`); else judged as an identifier.
 */
export const isVersionField = (key: string): boolean =>
  key === 'version' || key.endsWith('_version') || /[a-z]Version$/.test(key);
/** An id proper: `id`, `*_id`, `*Id` (`user_id`, `request_id`, `message_id`), but a component's, which is a name. */
export const isIdField = (key: string): boolean =>
  (key === 'id' || key.endsWith('_id') || /[a-z]Id$/.test(key)) && key !== 'component_id' && key !== 'componentId';
/** Also every id: `id`, `*_id`, `*Id` (`user_id`, `request_id`, `message_id`, `component_id`). */
export const isIdentifierField = (key: string): boolean =>
  IDENTIFIER_NAMES.has(key) || key === 'id' || key.endsWith('_id') || /[a-z]Id$/.test(key) || isVersionField(key);
