import { describe, expect, it } from 'vitest';
import type { Harness, HarnessOptions } from '../support/harness.js';
import { START_TIME, createHarness } from '../support/harness.js';
import { harnessWithSdkConfig } from '../support/sdk-config-file.js';

type Item = {
  kind: string;
  session_id: string | null;
  user_id: string | null;
  payload: Record<string, unknown>;
  trace: { request_id: string };
};

/** A harness whose SDK_CONFIG_FILE holds `overrides`, when given. */
const harness = (options: HarnessOptions & { overrides?: unknown } = {}): Harness =>
  options.overrides === undefined ? createHarness(options) : harnessWithSdkConfig(options.overrides, options).h;

const evaluate = (h: Harness, body: unknown, headers: Record<string, string> = {}) =>
  h.http
    .post('/v1/assistant/trigger/evaluate')
    .set(headers)
    .send(body as object);

const ingest = (h: Harness, body: Record<string, unknown>) =>
  h.http.post('/v1/events').send({ event: 'screen_state', ...body });
const triggers = async (h: Harness): Promise<Item[]> => (await h.http.get('/api/activity?kind=trigger')).body.items;
const session = async (h: Harness, id: string) => (await h.http.get(`/api/sessions/${id}`)).body;

const REPEATED = { errors: ['pan_invalid', 'pan_invalid_format'] };

describe('POST /v1/assistant/trigger/evaluate without a session', () => {
  it('answers the policy alone and records a trigger activity with the signals and the decision', async () => {
    const h = harness();
    const res = await evaluate(
      h,
      { user_id: 'u1', signals: { screen: 'PAN_DETAILS', time_spent: 5, errors: [], idle_seconds: 13 } },
      { 'X-Request-ID': 'req-7' },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      trigger: true,
      reason: 'idle_on_critical_step',
      action: 'start_voice_agent',
      intervention_mode: 'voice_offer',
    });
    expect((await evaluate(h, { signals: { time_spent: 20 } })).body).toEqual({
      trigger: false,
      reason: 'none',
      action: 'none',
      intervention_mode: 'none',
    });

    const [first, second] = await triggers(h);
    expect(first).toMatchObject({
      kind: 'trigger',
      session_id: null,
      user_id: 'u1',
      payload: {
        signals: { screen: 'PAN_DETAILS', time_spent: 5, errors: [], idle_seconds: 13 },
        decision: res.body,
        client_id: null,
      },
      trace: { request_id: 'req-7' },
    });
    expect(second!.payload.decision).toMatchObject({ reason: 'none' });
    expect(h.system.sessionHost.size).toBe(0);
  });

  it('has no memory: the same signals fire every time', async () => {
    const h = harness();
    for (let i = 0; i < 3; i += 1) expect((await evaluate(h, { signals: REPEATED })).body.trigger).toBe(true);
  });

  it('accepts null signals as absent, as some SDK builds send', async () => {
    const h = harness();
    const res = await evaluate(h, {
      session_id: null,
      user_id: null,
      signals: { screen: null, time_spent: null, errors: null, idle_seconds: null },
    });
    expect(res.status).toBe(200);
    expect(res.body.reason).toBe('none');
  });
});

