import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { STAGES, STAGE_COMPONENTS, harnessEnvelope, schemaFor } from '../fixtures/field-sdk-sequences.js';
import type { Harness } from '../support/harness.js';
import { START_TIME, advance, createHarness, serve } from '../support/harness.js';
import { WsClient } from '../support/ws-client.js';

/**
 * The deployed SDKs' call sequences (docs/decisions/0017-what-the-deployed-sdks-do.md) played against the real service, asserting
 * what each client reads. Every answer is also checked not to be a 404: no call a client makes
 * may be unknown here.
 */
const servers: RunningServer[] = [];
const clients: WsClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const server of servers.splice(0)) await server.close(100);
});

/** Every status the replay saw, so a test can assert none was 404. */
function recorder(h: Harness) {
  const statuses: [string, number][] = [];
  const post = async (path: string, body: Record<string, unknown>) => {
    const res = await h.http.post(path).send(body);
    statuses.push([`POST ${path}`, res.status]);
    expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(200);
    return res.body as Record<string, unknown>;
  };
  const get = async (path: string) => {
    const res = await h.http.get(path);
    statuses.push([`GET ${path}`, res.status]);
    expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(200);
    return res.body as Record<string, unknown>;
  };
  return { post, get, statuses };
}

const activity = async (h: Harness, kind: string) =>
  (await h.http.get('/api/activity').query({ kind, limit: 1000 })).body.items as {
    payload: Record<string, unknown>;
    session_id: string | null;
  }[];

describe('done means: five failures in a row on pan_details, each evaluated with its one code', () => {
  const session = 'b3c2b0a4-2f7e-4e52-9d59-0c0d0e0f1a2b';

  it.each([
    ['each failure posted as an event, then evaluated with its code', true],
    ['each failure only in the evaluation', false],
  ])('%s: fire repeated_errors on the second, then are held back by cooldown', async (_name, withEvent) => {
    const h = createHarness();
    const calls = recorder(h);
    await calls.post('/v1/events', {
      session_id: session,
      user_id: 'demo-user',
      event: 'screen_state',
      screen: 'pan_details',
      screen_id: 'pan_details',
    });
    const answers: Record<string, unknown>[] = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      if (withEvent) {
        await calls.post('/v1/events', {
          session_id: session,
          user_id: 'demo-user',
          event: 'validation_failed',
          screen: 'pan_details',
          errors: ['pan_invalid_format'],
          failure_reason_code: 'pan_invalid_format',
          component_id: 'pan_field',
          component_type: 'pan',
          hint: 'INVALIDPAN',
          masked: false,
          properties: { error_code: 'pan_invalid_format', signal_strength: 'strong' },
        });
      }
      answers.push(
        await calls.post('/v1/assistant/trigger/evaluate', {
          user_id: 'demo-user',
          session_id: session,
          signals: { screen: 'pan_details', errors: ['pan_invalid_format'] },
        }),
      );
      advance(h.clock, 5_000);
    }
    expect(answers.map((answer) => [answer.trigger, answer.reason, answer.action])).toEqual([
      [false, 'none', 'none'],
      [true, 'repeated_errors', 'start_voice_agent'],
      [false, 'cooldown', 'none'],
      [false, 'cooldown', 'none'],
      [false, 'cooldown', 'none'],
    ]);
    expect(answers.slice(2).every((answer) => answer.suppressed_reason === 'repeated_errors')).toBe(true);
    // The session holds the five failures (each counted once) until the cooldown of the fired trigger ends.
    const held = (await calls.get(`/api/sessions/${session}`)).held_failures as {
      screen: string;
      codes: string[];
      restart_at: string;
    };
    expect(held).toEqual({
      screen: 'pan_details',
      codes: Array(5).fill('pan_invalid_format'),
      restart_at: new Date(START_TIME + 5_000 + 60_000).toISOString(),
    });
    expect(calls.statuses.filter(([, status]) => status === 404)).toEqual([]);
  });

  it('keeps the stateless path as docs/explanation/trigger-policy.md says: one code without a session never fires', async () => {
    const h = createHarness();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const res = await h.http
        .post('/v1/assistant/trigger/evaluate')
        .send({ signals: { screen: 'pan_details', errors: ['pan_invalid_format'] } });
      expect(res.body.reason).toBe('none');
    }
  });

  it('after the cooldown, the failures from before it no longer count: two new ones are needed', async () => {
    const h = createHarness({ env: { SDK_CONFIG_FILE: '' } });
    const evaluate = async () =>
      (
        await h.http
          .post('/v1/assistant/trigger/evaluate')
          .send({ session_id: session, signals: { screen: 'pan_details', errors: ['pan_invalid_format'] } })
      ).body;
    await evaluate();
    expect((await evaluate()).trigger).toBe(true);
    advance(h.clock, 61_000);
    expect((await evaluate()).reason).toBe('none');
    // allow_multiple_assistant_prompt is off by default: the second match on the screen is already_prompted.
    expect((await evaluate()).reason).toBe('already_prompted');
  });
});

