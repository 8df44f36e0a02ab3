import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { advance, createHarness } from '../support/harness.js';

const S = 's-field';
const failure = (h: Harness, screen = 'pan_details', code = 'pan_invalid_format') =>
  h.http.post('/v1/events').send({
    session_id: S,
    user_id: 'u1',
    event: 'validation_failed',
    screen,
    errors: [code],
    component_id: 'pan_field',
    hint: 'INVALIDPAN',
    masked: false,
  });
const popup = async (h: Harness, body: Record<string, unknown> = {}) =>
  (await h.http.post('/v1/assistant/popup/evaluate').send({ session_id: S, ...body })).body;
const kinds = async (h: Harness, kind: string) =>
  (await h.http.get('/api/activity').query({ kind })).body.items as { payload: Record<string, unknown> }[];

describe('POST /v1/assistant/popup/evaluate on the simulated clock', () => {
  it('shows after a failure with what the knowledge base says the code means, then at most once per 45 s', async () => {
    const h = createHarness();
    await failure(h);
    const shown = await popup(h);
    expect(shown).toMatchObject({ show: true, popup_reason_code: 'validation_failed', delay_ms: 1500 });
    const meaning = h.system.agentContext.knowledgeBase.steps.pan_details!.failures.pan_invalid_format!.meaning;
    expect(shown.message).toBe(`${meaning} Need a hand? The assistant can help.`);
    expect(shown.message).not.toContain('INVALIDPAN');
    advance(h.clock, 44_000);
    await failure(h);
    expect(await popup(h)).toEqual({
      show: false,
      message: null,
      popup_reason_code: 'cooldown',
      delay_ms: 0,
      retry_after_seconds: 1,
    });
    advance(h.clock, 1_000);
    expect((await popup(h)).show).toBe(true);
    const evaluations = await kinds(h, 'popup_evaluate');
    expect(
      evaluations.map((item) => (item.payload.decision as { popup_reason_code: string }).popup_reason_code),
    ).toEqual(['validation_failed', 'cooldown', 'validation_failed']);
  });

  it('takes assistant_prompt_cooldown_seconds from the tenant override', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'popup-'));
    const file = join(dir, 'sdk.json');
    writeFileSync(
      file,
      JSON.stringify({
        kycis_demo: { thresholds: { assistant_prompt_cooldown_seconds: 10, error_window_seconds: 300 } },
      }),
    );
    const h = createHarness({ env: { SDK_CONFIG_FILE: file } });
    await failure(h);
    expect((await popup(h, { client_id: 'kycis_demo' })).show).toBe(true);
    advance(h.clock, 10_000);
    expect((await popup(h, { client_id: 'kycis_demo' })).show).toBe(true);
    // The failure is 10 s old: within this tenant's 300 s window, still shown after a further 200 s.
    advance(h.clock, 200_000);
    expect((await popup(h, { client_id: 'kycis_demo' })).popup_reason_code).toBe('validation_failed');
    const config = (await h.http.get('/v1/sdk/config').set('X-Client-ID', 'kycis_demo')).body;
    expect(config.thresholds).toMatchObject({ assistant_prompt_cooldown_seconds: 10, error_window_seconds: 300 });
    h.sdkConfig.close();
  });

  it('shows for idling on a critical step, with the step title, and not on another step', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send({ session_id: S, event: 'screen_state', screen: 'PAN_DETAILS' });
    expect((await popup(h)).popup_reason_code).toBe('none');
    advance(h.clock, 13_000);
    expect(await popup(h)).toMatchObject({
      show: true,
      popup_reason_code: 'idle_on_critical_step',
      delay_ms: 0,
      message: expect.stringContaining('PAN'),
    });
    await h.http.post('/v1/events').send({ session_id: 's-other', event: 'screen_state', screen: 'phone_entry' });
    expect(
      (await h.http.post('/v1/assistant/popup/evaluate').send({ session_id: 's-other', signals: { idle_seconds: 60 } }))
        .body.show,
    ).toBe(false);
  });

  it('never shows while voice is active, starting or stopping', async () => {
    const h = createHarness();
    await failure(h);
    await h.http.post('/v1/assistant/session/start').send({ session_id: S, screen: 'pan_details' });
    expect(await popup(h)).toMatchObject({ show: false, popup_reason_code: 'assistant_active' });
    await h.http.post('/v1/assistant/session/stop').send({ session_id: S });
    // The failure the call was about offers nothing once it ended; a new one does.
    expect((await popup(h)).show).toBe(false);
    await failure(h);
    expect((await popup(h)).show).toBe(true);
  });

  it('answers disabled when ui.dynamic_popups is off', async () => {
    const h = createHarness({ env: { FEATURE_FLAGS: '{"ui.dynamic_popups":false}' } });
    await failure(h);
    expect(await popup(h)).toEqual({ show: false, message: null, popup_reason_code: 'disabled', delay_ms: 0 });
  });

  it('POST /v1/assistant/evaluate answers both; an offer of voice holds the popup back', async () => {
    const h = createHarness();
    const first = (
      await h.http
        .post('/v1/assistant/evaluate')
        .send({ session_id: S, signals: { screen: 'pan_details', errors: ['pan_invalid_format'] } })
    ).body;
    expect(first).toMatchObject({
      session_id: S,
      trigger: { trigger: false, reason: 'none' },
      popup: { show: true, popup_reason_code: 'validation_failed' },
    });
    const second = (
      await h.http
        .post('/v1/assistant/evaluate')
        .send({ session_id: S, signals: { screen: 'pan_details', errors: ['pan_invalid_format'] } })
    ).body;
    expect(second).toMatchObject({
      trigger: { trigger: true, reason: 'repeated_errors' },
      popup: { show: false, popup_reason_code: 'voice_offered' },
    });
  });

  it('refuses a body without session_id with 422 naming it', async () => {
    const h = createHarness();
    const res = await h.http.post('/v1/assistant/popup/evaluate').send({ signals: {} });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain('session_id');
  });
});