describe('POST /v1/assistant/trigger/evaluate in a session', () => {
  it('fills a missing screen from the session and attributes the activity to it', async () => {
    const h = harness();
    await ingest(h, { session_id: 's1', user_id: 'u1', screen: 'pan_details' });
    const res = await evaluate(h, { session_id: 's1', signals: { idle_seconds: 13 } });
    expect(res.body).toMatchObject({ trigger: true, reason: 'idle_on_critical_step' });
    const [item] = await triggers(h);
    expect(item).toMatchObject({
      session_id: 's1',
      user_id: 'u1',
      payload: { signals: { screen: 'pan_details', idle_seconds: 13 } },
    });
  });

  it('creates the session when it is unknown, since clients may evaluate before their first event', async () => {
    const h = harness();
    const res = await evaluate(h, { session_id: 'fresh', user_id: 'u9', signals: REPEATED });
    expect(res.body.trigger).toBe(true);
    const created = await session(h, 'fresh');
    expect(created.last_trigger_at).toBe(new Date(START_TIME).toISOString());
    expect(created.state.trigger).toBe('cooldown');
  });

  it('cools down for min_trigger_interval_seconds after a fired trigger, on the simulated clock', async () => {
    const h = harness();
    await ingest(h, { session_id: 's1', screen: 'pan_details' });
    expect((await evaluate(h, { session_id: 's1', signals: REPEATED })).body.trigger).toBe(true);

    h.clock.increment(20_000);
    const cooling = await evaluate(h, { session_id: 's1', signals: { screen: 'phone_otp', time_spent: 30 } });
    expect(cooling.body).toEqual({
      trigger: false,
      reason: 'cooldown',
      action: 'none',
      intervention_mode: 'none',
      suppressed_reason: 'high_time_spent',
      retry_after_seconds: 40,
    });
    h.clock.increment(39_999);
    expect(
      (await evaluate(h, { session_id: 's1', signals: { screen: 'phone_otp', time_spent: 30 } })).body,
    ).toMatchObject({ reason: 'cooldown', retry_after_seconds: 1 });
    expect((await session(h, 's1')).state.trigger).toBe('cooldown');

    h.clock.increment(1);
    expect((await session(h, 's1')).state.trigger).toBe('ready');
    const again = await evaluate(h, { session_id: 's1', signals: { screen: 'phone_otp', time_spent: 30 } });
    expect(again.body).toMatchObject({ trigger: true, reason: 'high_time_spent' });
    expect((await session(h, 's1')).last_trigger_at).toBe(new Date(START_TIME + 60_000).toISOString());
  });

  it('a command to the session leaves the cooldown running (touching presence resets no other region)', async () => {
    const h = harness();
    await evaluate(h, { session_id: 's1', signals: REPEATED });
    h.clock.increment(30_000);
    await ingest(h, { session_id: 's1', screen: 'email_otp' });
    await evaluate(h, { session_id: 's1', signals: {} });
    expect((await session(h, 's1')).state.trigger).toBe('cooldown');
    expect((await evaluate(h, { session_id: 's1', signals: REPEATED })).body).toMatchObject({
      reason: 'cooldown',
      retry_after_seconds: 30,
    });
  });

  it('answers none, not cooldown, when no rule matches during the cooldown', async () => {
    const h = harness();
    await evaluate(h, { session_id: 's1', signals: REPEATED });
    // On another screen: the failures held for the first one no longer count.
    expect(
      (await evaluate(h, { session_id: 's1', signals: { screen: 'email_entry', time_spent: 3 } })).body.reason,
    ).toBe('none');
  });

  it('prompts at most once per screen (case-insensitively) while allow_multiple_assistant_prompt is off', async () => {
    const h = harness();
    await evaluate(h, { session_id: 's1', signals: { screen: 'pan_details', ...REPEATED } });
    h.clock.increment(60_000);
    const repeat = await evaluate(h, { session_id: 's1', signals: { screen: 'PAN_DETAILS', time_spent: 25 } });
    expect(repeat.body).toEqual({
      trigger: false,
      reason: 'already_prompted',
      action: 'none',
      intervention_mode: 'none',
      suppressed_reason: 'high_time_spent',
    });
    expect(
      (await evaluate(h, { session_id: 's1', signals: { screen: 'email_otp', time_spent: 25 } })).body.trigger,
    ).toBe(true);
    expect(
      (await evaluate(h, { session_id: 's2', signals: { screen: 'pan_details', time_spent: 25 } })).body.trigger,
    ).toBe(true);
  });

  it('answers cooldown before already_prompted', async () => {
    const h = harness();
    await evaluate(h, { session_id: 's1', signals: { screen: 'pan_details', ...REPEATED } });
    expect((await evaluate(h, { session_id: 's1', signals: { screen: 'pan_details', ...REPEATED } })).body.reason).toBe(
      'cooldown',
    );
  });

  it('records every evaluation, suppressed ones included, and moves last_trigger_at only when one fires', async () => {
    const h = harness();
    await evaluate(h, { session_id: 's1', signals: REPEATED });
    h.clock.increment(5_000);
    await evaluate(h, { session_id: 's1', signals: REPEATED });
    await evaluate(h, { session_id: 's1', signals: { screen: 'email_entry' } });
    const items = await triggers(h);
    expect(items.map((item) => (item.payload.decision as { reason: string }).reason)).toEqual([
      'repeated_errors',
      'cooldown',
      'none',
    ]);
    expect(items[1]!.payload.decision).toMatchObject({ suppressed_reason: 'repeated_errors', retry_after_seconds: 55 });
    expect((await session(h, 's1')).last_trigger_at).toBe(new Date(START_TIME).toISOString());
  });

  it('keeps the session from idle eviction, like any command', async () => {
    const h = harness({ env: { SESSION_IDLE_TTL_SECONDS: '60' } });
    await ingest(h, { session_id: 's1' });
    h.clock.increment(50_000);
    await evaluate(h, { session_id: 's1', signals: {} });
    h.clock.increment(50_000);
    expect(h.system.sessionHost.has('s1')).toBe(true);
  });
});