describe('§17.2 the flow E2E harness, with its disposable session', () => {
  it('registers schemas and the workflow, walks the 12 stages with flows/set, failures, inputs and context', async () => {
    const h = createHarness();
    const calls = recorder(h);
    const session = 'harness-5d7a9f0e-1b2c-4d3e-8f90-a1b2c3d4e5f6';
    const user = 'harness-user-1a2b3c4d';
    const base = harnessEnvelope(session, user);
    for (const [order, stage] of STAGES.entries()) {
      await calls.post('/v1/events', {
        ...base,
        event: 'screen_schema',
        screen: stage,
        screen_id: stage,
        properties: schemaFor(stage, order),
      });
    }
    await calls.post('/v1/events', {
      ...base,
      event: 'workflow_model',
      properties: {
        workflow_name: 'kyc_onboarding',
        stages: STAGES.map((id, i) => ({ id, expected_next: STAGES[i + 1] ?? null })),
      },
    });
    for (const [index, stage] of STAGES.entries()) {
      await calls.post('/v1/events', { ...base, event: 'screen_state', screen: stage, screen_id: stage });
      const flow = await calls.post('/v1/flows/set', {
        user_id: user,
        session_id: session,
        flow_key: 'kyc',
        client_id: 'kycis_demo_harness',
        step_sequence: [...STAGES],
        current_step: stage,
      });
      expect(flow).toMatchObject({ status: 'ok', session_id: session, flow_key: 'kyc' });
      expect((flow.progress as { position: number }).position).toBe(index + 1);
      const component = STAGE_COMPONENTS[stage];
      if (component) {
        await calls.post('/v1/events', {
          ...base,
          event: 'validation_failed',
          screen: stage,
          screen_id: stage,
          errors: [component.code],
          failure_reason_code: component.code,
          component_id: component.id,
          component_type: component.type,
          hint: component.invalid,
          masked: false,
          ...(component.pattern ? { expected_pattern: component.pattern } : {}),
          validation_rule_id: component.rule,
          properties: { error_code: component.code, signal_strength: 'strong' },
        });
        await calls.post('/v1/events', {
          ...base,
          event: 'component_input',
          screen: stage,
          screen_id: stage,
          component_id: component.id,
          component_type: component.type,
          hint: component.valid,
          masked: false,
        });
      }
      const context = await calls.get(`/v1/assistant/context/${session}`);
      expect(context.current_screen).toBe(stage);
      expect((context.context as { flow: { progress: { position: number } } }).flow.progress.position).toBe(index + 1);
    }
    // pan_details is 5 of 12 (42%), with what the knowledge base says of it.
    const pan = await calls.post('/v1/flows/set', {
      user_id: user,
      session_id: session,
      flow_key: 'kyc',
      client_id: 'kycis_demo_harness',
      current_step: 'pan_details',
    });
    expect(pan).toEqual({
      status: 'ok',
      session_id: session,
      flow_key: 'kyc',
      business_step: 'kyc_verification',
      validation_intent: 'document_verification',
      progress: { position: 5, total: 12, percent: 42 },
    });
    const graphs = await activity(h, 'flow_graph_recorded');
    expect(graphs.map((item) => item.payload)).toEqual([
      { flow_key: 'kyc', client_id: 'kycis_demo_harness', total_steps: 12 },
    ]);
    expect(calls.statuses.filter(([, status]) => status === 404)).toEqual([]);
  });
});

