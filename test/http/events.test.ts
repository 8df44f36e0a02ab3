import { describe, expect, it } from 'vitest';
import { HARNESS_SESSION, RAW_PAN, SESSION, clientJourney, legacyEvent, panSchema } from '../fixtures/client-events.js';
import { START_TIME, TEST_STORE, createHarness, restartAfterCrash } from '../support/harness.js';

const post = (h: ReturnType<typeof createHarness>, body: unknown) => h.http.post('/v1/events').send(body as object);

describe('POST /v1/events: what deployed clients send', () => {
  it('accepts every event of a real journey, for UUID and harness session ids and legacy SDKs', async () => {
    const h = createHarness();
    for (const event of [...clientJourney(SESSION), ...clientJourney(HARNESS_SESSION), legacyEvent]) {
      const res = await post(h, event);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.status).toBe('ok');
      expect(res.body.ingested_at).toBe(Math.floor(START_TIME / 1000));
    }
    expect(h.system.sessionHost.size).toBe(3);
  });

  it('answers unknown event types with a warning and still records them', async () => {
    const h = createHarness();
    const res = await post(h, { session_id: 's1', event: 'screen_state', screen: 'pan_details' });
    expect(res.body.warnings).toEqual(['unknown_event_type']);
    const known = await post(h, { session_id: 's1', event: 'identity' });
    expect(known.body.warnings).toBeUndefined();
    const activity = await h.http.get('/api/activity');
    expect(activity.body.items.map((i: { payload: { event: string } }) => i.payload.event)).toEqual([
      'screen_state',
      'identity',
    ]);
  });

  it('accepts null for optional fields, as some SDK builds send', async () => {
    const h = createHarness();
    const res = await post(h, {
      session_id: 's1',
      event: 'identity',
      user_id: null,
      screen: null,
      errors: null,
      masked: null,
      properties: null,
    });
    expect(res.status).toBe(200);
  });
});