describe('POST /v1/assistant/trigger/evaluate while a voice session runs', () => {
  const start = (h: Harness) =>
    h.http.post('/v1/assistant/session/start').send({ session_id: 's1', user_id: 'u1', screen: 'pan_details' });
  const stop = (h: Harness) => h.http.post('/v1/assistant/session/stop').send({ session_id: 's1' });

  it('answers assistant_active naming the matched rule, and fires again once the cooldown after the stop has passed', async () => {
    const h = harness();
    expect((await start(h)).status).toBe(200);
    const during = await evaluate(h, { session_id: 's1', signals: REPEATED });
    expect(during.body).toEqual({
      trigger: false,
      reason: 'assistant_active',
      action: 'none',
      intervention_mode: 'none',
      suppressed_reason: 'repeated_errors',
    });
    expect((await session(h, 's1')).last_trigger_at).toBeNull();

    expect((await stop(h)).status).toBe(200);
    const justAfter = await evaluate(h, { session_id: 's1', signals: REPEATED });
    expect(justAfter.body).toMatchObject({
      trigger: false,
      reason: 'cooldown',
      suppressed_reason: 'repeated_errors',
      retry_after_seconds: 60,
    });
    h.clock.increment(60_000);
    const after = await evaluate(h, { session_id: 's1', signals: REPEATED });
    expect(after.body).toMatchObject({ trigger: true, reason: 'repeated_errors', action: 'start_voice_agent' });
    const decisions = (await triggers(h)).map((item) => (item.payload.decision as { reason: string }).reason);
    expect(decisions).toEqual(['assistant_active', 'cooldown', 'repeated_errors']);
  });

  it("the failures the call was about are no reason to offer it again: a stop clears the screen's window", async () => {
    const h = harness();
    await ingest(h, { session_id: 's1', user_id: 'u1', screen: 'pan_details' });
    expect((await start(h)).status).toBe(200);
    // Two failures during the call, each evaluated as the SDK does: held back while voice runs.
    for (const code of ['pan_invalid', 'pan_format_error']) {
      await h.http
        .post('/v1/events')
        .send({ event: 'validation_failed', session_id: 's1', screen: 'pan_details', errors: [code] });
      expect((await evaluate(h, { session_id: 's1', signals: { errors: [code] } })).body.reason).toMatch(
        /none|assistant_active/,
      );
    }
    await stop(h);
    h.clock.increment(60_000);
    // A passive evaluation after the cooldown: nothing held counts, so nothing fires.
    expect((await evaluate(h, { session_id: 's1', signals: { errors: [], time_spent: 5 } })).body).toMatchObject({
      trigger: false,
      reason: 'none',
    });
    const popup = await h.http
      .post('/v1/assistant/popup/evaluate')
      .send({ session_id: 's1', signals: { errors: [], idle_seconds: 0 } });
    expect(popup.body).toMatchObject({ show: false });
    // A new failure after the call counts afresh, with the one sent beside it.
    await h.http
      .post('/v1/events')
      .send({ event: 'validation_failed', session_id: 's1', screen: 'pan_details', errors: ['pan_invalid'] });
    expect((await evaluate(h, { session_id: 's1', signals: { errors: ['pan_invalid'] } })).body.reason).toBe('none');
    await h.http
      .post('/v1/events')
      .send({ event: 'validation_failed', session_id: 's1', screen: 'pan_details', errors: ['pan_invalid'] });
    expect((await evaluate(h, { session_id: 's1', signals: { errors: ['pan_invalid'] } })).body).toMatchObject({
      trigger: true,
      reason: 'repeated_errors',
    });
  });

  it('a stop starts the cooldown again from the stop, after one a trigger began', async () => {
    const h = harness();
    expect((await evaluate(h, { session_id: 's1', signals: REPEATED })).body.trigger).toBe(true);
    await start(h);
    expect((await session(h, 's1')).state).toMatchObject({ voice: 'active', trigger: 'cooldown' });
    h.clock.increment(40_000);
    await stop(h);
    h.clock.increment(30_000);
    const res = await evaluate(h, { session_id: 's1', signals: { ...REPEATED, screen: 'personal_details' } });
    expect(res.body).toMatchObject({ trigger: false, reason: 'cooldown', retry_after_seconds: 30 });
    h.clock.increment(30_000);
    expect(
      (await evaluate(h, { session_id: 's1', signals: { ...REPEATED, screen: 'personal_details' } })).body.trigger,
    ).toBe(true);
  });

  it("a stop cools down for the tenant's min_trigger_interval_seconds; 0 means none", async () => {
    const h = harness({ overrides: { '*': { thresholds: { min_trigger_interval_seconds: 0 } } } });
    await start(h);
    await stop(h);
    expect((await evaluate(h, { session_id: 's1', signals: REPEATED })).body.trigger).toBe(true);
  });

  it('a stop of an inactive session starts no cooldown', async () => {
    const h = harness();
    await ingest(h, { session_id: 's1', user_id: 'u1', screen: 'pan_details' });
    await stop(h);
    expect((await evaluate(h, { session_id: 's1', signals: REPEATED })).body.trigger).toBe(true);
  });
});