describe('POST /v1/flows/set', () => {
  const steps = ['phone_entry', 'phone_otp', 'email_entry', 'email_otp', 'pan_details', 'personal_details'];

  it('needs flow_key (422 otherwise)', async () => {
    const h = createHarness();
    const res = await h.http.post('/v1/flows/set').send({ session_id: S, step_sequence: steps });
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe('flow_key: is required');
    expect(h.system.sessionHost.has(S)).toBe(false);
  });

  it('keeps the flow in the session: screen changes move progress, the system prompt shows the place, [] forgets it', async () => {
    const h = createHarness();
    const set = (
      await h.http.post('/v1/flows/set').send({
        session_id: S,
        flow_key: 'kyc',
        client_id: 'kycis_demo',
        step_sequence: steps,
        current_step: 'phone_entry',
      })
    ).body;
    expect(set.progress).toEqual({ position: 1, total: 6, percent: 17 });
    await h.http.post('/v1/events').send({ session_id: S, event: 'screen_state', screen: 'N_PAN_DETAILS' });
    const context = (await h.http.get(`/v1/assistant/context/${S}`)).body;
    expect(context.context.flow).toEqual({
      flow_key: 'kyc',
      total_steps: 6,
      progress: { position: 5, total: 6, percent: 83 },
    });
    expect(context.system_prompt).toContain('Flow progress: step 5 of 6 (83%)');
    const cleared = (await h.http.post('/v1/flows/set').send({ session_id: S, flow_key: 'kyc', step_sequence: [] }))
      .body;
    expect(cleared).toMatchObject({ flow_key: null, progress: null });
    expect((await h.http.get(`/v1/assistant/context/${S}`)).body.context.flow).toBeNull();
  });

  it('records flow_graph_recorded once per (client_id, flow_key), across sessions', async () => {
    const h = createHarness();
    for (const [session, client] of [
      ['a', 'kycis_demo'],
      ['b', 'kycis_demo'],
      ['c', 'other'],
    ]) {
      await h.http
        .post('/v1/flows/set')
        .send({ session_id: session, flow_key: 'kyc', client_id: client, step_sequence: steps });
    }
    const graphs = await kinds(h, 'flow_graph_recorded');
    expect(graphs.map((item) => item.payload.client_id).sort()).toEqual(['kycis_demo', 'other']);
  });

  it('answers null business facts for a step the knowledge base does not know', async () => {
    const h = createHarness();
    const res = (
      await h.http.post('/v1/flows/set').send({ session_id: S, flow_key: 'onboarding', current_step: 'home' })
    ).body;
    expect(res).toEqual({
      status: 'ok',
      session_id: S,
      flow_key: 'onboarding',
      business_step: null,
      validation_intent: null,
      progress: null,
    });
  });
});