describe('§17.1 the live Android app', () => {
  it('config, schemas, the socket, identity, setFlow, navigation with popups and control_state, a failure, voice, background and completion', async () => {
    const h = createHarness();
    const server = await serve(h);
    servers.push(server);
    const calls = recorder(h);
    const session = '7664f88e-4980-41c3-bec0-f0e1591ee548';
    const user = 'demo-user';

    // 1. init: config, schemas, workflow.
    const config = await calls.get('/v1/sdk/config');
    expect(config).toMatchObject({
      sdk_version: expect.any(String),
      defaults_version: expect.any(String),
      environment: 'production',
      source: 'merged',
      client_id: null,
    });
    expect(config.features).toMatchObject({
      component_input_hints_masked: true,
      use_websockets_for_control_plane: true,
    });
    expect(config.thresholds).toMatchObject({ assistant_prompt_cooldown_seconds: 45, error_window_seconds: 120 });
    const tenant = (await h.http.get('/v1/sdk/config').query({ client_id: 'kycis_demo' })).body;
    expect(tenant.client_id).toBe('kycis_demo');
    const envelope = {
      user_id: user,
      session_id: session,
      client_id: 'kycis_demo',
      mapping_version: 'v1',
      timestamp: 1_795_000_000,
      sdk_version: '2.0.0',
      client: 'android-sdk',
    };
    await calls.post('/v1/events', {
      ...envelope,
      event: 'screen_schema',
      screen: 'pan_details',
      screen_id: 'pan_details',
      properties: schemaFor('pan_details', 4),
    });
    await calls.post('/v1/events', {
      ...envelope,
      event: 'workflow_model',
      properties: { workflow_name: 'kyc_onboarding', stages: STAGES.map((id) => ({ id })) },
    });

    // 2. the socket (flag on), identity, setFlow("onboarding").
    const ws = await WsClient.open(`${server.url.replace('http', 'ws')}/v1/events/ws`);
    clients.push(ws);
    ws.send({
      type: 'connect',
      message_id: 'c-1',
      session_id: session,
      user_id: user,
      sdk_version: '1.2.0',
      client: 'android',
      client_id: 'kycis_demo',
    });
    expect(await ws.nextOfType('ack')).toMatchObject({ status: 'ok', detail: 'connected' });
    await calls.post('/v1/events', { ...envelope, event: 'identity', properties: { phone_masked: true } });
    const flow = await calls.post('/v1/flows/set', {
      user_id: user,
      session_id: session,
      flow_key: 'onboarding',
      client_id: 'kycis_demo',
    });
    expect(flow).toMatchObject({ status: 'ok', session_id: session, flow_key: 'onboarding' });

    // 3. navigation to pan_details: screen_state, analytics, popup evaluate, control_state.
    await calls.post('/v1/events', {
      ...envelope,
      event: 'screen_state',
      screen: 'pan_details',
      screen_id: 'pan_details',
    });
    await calls.post('/v1/events', {
      ...envelope,
      event: 'analytics_data',
      event_name: 'kyc_step_started',
      properties: { step: 'pan_details' },
    });
    const quiet = await calls.post('/v1/assistant/popup/evaluate', { user_id: user, session_id: session });
    expect(quiet).toEqual({ show: false, message: null, popup_reason_code: 'none', delay_ms: 0 });
    ws.send({
      type: 'control_state',
      message_id: 'cs-1',
      session_id: session,
      event: 'screen_state',
      screen: 'pan_details',
    });
    expect(await ws.nextOfType('ack', (f) => f.message_id === 'cs-1')).toMatchObject({
      status: 'ok',
      detail: 'screen_state',
    });

    // 4. Next with an invalid PAN: validation_failed, then the error-driven evaluation; the popup it earns.
    await calls.post('/v1/events', {
      ...envelope,
      event: 'validation_failed',
      screen: 'pan_details',
      errors: ['pan_invalid_format'],
      failure_reason_code: 'pan_invalid_format',
      component_id: 'pan_field',
      component_type: 'pan',
      hint: 'INVALIDPAN',
      masked: true,
      expected_pattern: '[A-Z]{5}[0-9]{4}[A-Z]',
    });
    const first = await calls.post('/v1/assistant/trigger/evaluate', {
      user_id: user,
      session_id: session,
      signals: { screen: 'pan_details', time_spent: 8, errors: ['pan_invalid_format'], idle_seconds: 1 },
    });
    expect(first).toMatchObject({ trigger: false, action: 'none' });
    const popup = await calls.post('/v1/assistant/popup/evaluate', { user_id: user, session_id: session });
    expect(popup).toMatchObject({ show: true, popup_reason_code: 'validation_failed', delay_ms: 1500 });
    expect(popup.message).not.toContain('INVALIDPAN');
    expect(await ws.nextOfType('command', (f) => f.command === 'show_popup')).toMatchObject({
      session_id: session,
      payload: { reason: 'validation_failed' },
    });

    // 5. passive loop over the socket: the second failure makes the session suggest voice.
    advance(h.clock, 10_000);
    await calls.post('/v1/events', {
      ...envelope,
      event: 'validation_failed',
      screen: 'pan_details',
      errors: ['pan_invalid_format'],
      component_id: 'pan_field',
    });
    ws.send({
      type: 'trigger_evaluate',
      message_id: 'te-1',
      session_id: session,
      user_id: user,
      signals: { screen: 'pan_details', time_spent: 18, errors: [], idle_seconds: 2 },
    });
    expect(await ws.nextOfType('trigger_response')).toMatchObject({
      message_id: 'te-1',
      trigger: true,
      reason: 'repeated_errors',
      action: 'suggest_start_voice_agent',
    });
    expect(await ws.nextOfType('command', (f) => f.command === 'suggest_start_voice_agent')).toMatchObject({
      payload: { reason: 'repeated_errors', intervention_mode: 'offer' },
    });

    // 6. accept: start (what the client reads), the agent's context, stop.
    const started = await calls.post('/v1/assistant/session/start', {
      user_id: user,
      session_id: session,
      screen: 'pan_details',
    });
    expect(started).toMatchObject({
      session_id: session,
      livekit_room: `kyc-room-${session}`,
      token: expect.any(String),
      assistant_invocation_id: expect.any(String),
    });
    const during = await calls.post('/v1/assistant/evaluate', { user_id: user, session_id: session });
    expect(during).toMatchObject({
      trigger: { trigger: false, reason: 'assistant_active' },
      popup: { show: false, popup_reason_code: 'assistant_active' },
    });
    const context = await calls.get(`/v1/assistant/context/${session}`);
    expect(context.current_screen).toBe('pan_details');
    await calls.post('/v1/assistant/session/stop', { user_id: user, session_id: session });
    const [startActivity] = await activity(h, 'session_start');
    expect(startActivity!.payload.assistant_invocation_id).toBe(started.assistant_invocation_id);

    // The app goes to the background with a known phone; completion cancels the drop-off.
    const registered = await calls.post('/api/dropoff/register', {
      session_id: session,
      user_id: user,
      phone: '+91 98765 43210',
      reason: 'app_backgrounded',
    });
    expect(registered).toEqual({ status: 'registered', session_id: session, has_dialable_phone: true });
    const cancelled = await calls.post('/api/dropoff/cancel', { session_id: session, user_id: user });
    expect(cancelled).toEqual({ status: 'cancelled', session_id: session, was_registered: true });
    await calls.post('/v1/events', {
      ...envelope,
      event: 'analytics_data',
      event_name: 'kyc_journey_completed',
      properties: { flow: 'onboarding' },
    });

    // The debug screen's feed.
    const feed = await calls.get('/api/activity');
    expect((feed.items as { kind: string }[]).map((item) => item.kind)).toEqual(
      expect.arrayContaining([
        'popup_evaluate',
        'trigger',
        'dropoff_registered',
        'dropoff_cancelled',
        'session_start',
        'session_stop',
      ]),
    );
    expect(JSON.stringify(feed)).not.toContain('98765');
    expect(calls.statuses.filter(([, status]) => status === 404)).toEqual([]);
  });
});