describe("POST /v1/assistant/trigger/evaluate: the tenant's SDK config", () => {
  const overrides = {
    '*': { thresholds: { min_trigger_interval_seconds: 10 } },
    tenant_a: { thresholds: { high_time_spent_seconds: 100 } },
    tenant_b: { features: { allow_multiple_assistant_prompt: true, suppress_high_time_spent_trigger: true } },
  };
  const slow = { time_spent: 50 };

  it("uses the session's client_id first, then the body's, then X-Client-ID", async () => {
    const h = harness({ overrides });
    await ingest(h, { session_id: 'of_a', client_id: 'tenant_a' });
    expect((await evaluate(h, { session_id: 'of_a', signals: slow }, { 'X-Client-ID': 'tenant_c' })).body.reason).toBe(
      'none',
    );
    expect(
      (await evaluate(h, { session_id: 'by_header', signals: slow }, { 'X-Client-ID': 'tenant_a' })).body.reason,
    ).toBe('none');
    expect(
      (
        await evaluate(
          h,
          { session_id: 'by_body', client_id: 'tenant_a', signals: slow },
          { 'X-Client-ID': 'tenant_c' },
        )
      ).body.reason,
    ).toBe('none');
    expect((await evaluate(h, { signals: slow }, { 'X-Client-ID': 'tenant_a' })).body.reason).toBe('none');
    expect((await evaluate(h, { session_id: 'anyone', signals: slow })).body.reason).toBe('high_time_spent');
    const items = await triggers(h);
    expect(items.map((item) => item.payload.client_id)).toEqual(['tenant_a', 'tenant_a', 'tenant_a', 'tenant_a', null]);
  });

  it("an evaluation's user_id and client_id fill a session that has none, and never replace an event's", async () => {
    const h = harness({ overrides });
    await evaluate(h, { session_id: 'fresh', user_id: 'u1', client_id: 'tenant_a', signals: {} });
    expect(await session(h, 'fresh')).toMatchObject({ user_id: 'u1', client_id: 'tenant_a' });
    expect((await evaluate(h, { session_id: 'fresh', signals: slow })).body.reason).toBe('none');
    expect((await triggers(h)).at(-1)).toMatchObject({ user_id: 'u1', payload: { client_id: 'tenant_a' } });

    await ingest(h, { session_id: 'known', user_id: 'u2', client_id: 'tenant_b' });
    await evaluate(h, { session_id: 'known', user_id: 'someone_else', client_id: 'tenant_a', signals: {} });
    expect(await session(h, 'known')).toMatchObject({ user_id: 'u2', client_id: 'tenant_b' });
  });

  it('X-Client-ID names the tenant of one request only; it is not stored in the session', async () => {
    const h = harness({ overrides });
    expect((await evaluate(h, { session_id: 's1', signals: slow }, { 'X-Client-ID': 'tenant_a' })).body.reason).toBe(
      'none',
    );
    expect((await session(h, 's1')).client_id).toBeNull();
  });

  it('cools down for the tenant min_trigger_interval_seconds', async () => {
    const h = harness({ overrides });
    await evaluate(h, { session_id: 's1', signals: REPEATED });
    h.clock.increment(9_000);
    expect((await evaluate(h, { session_id: 's1', signals: { screen: 'x', ...REPEATED } })).body).toMatchObject({
      reason: 'cooldown',
      retry_after_seconds: 1,
    });
    h.clock.increment(1_000);
    expect((await evaluate(h, { session_id: 's1', signals: { screen: 'x', ...REPEATED } })).body.trigger).toBe(true);
  });

  it('prompts again on the same screen when allow_multiple_assistant_prompt is on, and honours suppress_high_time_spent_trigger', async () => {
    const h = harness({ overrides });
    const body = {
      session_id: 's1',
      client_id: 'tenant_b',
      signals: { screen: 'pan_details', time_spent: 500, ...REPEATED },
    };
    expect((await evaluate(h, body)).body.reason).toBe('repeated_errors');
    h.clock.increment(10_000);
    expect((await evaluate(h, body)).body).toMatchObject({ trigger: true, reason: 'repeated_errors' });
  });

  it('with min_trigger_interval_seconds 0 there is no cooldown', async () => {
    const h = harness({
      overrides: {
        '*': { features: { allow_multiple_assistant_prompt: true }, thresholds: { min_trigger_interval_seconds: 0 } },
      },
    });
    for (let i = 0; i < 3; i += 1)
      expect((await evaluate(h, { session_id: 's1', signals: REPEATED })).body.trigger).toBe(true);
    expect((await session(h, 's1')).state.trigger).toBe('ready');
  });
});

