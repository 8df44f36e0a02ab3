import { describe, expect, it } from 'vitest';
import { RAW_AADHAAR, RAW_OTP, RAW_PAN, RAW_PHONE, clientJourney, panSchema } from '../fixtures/client-events.js';
import { createHarness } from '../support/harness.js';

/** Raw values that must never leave the process or reach a log once sent with masked:false. */
const RAW_VALUES = [RAW_PAN, RAW_PHONE, RAW_AADHAAR, 'INVALIDPAN'];

describe('redaction invariant: a raw masked:false value never appears in any response or log line', () => {
  it('holds across a whole journey, every read endpoint and every error path', async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    const bodies: string[] = [];
    const keep = (res: { text: string }) => bodies.push(res.text);

    for (const event of clientJourney('s1')) keep(await h.http.post('/v1/events').send(event));
    keep(
      await h.http.post('/v1/events').send({
        session_id: 's1',
        event: 'component_input',
        component_id: 'aadhaar_digilocker_field',
        component_type: 'text_input',
        hint: RAW_AADHAAR,
        masked: false,
      }),
    );
    keep(
      await h.http
        .post('/v1/events')
        .send({ session_id: 's1', event: 'component_input', component_id: 'x', hint: RAW_PAN }),
    );
    keep(await h.http.post('/v1/events').send({ session_id: 's1', event: 'screen_schema', properties: panSchema }));

    // Rejected requests carrying raw values: wrong types next to a raw hint, malformed JSON, oversize.
    keep(
      await h.http
        .post('/v1/events')
        .send({ session_id: 's1', event: 'component_input', hint: RAW_PAN, masked: 'false' }),
    );
    keep(
      await h.http.post('/v1/events').send({ session_id: RAW_PHONE + '/', event: 'component_input', hint: RAW_PHONE }),
    );
    keep(
      await h.http
        .post('/v1/events')
        .send({ session_id: 's1', event: 'component_input', hint: 42, component_id: RAW_PAN.repeat(30) }),
    );
    keep(await h.http.post('/v1/events').set('Content-Type', 'application/json').send(`{"hint":"${RAW_PAN}"`));
    keep(
      await h.http.post('/v1/events').send({ session_id: 's1', event: 'x', hint: RAW_PAN, pad: 'x'.repeat(70_000) }),
    );

    keep(await h.http.get('/v1/assistant/context/s1'));
    for (const path of ['/api/sessions/s1', '/api/activity?limit=1000', '/api/activity?session_id=s1', '/openapi.json'])
      keep(await h.http.get(path));

    const session = JSON.parse(bodies.at(-4)!);
    expect(session.component_hints.find((c: { component_id: string }) => c.component_id === 'pan_field').hint).toBe(
      '**********',
    );
    expect(session.latest_event.hint ?? '').not.toBe(RAW_PAN);

    const everything = [...bodies, h.logs.text].join('\n');
    expect(h.logs.lines.length).toBeGreaterThan(20);
    for (const raw of RAW_VALUES) expect(everything, raw).not.toContain(raw);
    // A 4-digit OTP is too short to search for as text; check it is masked where stored.
    expect(
      session.component_hints.find((c: { component_id: string }) => c.component_id === 'phone_otp_field').hint,
    ).toBe('****');
    expect(RAW_OTP).toHaveLength(4);
  });
});