describe('§17.3 the React Native demo', () => {
  it('UPPERCASE steps, keystroke inputs, failures on Next, IMMEDIATE start and stop', async () => {
    const h = createHarness();
    const calls = recorder(h);
    const session = 'rn-0f4e3d2c-1b0a-4988-8776-655443322110';
    const user = 'demo-user';
    const event = (body: Record<string, unknown>) =>
      calls.post('/v1/events', { user_id: user, session_id: session, timestamp: 1_795_000_000, ...body });
    for (const step of ['HOME', 'PHONE_ENTRY', 'PHONE_OTP', 'EMAIL_ENTRY', 'EMAIL_OTP', 'PAN_DETAILS']) {
      await event({ event: 'screen_state', screen: step, screen_id: step });
      await event({ event: 'analytics_data', event_name: 'flow_started', properties: { flow: 'kyc' } });
    }
    for (const hint of ['ABCD****', 'ABCD****'])
      await event({
        event: 'component_input',
        screen: 'PAN_DETAILS',
        component_id: 'pan_number',
        component_type: 'text_input',
        hint,
        masked: true,
      });
    const answers = [];
    for (let attempt = 0; attempt < 2; attempt += 1) {
      await event({
        event: 'validation_failed',
        screen: 'PAN_DETAILS',
        errors: ['invalid_pan_format'],
        failure_reason_code: 'invalid_pan_format',
        component_id: 'pan_number',
        business_step: 'PAN_ENTRY',
        expected_pattern: '[A-Z]{5}[0-9]{4}[A-Z]',
      });
      answers.push(
        await calls.post('/v1/assistant/trigger/evaluate', {
          user_id: user,
          session_id: session,
          signals: { screen: 'PAN_DETAILS', errors: ['invalid_pan_format'] },
        }),
      );
    }
    expect(answers.map((answer) => answer.reason)).toEqual(['none', 'repeated_errors']);
    // Idle on the critical step, in the RN spelling and the legacy one.
    advance(h.clock, 61_000);
    const idle = await calls.post('/v1/assistant/trigger/evaluate', {
      user_id: user,
      session_id: session,
      signals: { screen: 'n_personal_details', idle_seconds: 20 },
    });
    expect(idle).toMatchObject({ trigger: true, reason: 'idle_on_critical_step' });
    const started = await calls.post('/v1/assistant/session/start', {
      user_id: user,
      session_id: session,
      screen: 'PAN_DETAILS',
    });
    expect(started.livekit_room).toBe(`kyc-room-${session}`);
    const context = await calls.get(`/v1/assistant/context/${session}`);
    expect((context.context as { kyc_kb: { step_id: string } }).kyc_kb.step_id).toBe('pan_details');
    await calls.post('/v1/assistant/session/stop', { user_id: user, session_id: session });
    expect(calls.statuses.filter(([, status]) => status === 404)).toEqual([]);
  });
});
