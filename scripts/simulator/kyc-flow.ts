import type { Random } from './random.js';

/**
 * The `kyc_onboarding` workflow as deployed apps drive it (docs/decisions/0017-what-the-deployed-sdks-do.md): screens in
 * order, their components, validation rules and failure codes, and how a user's values look,
 * valid and not. Values are raw on purpose: many builds send them with `masked: false`.
 */
export interface ValidationRule {
  rule_id: string;
  pattern?: string;
  error_codes: string[];
  description: string;
}

export interface ComponentSpec {
  id: string;
  type: string;
  display_name: string;
  /** `properties.semantic_slot` the SDK sends with an input. */
  slot?: string;
  rule?: ValidationRule;
  /** What a user enters when it is right. */
  valid(random: Random): string;
  /** What a user enters when it is wrong, and the codes the app reports for it. */
  invalid?: (random: Random) => { value: string; codes: string[] };
  /** How the builds that mask on the device send it (`masked: true`). */
  clientMasked?: (raw: string) => string;
}

export interface ScreenSpec {
  id: string;
  display_name: string;
  components: ComponentSpec[];
}

const keepLast4 = (raw: string) => `${'*'.repeat(Math.max(0, raw.length - 4))}${raw.slice(-4)}`;
const maskAll = (raw: string) => '*'.repeat(raw.length);
const maskEmail = (raw: string) => raw.replace(/^(.)[^@]*/, '$1***');

const choice = (
  id: string,
  type: string,
  display_name: string,
  values: string[],
  failure?: { value: string; codes: string[] },
): ComponentSpec => ({
  id,
  type,
  display_name,
  valid: (random) => random.pick(values),
  ...(failure ? { invalid: () => failure } : {}),
});

const otp = (id: string, display_name: string, codes: string[]): ComponentSpec => ({
  id,
  type: 'otp_input',
  display_name,
  slot: 'otp',
  rule: {
    rule_id: `${id.replace(/_field$/, '')}_verify_v1`,
    pattern: '[0-9]{4}',
    error_codes: codes,
    description: 'The four-digit code sent to you',
  },
  valid: (random) => random.digits(4),
  invalid: (random) =>
    random.chance(0.5) ? { value: '0', codes: ['otp_incomplete'] } : { value: random.digits(4), codes: [codes[0]!] },
  clientMasked: maskAll,
});

const NAMES = ['Asha Verma', 'Rahul Iyer', 'Meera Nair', 'Vikram Singh', 'Priya Das', 'Arjun Menon'];

