import { benchSessionId, fieldSessionEvents } from './event-body.js';

/** POST /v1/events, failing the benchmark on any answer but 2xx. */
const poster = (url: string) => (body: object) =>
  fetch(`${url}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((res) => {
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
    components: [
      {
        id: 'pan_field',
        type: 'text_input',
        validations: [
          { rule_id: 'pan_format_v1', pattern: '[A-Z]{5}[0-9]{4}[A-Z]', error_codes: ['pan_invalid_format'] },
        ],
      },
    ],
  };
  await inLanes(count, async (n) => {
    const session_id = benchSessionId(n);
    await post({ session_id, user_id: `user-${n}`, event: 'screen_schema', screen: 'pan_details', properties: schema });
    await post({
      session_id,
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'pan_field',
      component_type: 'text_input',
      hint: 'ABCDE1234F',
      masked: false,
    });
    await post({
      session_id,
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'terms_checkbox',
      component_type: 'checkbox',
      hint: 'checked',
      masked: false,
    });
    await post({
      session_id,
      event: 'validation_failed',
      screen: 'pan_details',
      component_id: 'pan_field',
      component_type: 'text_input',
      errors: ['pan_invalid_format'],
      failure_reason_code: 'pan_invalid_format',
      hint: 'INVALIDPAN',
      masked: false,
    });
  });
}

/** Gives `count` sessions a deployed SDK's state (`fieldSessionEvents`) through the API. */
export async function seedFieldSessions(url: string, count: number): Promise<void> {
  const post = poster(url);
  await inLanes(count, async (n) => {
    for (const body of fieldSessionEvents(benchSessionId(n))) await post(body);
  });
}
