import { benchSessionId } from './event-body.js';

/**
 * Gives `count` sessions the state of a user stuck on the PAN screen: schema, hints with raw
 * values, a failure. The context a voice agent fetches for them is then a realistic size.
 */
export async function seedSessions(url: string, count: number): Promise<void> {
  const post = (body: object) =>
    fetch(`${url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((res) => {
      if (!res.ok) throw new Error(`seeding answered ${res.status}`);
    });
  const schema = {
    screen_id: 'pan_details',
    components: [{ id: 'pan_field', type: 'text_input', validations: [{ rule_id: 'pan_format_v1', pattern: '[A-Z]{5}[0-9]{4}[A-Z]', error_codes: ['pan_invalid_format'] }] }],
  };
  // Sixteen sessions at a time; each session's events stay in order.
  let next = 0;
  const seedOne = async (n: number) => {
    const session_id = benchSessionId(n);
    await post({ session_id, user_id: `user-${n}`, event: 'screen_schema', screen: 'pan_details', properties: schema });
    await post({ session_id, event: 'component_input', screen: 'pan_details', component_id: 'pan_field', component_type: 'text_input', hint: 'ABCDE1234F', masked: false });
    await post({ session_id, event: 'component_input', screen: 'pan_details', component_id: 'terms_checkbox', component_type: 'checkbox', hint: 'checked', masked: false });
    await post({ session_id, event: 'validation_failed', screen: 'pan_details', component_id: 'pan_field', component_type: 'text_input', errors: ['pan_invalid_format'], failure_reason_code: 'pan_invalid_format', hint: 'INVALIDPAN', masked: false });
  };
  const lane = async () => {
    while (next < count) await seedOne(next++);
  };
  await Promise.all(Array.from({ length: 16 }, lane));
}