describe('POST /v1/events: the session holds the event when the response arrives', () => {
  it("keeps a `__proto__` key as data, at the top and in properties, masked and never read as the event's own fields", async () => {
    const h = createHarness();
    // JSON.parse keeps `__proto__` as an own key; an object literal here would set the prototype instead.
    const body = `{"session_id":"s1","event":"component_input","__proto__":{"screen":"pan_details","hint":"${RAW_PAN}"},"properties":{"__proto__":{"note":"${RAW_PAN}"},"step":2}}`;
    const res = await h.http.post('/v1/events').set('content-type', 'application/json').send(body);
    expect(res.status).toBe(200);
    // With SQLite, also as kept across a crash.
    for (const harness of TEST_STORE === 'sqlite' ? [h, restartAfterCrash(h)] : [h]) {
      const session = (await harness.http.get('/api/sessions/s1')).body;
      const kept = session.latest_event as Record<string, unknown>;
      expect(Object.keys(kept)).toContain('__proto__');
      expect(kept['__proto__']).toEqual({ screen: 'pan_details', hint: '**********' });
      expect(kept.properties).toEqual(JSON.parse('{"__proto__":{"note":"**********"},"step":2}'));
      expect(JSON.stringify(session)).not.toContain(RAW_PAN);
      // The prototype's members are not the event's: no screen was sent.
      expect(session.screen).toBeNull();
    }
  });

  it('sets latest_event to the full payload, unknown fields included, and fills a missing timestamp', async () => {
    const h = createHarness();
    await post(h, {
      session_id: 's1',
      event: 'identity',
      user_id: 'u1',
      invoke_source: 'manual_start_assistant',
      sdk: { platform: 'android' },
    });
    const session = (await h.http.get('/api/sessions/s1')).body;
    expect(session.latest_event).toEqual({
      session_id: 's1',
      event: 'identity',
      user_id: 'u1',
      invoke_source: 'manual_start_assistant',
      sdk: { platform: 'android' },
      timestamp: Math.floor(START_TIME / 1000),
    });
    expect(session.user_id).toBe('u1');
    expect(session.active).toBe(false);
  });

  it('updates the screen only from payloads that carry one, screen_state included', async () => {
    const h = createHarness();
    await post(h, { session_id: 's1', event: 'screen_schema_lazy', screen: 'phone_entry' });
    await post(h, { session_id: 's1', event: 'identity' });
    expect((await h.http.get('/api/sessions/s1')).body.screen).toBe('phone_entry');
    await post(h, { session_id: 's1', event: 'screen_state', screen: 'PAN_DETAILS', screen_id: 'PAN_DETAILS' });
    const session = (await h.http.get('/api/sessions/s1')).body;
    expect(session.screen).toBe('PAN_DETAILS');
    expect(session.screen_id).toBe('PAN_DETAILS');
  });

  it('sets last_validation_failure from validation_failed, with the hint masked and its shape', async () => {
    const h = createHarness();
    const [failure] = clientJourney('s1').filter((e) => e.event === 'validation_failed');
    await post(h, failure);
    const session = (await h.http.get('/api/sessions/s1')).body;
    expect(session.last_validation_failure).toMatchObject({
      screen: 'pan_details',
      component_id: 'pan_field',
      errors: ['pan_invalid_format'],
      failure_reason_code: 'pan_invalid_format',
      validation_rule_id: 'pan_format_v1',
      expected_pattern: '[A-Z]{5}[0-9]{4}[A-Z]',
      hint: '**********',
      masked: true,
      masked_by: 'server',
      shape: { length: 10, digits: 0, letters: 10 },
    });
  });

  it('keeps the latest hint per component, masked, with pattern match from the registered schema', async () => {
    const h = createHarness();
    await post(h, { session_id: 's1', event: 'screen_schema', screen: 'pan_details', properties: panSchema });
    await post(h, {
      session_id: 's1',
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'pan_field',
      component_type: 'text_input',
      hint: 'ABC',
      masked: false,
    });
    await post(h, {
      session_id: 's1',
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'pan_field',
      component_type: 'text_input',
      hint: RAW_PAN,
      masked: false,
    });
    await post(h, {
      session_id: 's1',
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'terms_checkbox',
      component_type: 'checkbox',
      hint: 'checked',
      masked: false,
    });
    const hints = (await h.http.get('/api/sessions/s1')).body.component_hints;
    expect(hints).toHaveLength(2);
    expect(hints[0]).toMatchObject({
      component_id: 'pan_field',
      hint: '**********',
      masked: true,
      masked_by: 'server',
      shape: { length: 10, digits: 4, letters: 6, matches_pattern: true },
    });
    expect(hints[1]).toMatchObject({ component_id: 'terms_checkbox', hint: 'checked', masked: false });
    expect(hints[1].masked_by).toBeUndefined();
  });

  it('keeps small hint properties and drops large ones', async () => {
    const h = createHarness();
    await post(h, {
      session_id: 's1',
      event: 'component_input',
      component_id: 'a',
      component_type: 'checkbox',
      hint: 'checked',
      properties: { field_status: 'FILLED' },
    });
    await post(h, {
      session_id: 's1',
      event: 'component_input',
      component_id: 'b',
      component_type: 'checkbox',
      hint: 'checked',
      properties: { blob: 'x'.repeat(2000) },
    });
    const hints = (await h.http.get('/api/sessions/s1')).body.component_hints;
    expect(hints[0].properties).toEqual({ field_status: 'FILLED' });
    expect(hints[1].properties).toBeUndefined();
  });

  it('keeps at most 100 components, dropping the least recently updated', async () => {
    const h = createHarness();
    for (let i = 0; i < 105; i += 1) {
      await post(h, {
        session_id: 's1',
        event: 'component_input',
        component_id: `c${i}`,
        component_type: 'checkbox',
        hint: 'checked',
      });
    }
    const hints = (await h.http.get('/api/sessions/s1')).body.component_hints;
    expect(hints).toHaveLength(100);
    expect(hints[0].component_id).toBe('c5');
    expect(hints[99].component_id).toBe('c104');
  });
});