describe('drop-off', () => {
  it('keeps only has_dialable_phone and the last 4 digits, never the number', async () => {
    const h = createHarness();
    const res = await h.http
      .post('/api/dropoff/register')
      .send({ session_id: S, user_id: 'u1', phone: '+91-98765-43210', reason: 'app_backgrounded' });
    expect(res.body).toEqual({ status: 'registered', session_id: S, has_dialable_phone: true });
    const [registered] = await kinds(h, 'dropoff_registered');
    expect(registered!.payload).toEqual({ has_dialable_phone: true, phone_last4: '3210', reason: 'app_backgrounded' });
    const everything = JSON.stringify([
      (await h.http.get(`/api/sessions/${S}`)).body,
      (await h.http.get('/api/activity')).body,
      h.logs.text,
    ]);
    expect(everything).not.toContain('98765');
  });

  it('feeds reengagement: channel phone when dialable, voice when not', async () => {
    const h = createHarness({ env: { REENGAGEMENT_INACTIVITY_SECONDS: '60' } });
    await h.http.post('/api/dropoff/register').send({ session_id: S, phone: '9876543210' });
    advance(h.clock, 61_000);
    expect((await h.http.get(`/api/reengagement/${S}`)).body).toMatchObject({ recommended: true, channel: 'phone' });
    await h.http.post('/api/dropoff/register').send({ session_id: 's2', phone: '12' });
    advance(h.clock, 61_000);
    expect((await h.http.get('/api/reengagement/s2')).body).toMatchObject({ recommended: true, channel: 'voice' });
  });

  it('is cancelled by cancel, or by the user coming back', async () => {
    const h = createHarness({ env: { REENGAGEMENT_INACTIVITY_SECONDS: '60' } });
    await h.http.post('/api/dropoff/register').send({ session_id: S, phone: '9876543210' });
    expect((await h.http.post('/api/dropoff/cancel').send({ session_id: S })).body).toEqual({
      status: 'cancelled',
      session_id: S,
      was_registered: true,
    });
    expect((await h.http.post('/api/dropoff/cancel').send({ session_id: S })).body.was_registered).toBe(false);
    await h.http.post('/api/dropoff/register').send({ session_id: S, phone: '9876543210' });
    await h.http.post('/v1/events').send({ session_id: S, event: 'screen_state', screen: 'pan_details' });
    advance(h.clock, 61_000);
    expect((await h.http.get(`/api/reengagement/${S}`)).body.recommended).toBe(false);
    expect((await kinds(h, 'dropoff_cancelled')).map((item) => item.payload.by).sort()).toEqual([
      'client',
      'user_returned',
    ]);
    expect((await h.http.post('/api/dropoff/cancel').send({ session_id: 'never-seen' })).status).toBe(404);
  });
});

