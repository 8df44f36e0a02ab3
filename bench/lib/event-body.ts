/**
 * The request every ingestion benchmark sends: a real `component_input` as deployed SDKs post it,
 * raw value and all, so the service does its full work (validation, redaction, session update,
 * activity). The baselines receive the same bytes.
 */
export function eventBody(sessionId: string): string {
  return JSON.stringify({
    user_id: 'user-42',
    session_id: sessionId,
    event: 'component_input',
    screen: 'pan_details',
    screen_id: 'pan_details',
    client_id: 'kycis_demo',
    mapping_version: 'v1',
    timestamp: 1_795_000_000,
    component_id: 'pan_field',
    component_type: 'text_input',
    hint: 'ABCDE1234F',
    masked: false,
    properties: { field_status: 'FILLED', semantic_slot: 'pan' },
    sdk: { sdk_name: 'kycis-android', sdk_version: '2.4.1', platform: 'android' },
  });
}

/**
 * What the service's front sends Restate for `eventBody` (remote-host.ts `ingest`): the same event
 * after validation and redaction, as a `session.ingest` command with the time it was taken. Sent
 * to the ingress directly, it costs the session object's handler what an ingested event does
 * without the front's work (bench/cluster-cpu.ts, target `ingestion sent to Restate directly`).
 */
export function ingestCommandBody(sessionId: string, at = Date.now()): string {
  return JSON.stringify({
    command: {
      type: 'session.ingest',
      event: {
        session_id: sessionId,
        event: 'component_input',
        user_id: 'user-42',
        timestamp: 1_795_000_000,
        screen: 'pan_details',
        screen_id: 'pan_details',
        component_id: 'pan_field',
        component_type: 'text_input',
        masked: true,
        client_id: 'kycis_demo',
        mapping_version: 'v1',
        properties: { field_status: 'FILLED', semantic_slot: 'pan' },
        sdk: { sdk_name: 'kycis-android', sdk_version: '2.4.1', platform: 'android' },
        hint: '******234F',
        masked_by: 'server',
        shape: { length: 10, digits: 4, letters: 6, kind: 'pan' },
      },
      at,
      trace: { trace_id: '4b3014065a2771cbf8e2f6b19572785f', request_id: `bench-${sessionId}-${at}` },
      sizes: { bytes: 491, propertiesBytes: 47 },
    },
  });
}

/** Session ids of a benchmark: `bench-<n>`, valid session_id characters. */
export const benchSessionId = (n: number): string => `bench-${n}`;

const FILLER = 'x'.repeat(30_000);

/**
 * A hostile-but-valid event: a `component_input` on one of 200 components with a 30 KB unknown
 * field, as a misbehaving SDK might send. Spread over sessions, it fills hints and latest events
 * with as much as a session will hold.
 */
export function stuffedEventBody(sessionId: string): string {
  const component = Math.floor(Math.random() * 200);
  return JSON.stringify({
    session_id: sessionId,
    event: 'component_input',
    screen: `screen-${component % 20}`,
    component_id: `field-${component}`,
    component_type: 'text_input',
    hint: `value-${Math.random().toString(36).slice(2)}`,
    properties: { field_status: 'FILLED', note: FILLER.slice(0, 900) },
    unknown_blob: FILLER,
  });
}

/** The screens a deployed Android SDK registers a schema for at the start of every session (docs/decisions/0017-what-the-deployed-sdks-do.md). */
const FIELD_SCREENS = [
  'phone_entry',
  'phone_otp',
  'email_entry',
  'email_otp',
  'pan_details',
  'personal_details',
  'address',
  'digilocker_aadhaar',
  'upload_aadhaar_front',
  'upload_aadhaar_back',
  'selfie',
  'signature',
  'home',
  'sdk_diagnostics',
];

/**
 * The events that give a session a deployed SDK's state: 14 screen schemas (three components each,
 * one validated) and 12 typed fields, about 17 KB of session state, the state every later event of
 * such a session carries.
 */
export function fieldSessionEvents(session_id: string): object[] {
  const schema = (screen: string) => ({
    screen_id: screen,
    display_name: screen.replaceAll('_', ' '),
    components: [
      {
        id: `${screen}_field`,
        type: 'text_input',
        required: true,
        display_name: 'Value',
        validations: [
          {
            rule_id: `${screen}_format_v1`,
            intent: 'format',
            pattern: '[A-Z]{5}[0-9]{4}[A-Z]',
            error_codes: ['invalid', 'required'],
            recovery_playbook_id: `${screen}_recovery`,
            description: 'Ten characters: five letters, four digits, one letter',
          },
        ],
      },
      { id: `${screen}_date`, type: 'date_picker', required: true, display_name: 'Date', validations: [] },
      { id: `${screen}_terms`, type: 'checkbox', required: true, display_name: 'Terms', validations: [] },
    ],
    next_screen_id: 'next',
    flow_order: 1,
  });
  return [
    ...FIELD_SCREENS.map((screen) => ({
      session_id,
      user_id: 'user-42',
      event: 'screen_schema',
      screen,
      screen_id: screen,
      properties: schema(screen),
    })),
    ...Array.from({ length: 12 }, (_, field) => ({
      session_id,
      event: 'component_input',
      screen: 'pan_details',
      screen_id: 'pan_details',
      component_id: `field_${field}`,
      component_type: 'text_input',
      hint: 'ABCDE1234F',
      masked: false,
      properties: { field_status: 'FILLED' },
    })),
  ];
}