describe('POST /v1/events: schema registry', () => {
  it('records schema_push when a schema is registered or changed, nothing on an identical re-push', async () => {
    const h = createHarness();
    const push = (schema: object) =>
      post(h, { session_id: 's1', event: 'screen_schema', screen: 'pan_details', properties: schema });
    await push(panSchema);
    await push(panSchema);
    await push({ ...panSchema, display_name: 'PAN card' });
    const items = (await h.http.get('/api/activity?kind=schema_push')).body.items;
    expect(items).toHaveLength(2);
    expect(items[0].payload).toMatchObject({ screen_id: 'pan_details', replaced: false });
    expect(items[1].payload).toMatchObject({ screen_id: 'pan_details', replaced: true });
    expect(items[0].payload.schema_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(items[1].payload.schema_hash).not.toBe(items[0].payload.schema_hash);
    const session = (await h.http.get('/api/sessions/s1')).body;
    expect(session.schemas).toEqual([
      { screen_id: 'pan_details', schema_hash: items[1].payload.schema_hash, critical: false },
    ]);
  });

  it('keeps at most 32 screens and 256 KiB of schemas per session, dropping the oldest', async () => {
    // A session budget above the schema bound, so that this bound is the one tested.
    const h = createHarness({ env: { SESSION_MAX_BYTES: String(1024 * 1024) } });
    for (let i = 0; i < 34; i += 1) {
      await post(h, {
        session_id: 's1',
        event: 'screen_schema',
        properties: { screen_id: `screen_${i}`, components: [] },
      });
    }
    let held = (await h.http.get('/api/sessions/s1')).body.schemas.map((s: { screen_id: string }) => s.screen_id);
    expect(held).toHaveLength(32);
    expect(held[0]).toBe('screen_2');
    // Strings of at most 4096 characters: longer ones are dropped by the redaction pass.
    const bulky = (i: number) => ({
      screen_id: `big_${i}`,
      components: [],
      notes: Array.from({ length: 15 }, () => 'n'.repeat(4000)),
    });
    for (let i = 0; i < 6; i += 1) await post(h, { session_id: 's1', event: 'screen_schema', properties: bulky(i) });
    held = (await h.http.get('/api/sessions/s1')).body.schemas.map((s: { screen_id: string }) => s.screen_id);
    expect(held).toEqual(['big_2', 'big_3', 'big_4', 'big_5']);
  });

  it('stores nothing and announces nothing when integration.schema_registry is off', async () => {
    const h = createHarness({ env: { FEATURE_FLAGS: '{"integration.schema_registry":false}' } });
    await post(h, { session_id: 's1', event: 'screen_schema', screen: 'pan_details', properties: panSchema });
    expect((await h.http.get('/api/activity?kind=schema_push')).body.items).toEqual([]);
    expect((await h.http.get('/api/sessions/s1')).body.schemas).toEqual([]);
  });
});

describe('POST /v1/events: ids that are also JavaScript property names', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    'a screen and component named %s are plain data',
    async (name) => {
      const h = createHarness();
      const schema = {
        screen_id: name,
        components: [{ id: name, type: 'text_input', validations: [{ pattern: '[0-9]{4}' }] }],
      };
      expect(
        (await post(h, { session_id: 's1', event: 'screen_schema', screen: name, properties: schema })).status,
      ).toBe(200);
      expect(
        (
          await post(h, {
            session_id: 's1',
            event: 'component_input',
            screen: name,
            component_id: name,
            component_type: 'text_input',
            hint: '1234',
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await post(h, {
            session_id: 's2',
            event: 'component_input',
            screen: name,
            component_id: name,
            component_type: 'text_input',
            hint: '1234',
          })
        ).status,
      ).toBe(200);
      const session = (await h.http.get('/api/sessions/s1')).body;
      expect(session.schemas.map((s: { screen_id: string }) => s.screen_id)).toEqual([name]);
      expect(session.component_hints[0].shape.matches_pattern).toBe(true);
      expect((await h.http.get('/api/sessions/s2')).body.component_hints[0].shape).not.toHaveProperty(
        'matches_pattern',
      );
    },
  );
});

describe('POST /v1/events: bad input is refused, named, and changes nothing', () => {
  const cases: [string, () => unknown, number, RegExp][] = [
    ['missing session_id', () => ({ event: 'identity' }), 422, /^session_id: is required/],
    ['missing event', () => ({ session_id: 's1' }), 422, /^event: is required/],
    ['empty event', () => ({ session_id: 's1', event: '' }), 422, /^event: must not be empty/],
    ['event too long', () => ({ session_id: 's1', event: 'x'.repeat(65) }), 422, /^event: must be at most 64/],
    [
      'session_id with a slash',
      () => ({ session_id: '../etc', event: 'identity' }),
      422,
      /^session_id: must be 1-128 characters/,
    ],
    [
      'session_id too long',
      () => ({ session_id: 'a'.repeat(129), event: 'identity' }),
      422,
      /^session_id: must be 1-128/,
    ],
    ['session_id a number', () => ({ session_id: 42, event: 'identity' }), 422, /^session_id: must be a string/],
    [
      'timestamp a string',
      () => ({ session_id: 's1', event: 'identity', timestamp: '1795000000' }),
      422,
      /^timestamp: must be an integer/,
    ],
    [
      'timestamp fractional',
      () => ({ session_id: 's1', event: 'identity', timestamp: 1.5 }),
      422,
      /^timestamp: must be an integer/,
    ],
    [
      'timestamp negative',
      () => ({ session_id: 's1', event: 'identity', timestamp: -1 }),
      422,
      /^timestamp: must not be negative/,
    ],
    [
      'errors not an array',
      () => ({ session_id: 's1', event: 'validation_failed', errors: 'pan_invalid' }),
      422,
      /^errors: must be an array/,
    ],
    [
      'errors of numbers',
      () => ({ session_id: 's1', event: 'validation_failed', errors: [1] }),
      422,
      /^errors\.0: must be a string/,
    ],
    [
      'errors over 100 codes',
      () => ({ session_id: 's1', event: 'validation_failed', errors: Array.from({ length: 101 }, (_, i) => `e${i}`) }),
      422,
      /^errors: must hold at most 100 codes$/,
    ],
    [
      'masked a string',
      () => ({ session_id: 's1', event: 'component_input', masked: 'false' }),
      422,
      /^masked: must be a boolean/,
    ],
    [
      'properties an array',
      () => ({ session_id: 's1', event: 'identity', properties: [] }),
      422,
      /^properties: must be an object/,
    ],
    ['body an array', () => [{ session_id: 's1', event: 'identity' }], 422, /^body: must be a JSON object/],
    ['body a string', () => '"hello"', 422, /^body: must be a JSON object/],
    ['body null', () => 'null', 422, /^body: must be a JSON object/],
  ];

  it.each(cases)('%s → %i', async (_name, body, status, detail) => {
    const h = createHarness();
    const raw = body();
    const req = h.http.post('/v1/events').set('Content-Type', 'application/json');
    const res = await (typeof raw === 'string' ? req.send(raw) : req.send(raw as object));
    expect(res.status).toBe(status);
    expect(res.body.detail).toMatch(detail);
    expect(h.system.sessionHost.size).toBe(0);
    expect((await h.http.get('/api/activity')).body.items).toEqual([]);
  });

  it('malformed JSON → 400 without quoting the body', async () => {
    const h = createHarness();
    const res = await h.http
      .post('/v1/events')
      .set('Content-Type', 'application/json')
      .send(`{"session_id":"s1","hint":"${RAW_PAN}",`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'malformed JSON body' });
  });

  it('a body over 64 KiB → 413', async () => {
    const h = createHarness();
    const res = await post(h, { session_id: 's1', event: 'identity', properties: { blob: 'x'.repeat(70_000) } });
    expect(res.status).toBe(413);
    expect(res.body.detail).toBe('request body exceeds 64 KiB');
    expect(h.system.sessionHost.size).toBe(0);
  });

  it('a body that is not JSON → 415', async () => {
    const h = createHarness();
    const res = await h.http.post('/v1/events').set('Content-Type', 'text/plain').send('session_id=s1');
    expect(res.status).toBe(415);
    expect(res.body.detail).toBe('Content-Type must be application/json');
  });

  it('names every offending field at once', async () => {
    const h = createHarness();
    const res = await post(h, { event: 5, timestamp: 'now' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain('session_id: is required');
    expect(res.body.detail).toContain('event: must be a string');
    expect(res.body.detail).toContain('timestamp: must be an integer');
  });
});