describe('POST /v1/assistant/trigger/evaluate: critical steps', () => {
  const idle = (screen: string) => ({ screen, idle_seconds: 13 });

  it('CRITICAL_STEPS replaces the default list', async () => {
    const h = harness({ env: { CRITICAL_STEPS: 'phone_entry, Email_Entry' } });
    expect((await evaluate(h, { signals: idle('EMAIL_ENTRY') })).body.reason).toBe('idle_on_critical_step');
    expect((await evaluate(h, { signals: idle('pan_details') })).body.reason).toBe('none');
  });

  it('a screen schema with critical: true makes its screen critical for that session only', async () => {
    const h = harness();
    await ingest(h, {
      session_id: 's1',
      event: 'screen_schema',
      properties: { screen_id: 'review_summary', critical: true, components: [] },
    });
    expect((await evaluate(h, { session_id: 's1', signals: idle('REVIEW_SUMMARY') })).body.reason).toBe(
      'idle_on_critical_step',
    );
    expect((await evaluate(h, { session_id: 's2', signals: idle('review_summary') })).body.reason).toBe('none');
    expect((await evaluate(h, { signals: idle('review_summary') })).body.reason).toBe('none');
  });

  it('no schema marks a screen critical while integration.schema_registry is off', async () => {
    const h = harness({ env: { FEATURE_FLAGS: '{"integration.schema_registry":false}' } });
    await ingest(h, {
      session_id: 's1',
      event: 'screen_schema',
      properties: { screen_id: 'review_summary', critical: true, components: [] },
    });
    expect((await evaluate(h, { session_id: 's1', signals: idle('review_summary') })).body.reason).toBe('none');
  });
});

