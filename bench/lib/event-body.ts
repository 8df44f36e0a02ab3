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