describe('legacy session_id "unknown"', () => {
  it("is kept per user, so one user never reads another user's context", async () => {
    const h = createHarness();
    await h.http
      .post('/v1/events')
      .send({ session_id: 'unknown', user_id: 'alice', event: 'screen_state', screen: 'pan_details' });
    await h.http
      .post('/v1/events')
      .send({ session_id: 'UNKNOWN', user_id: 'bob', event: 'screen_state', screen: 'phone_entry' });
    await h.http
      .post('/v1/events')
      .send({ session_id: 'unknown', event: 'user_enrichment', properties: { user_id: 'carol', phone: '9876543210' } });
    expect((await h.http.get('/v1/assistant/context/unknown:alice')).body.current_screen).toBe('pan_details');
    const bob = (await h.http.get('/api/sessions/unknown:bob')).body;
    expect(bob).toMatchObject({ user_id: 'bob', screen: 'phone_entry' });
    expect(h.system.sessionHost.has('unknown:carol')).toBe(true);
    expect(h.system.sessionHost.has('unknown')).toBe(false);
  });

  it("starts and stops voice in the user's own session: two users never share a room, and one never stops the other's", async () => {
    const h = createHarness();
    await h.http
      .post('/v1/events')
      .send({ session_id: 'unknown', user_id: 'alice', event: 'screen_state', screen: 'pan_details' });
    const alice = await h.http.post('/v1/assistant/session/start').send({ session_id: 'unknown', user_id: 'alice' });
    expect(alice.status).toBe(200);
    expect(alice.body.session_id).toBe('unknown:alice');
    // Her start found the screen her events set.
    expect(alice.body.warnings).not.toContain('missing_screen_context');
    const bob = await h.http.post('/v1/assistant/session/start').send({ session_id: 'UNKNOWN', user_id: 'bob' });
    expect(bob.body.session_id).toBe('unknown:bob');
    expect(bob.body.livekit_room).not.toBe(alice.body.livekit_room);
    expect(bob.body.assistant_invocation_id).not.toBe(alice.body.assistant_invocation_id);
    await h.http.post('/v1/assistant/session/stop').send({ session_id: 'unknown', user_id: 'bob' }).expect(200);
    expect((await h.http.get('/api/sessions/unknown:alice')).body.state.voice).toBe('active');
    expect(h.system.sessionHost.has('unknown')).toBe(false);
    for (const path of ['/v1/assistant/session/start', '/v1/assistant/session/stop']) {
      const refused = await h.http.post(path).send({ session_id: 'unknown' });
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual({ detail: 'user_id: is required when session_id is "unknown"' });
    }
    expect(h.system.sessionHost.has('unknown')).toBe(false);
  });

  it.each([
    ['a space, a slash and a letter outside ASCII', 'john smith/é'],
    ['characters an id header may hold but a session id may not', 'team/a+b@x=1'],
    ['over the 120 characters a key has room for', 'u'.repeat(121)],
  ])('keys a user id with %s by its digest, so the session can be read back', async (_name, userId) => {
    const h = createHarness();
    await h.http
      .post('/v1/events')
      .send({ session_id: 'unknown', user_id: userId, event: 'screen_state', screen: 'pan_details' })
      .expect(200);
    const key = (await h.http.get('/api/activity').query({ kind: 'event' })).body.items[0].session_id as string;
    expect(key).toMatch(/^unknown:h-[0-9a-f]{24}$/);
    expect((await h.http.get(`/v1/assistant/context/${key}`)).body.current_screen).toBe('pan_details');
    expect((await h.http.get(`/api/sessions/${key}`)).status).toBe(200);
    // The same user lands in the same session.
    await h.http
      .post('/v1/events')
      .send({ session_id: 'unknown', user_id: userId, event: 'screen_state', screen: 'selfie_capture' })
      .expect(200);
    expect((await h.http.get(`/v1/assistant/context/${key}`)).body.current_screen).toBe('selfie_capture');
    expect(h.system.sessionHost.size).toBe(1);
  });

  it('is refused with 422 naming user_id when there is none, and changes nothing', async () => {
    const h = createHarness();
    const res = await h.http
      .post('/v1/events')
      .send({ session_id: 'unknown', event: 'validation_error', errors: ['phone_too_short'] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: 'user_id: is required when session_id is "unknown"' });
    expect(h.system.sessionHost.size).toBe(0);
  });
});

describe('the OpenAPI document', () => {
  it('documents every call of the field SDKs, with the schemas that validate them', async () => {
    const h = createHarness();
    const doc = (await h.http.get('/openapi.json')).body;
    const calls: [string, string][] = [
      ['post', '/v1/flows/set'],
      ['post', '/v1/assistant/popup/evaluate'],
      ['post', '/v1/assistant/evaluate'],
      ['get', '/v1/events/ws'],
      ['post', '/api/dropoff/register'],
      ['post', '/api/dropoff/cancel'],
    ];
    for (const [method, path] of calls) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    expect(doc.components.schemas.FlowSetIn.required).toEqual(['flow_key']);
    expect(Object.keys(doc.components.schemas.DynamicPopup.properties)).toEqual(
      expect.arrayContaining(['show', 'message', 'popup_reason_code', 'delay_ms']),
    );
    expect(doc.components.schemas.SdkConfig.properties.thresholds.properties).toHaveProperty('error_window_seconds');
    expect(doc.components.schemas.AssistantStartOut.required).toContain('assistant_invocation_id');
  });
});
