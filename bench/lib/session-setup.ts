import { benchSessionId } from './event-body.js';

/** POST /v1/events, failing the benchmark on any answer but 2xx. */
const poster = (url: string) => (body: object) =>
  fetch(`${url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((res) => {
    if (!res.ok) throw new Error(`seeding answered ${res.status}`);
  });

/** Seeds sessions 0..count-1, sixteen at a time; each session's events stay in order. */
async function inLanes(count: number, seedOne: (n: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await seedOne(next++);
  };
  await Promise.all(Array.from({ length: 16 }, lane));
}

/**
 * Gives `count` sessions the state of a user stuck on the PAN screen: schema, hints with raw
 * values, a failure. The context a voice agent fetches for them is then a realistic size.
 */
export async function seedSessions(url: string, count: number): Promise<void> {
  const post = poster(url);
  const schema = {
    screen_id: 'pan_details',
    components: [{ id: 'pan_field', type: 'text_input', validations: [{ rule_id: 'pan_format_v1', pattern: '[A-Z]{5}[0-9]{4}[A-Z]', error_codes: ['pan_invalid_format'] }] }],
  };
  await inLanes(count, async (n) => {
    const session_id = benchSessionId(n);
    await post({ session_id, user_id: `user-${n}`, event: 'screen_schema', screen: 'pan_details', properties: schema });
    await post({ session_id, event: 'component_input', screen: 'pan_details', component_id: 'pan_field', component_type: 'text_input', hint: 'ABCDE1234F', masked: false });
    await post({ session_id, event: 'component_input', screen: 'pan_details', component_id: 'terms_checkbox', component_type: 'checkbox', hint: 'checked', masked: false });
    await post({ session_id, event: 'validation_failed', screen: 'pan_details', component_id: 'pan_field', component_type: 'text_input', errors: ['pan_invalid_format'], failure_reason_code: 'pan_invalid_format', hint: 'INVALIDPAN', masked: false });
  });
}

/** The screens a deployed Android SDK registers a schema for at the start of every session (field-sdk-contract.md §17.2). */
const FIELD_SCREENS = [
  'phone_entry', 'phone_otp', 'email_entry', 'email_otp', 'pan_details', 'personal_details', 'address',
  'digilocker_aadhaar', 'upload_aadhaar_front', 'upload_aadhaar_back', 'selfie', 'signature', 'home', 'sdk_diagnostics',
];

/**
 * Gives `count` sessions a deployed SDK's state: 14 screen schemas (three components each, one
 * validated) and 12 typed fields, about 17 KB of session state, the state every later event of
 * such a session carries.
 */
export async function seedFieldSessions(url: string, count: number): Promise<void> {
  const post = poster(url);
  const schema = (screen: string) => ({
    screen_id: screen,
    display_name: screen.replaceAll('_', ' '),
    components: [
      {
        id: `${screen}_field`,
        type: 'text_input',
        required: true,
        display_name: 'Value',
        validations: [{ rule_id: `${screen}_format_v1`, intent: 'format', pattern: '[A-Z]{5}[0-9]{4}[A-Z]', error_codes: ['invalid', 'required'], recovery_playbook_id: `${screen}_recovery`, description: 'Ten characters: five letters, four digits, one letter' }],
      },
      { id: `${screen}_date`, type: 'date_picker', required: true, display_name: 'Date', validations: [] },
      { id: `${screen}_terms`, type: 'checkbox', required: true, display_name: 'Terms', validations: [] },
    ],
    next_screen_id: 'next',
    flow_order: 1,
  });
  await inLanes(count, async (n) => {
    const session_id = benchSessionId(n);
    for (const screen of FIELD_SCREENS) await post({ session_id, user_id: 'user-42', event: 'screen_schema', screen, screen_id: screen, properties: schema(screen) });
    for (let field = 0; field < 12; field += 1) {
      await post({ session_id, event: 'component_input', screen: 'pan_details', screen_id: 'pan_details', component_id: `field_${field}`, component_type: 'text_input', hint: 'ABCDE1234F', masked: false, properties: { field_status: 'FILLED' } });
    }
  });
}