export const KYC_WORKFLOW: readonly ScreenSpec[] = [
  {
    id: 'phone_entry',
    display_name: 'Mobile number',
    components: [
      {
        id: 'phone_field',
        type: 'text_input',
        display_name: 'Mobile number',
        slot: 'phone',
        rule: {
          rule_id: 'phone_format_validation_v1',
          pattern: '[0-9]{10}',
          error_codes: ['phone_invalid', 'phone_too_short', 'phone_invalid_format'],
          description: 'Ten digits',
        },
        valid: (random) => `${random.int(6, 9)}${random.digits(9)}`,
        invalid: (random) =>
          random.chance(0.6)
            ? { value: random.digits(5), codes: ['phone_too_short'] }
            : { value: `+91-${random.digits(4)}`, codes: ['phone_invalid_format'] },
        clientMasked: keepLast4,
      },
    ],
  },
  {
    id: 'phone_otp',
    display_name: 'Verify mobile',
    components: [otp('phone_otp_field', 'OTP', ['phone_otp_invalid', 'phone_otp_expired', 'otp_incomplete'])],
  },
  {
    id: 'email_entry',
    display_name: 'E-mail',
    components: [
      {
        id: 'email_field',
        type: 'text_input',
        display_name: 'E-mail',
        slot: 'email',
        rule: { rule_id: 'email_format_v1', error_codes: ['email_invalid'], description: 'An e-mail address' },
        valid: (random) => `user${random.digits(4)}@example.com`,
        invalid: (random) => ({ value: `user${random.digits(4)}.example.com`, codes: ['email_invalid'] }),
        clientMasked: maskEmail,
      },
    ],
  },
  {
    id: 'email_otp',
    display_name: 'Verify e-mail',
    components: [otp('email_otp_field', 'E-mail OTP', ['email_otp_invalid', 'email_otp_expired', 'otp_incomplete'])],
  },
  {
    id: 'pan_details',
    display_name: 'PAN details',
    components: [
      {
        id: 'pan_field',
        type: 'text_input',
        display_name: 'PAN',
        slot: 'pan',
        rule: {
          rule_id: 'pan_format_v1',
          pattern: '[A-Z]{5}[0-9]{4}[A-Z]',
          error_codes: ['pan_invalid', 'pan_required', 'pan_invalid_format'],
          description: 'Five letters, four digits, one letter',
        },
        valid: (random) => `${random.letters(5)}${random.digits(4)}${random.letters(1)}`,
        invalid: (random) =>
          random.chance(0.7)
            ? { value: 'INVALIDPAN', codes: ['pan_invalid_format'] }
            : { value: random.letters(4), codes: ['pan_invalid'] },
        clientMasked: keepLast4,
      },
      {
        id: 'dob_field',
        type: 'date_picker',
        display_name: 'Date of birth',
        valid: (random) => `19${random.int(60, 99)}-0${random.int(1, 9)}-1${random.int(0, 9)}`,
      },
      choice('terms_checkbox', 'checkbox', 'Terms', ['checked'], { value: 'unchecked', codes: ['terms_not_accepted'] }),
    ],
  },
  {
    id: 'personal_details',
    display_name: 'Personal details',
    components: [
      {
        id: 'name_field',
        type: 'text_input',
        display_name: 'Full name',
        slot: 'name',
        rule: {
          rule_id: 'name_required_v1',
          error_codes: ['name_empty', 'required_field'],
          description: 'As on your PAN',
        },
        valid: (random) => random.pick(NAMES),
        invalid: () => ({ value: ' ', codes: ['name_empty'] }),
      },
      {
        id: 'father_name_field',
        type: 'text_input',
        display_name: "Father's name",
        slot: 'name',
        valid: (random) => random.pick(NAMES),
      },
      choice('gender_field', 'dropdown', 'Gender', ['female', 'male', 'other']),
      choice('marital_status_field', 'dropdown', 'Marital status', ['single', 'married']),
      choice('residency_status_field', 'dropdown', 'Residency', ['resident_indian', 'non_resident_indian']),
    ],
  },
  {
    id: 'verify_documents',
    display_name: 'Verify documents',
    components: [
      choice('document_choice', 'radio_button', 'How to verify', ['proceed_with_aadhaar', 'upload_documents']),
    ],
  },
  {
    id: 'digilocker_aadhaar',
    display_name: 'Aadhaar via DigiLocker',
    components: [
      {
        id: 'aadhaar_digilocker_field',
        type: 'text_input',
        display_name: 'Aadhaar number',
        slot: 'aadhaar',
        rule: {
          rule_id: 'aadhaar_length_v1',
          pattern: '[0-9]{12}',
          error_codes: ['aadhaar_invalid', 'aadhaar_incomplete'],
          description: 'Twelve digits',
        },
        valid: (random) => `${random.int(2, 9)}${random.digits(11)}`,
        invalid: (random) => ({ value: random.digits(3), codes: ['aadhaar_incomplete'] }),
        clientMasked: keepLast4,
      },
    ],
  },
  {
    id: 'upload_aadhaar_front',
    display_name: 'Aadhaar front',
    components: [
      choice('aadhaar_front', 'file_upload', 'Front side', ['file_uploaded.png'], {
        value: 'file_uploaded.png',
        codes: ['file_too_large'],
      }),
    ],
  },
  {
    id: 'upload_aadhaar_back',
    display_name: 'Aadhaar back',
    components: [
      choice('aadhaar_back', 'file_upload', 'Back side', ['file_uploaded.png'], {
        value: 'file_uploaded.png',
        codes: ['upload_failed'],
      }),
    ],
  },
  {
    id: 'selfie_capture',
    display_name: 'Selfie',
    components: [
      choice('selfie_capture', 'camera', 'Selfie', ['captured'], { value: 'captured', codes: ['face_not_detected'] }),
    ],
  },
  {
    id: 'signature',
    display_name: 'Signature',
    components: [choice('signature_submit', 'button', 'Sign', ['tapped'])],
  },
];

/** The `screen_schema` properties a screen registers (clients.md shape). */
export function screenSchema(screen: ScreenSpec, index: number): Record<string, unknown> {
  return {
    screen_id: screen.id,
    display_name: screen.display_name,
    components: screen.components.map((component) => ({
      id: component.id,
      type: component.type,
      required: true,
      display_name: component.display_name,
      validations: component.rule
        ? [
            {
              rule_id: component.rule.rule_id,
              intent: 'format',
              ...(component.rule.pattern ? { pattern: component.rule.pattern } : {}),
              error_codes: component.rule.error_codes,
              recovery_playbook_id: `${screen.id}_recovery`,
              description: component.rule.description,
            },
          ]
        : [],
    })),
    next_screen_id: KYC_WORKFLOW[index + 1]?.id ?? null,
    flow_order: index + 1,
  };
}