describe('POST /v1/assistant/trigger/evaluate: bad input is refused, named, and changes nothing', () => {
  const cases: [string, unknown, RegExp][] = [
    [
      'negative time_spent',
      { session_id: 's1', signals: { time_spent: -1 } },
      /^signals\.time_spent: must not be negative/,
    ],
    // A 9-digit number would be read as an identity value and masked, and the signal lost without a word.
    [
      'time_spent past a year',
      { session_id: 's1', signals: { time_spent: 1e9 } },
      /^signals\.time_spent: must be at most 31536000 \(a year of seconds\)/,
    ],
    [
      'idle_seconds past a year',
      { session_id: 's1', signals: { idle_seconds: 31_536_001 } },
      /^signals\.idle_seconds: must be at most 31536000/,
    ],
    [
      'negative idle_seconds',
      { session_id: 's1', signals: { idle_seconds: -0.5 } },
      /^signals\.idle_seconds: must not be negative/,
    ],
    [
      'time_spent a string',
      { session_id: 's1', signals: { time_spent: '21' } },
      /^signals\.time_spent: must be a number/,
    ],
    [
      'idle_seconds a boolean',
      { session_id: 's1', signals: { idle_seconds: true } },
      /^signals\.idle_seconds: must be a number/,
    ],
    [
      'errors a string',
      { session_id: 's1', signals: { errors: 'pan_invalid' } },
      /^signals\.errors: must be an array of strings/,
    ],
    [
      'errors an object',
      { session_id: 's1', signals: { errors: { count: 2 } } },
      /^signals\.errors: must be an array of strings/,
    ],
    ['errors of numbers', { session_id: 's1', signals: { errors: [1, 2] } }, /^signals\.errors\.0: must be a string/],
    ['signals missing', { session_id: 's1' }, /^signals: is required/],
    ['signals an array', { session_id: 's1', signals: [] }, /^signals: must be an object/],
    ['screen a number', { session_id: 's1', signals: { screen: 5 } }, /^signals\.screen: must be a string/],
    ['session_id with a slash', { session_id: '../s1', signals: {} }, /^session_id: must be 1-128 characters/],
    ['body an array', [{ signals: {} }], /^body: must be a JSON object/],
  ];

  it.each(cases)('%s → 422', async (_name, body, detail) => {
    const h = harness();
    const res = await evaluate(h, body);
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(detail);
    expect(h.system.sessionHost.size).toBe(0);
    expect(await triggers(h)).toEqual([]);
  });

  it('an X-Client-ID that is not a plain id → 422', async () => {
    const h = harness();
    const res = await evaluate(h, { session_id: 's1', client_id: 'acme', signals: {} }, { 'X-Client-ID': 'a b<c>' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^X-Client-ID: must be 1-128 characters/);
    expect(h.system.sessionHost.size).toBe(0);
  });
});
