import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, waitFor } from 'xstate';
import type { FetchContextInput } from '../../src/machines/context-refresh.machine.js';
import { contextRefreshMachine } from '../../src/machines/context-refresh.machine.js';
import { BUNDLED_KB_FILE } from '../../src/integrations/knowledge-base.js';
import { RAW_PAN, USER, panSchema } from '../fixtures/client-events.js';
import type { Harness } from '../support/harness.js';
import { START_TIME, createHarness, settle } from '../support/harness.js';
import { MAX_HINT_CHARS } from '../../src/domain/sdk-event.js';

const post = (h: Harness, body: Record<string, unknown>) =>
  h.http.post('/v1/events').send({ session_id: 's1', user_id: USER, ...body });
const fetchContext = (h: Harness, sessionId = 's1') => h.http.get(`/v1/assistant/context/${sessionId}`);

/** Spec 6.4 steps 1-3 and 7 as the deployed apps send them: screen entry, input, failure, conversation turns. */
async function clientFlow(h: Harness): Promise<void> {
  await post(h, { event: 'screen_schema', screen: 'pan_details', screen_id: 'pan_details', properties: panSchema });
  await post(h, {
    event: 'component_input',
    screen: 'pan_details',
    component_id: 'pan_field',
    component_type: 'text_input',
    hint: RAW_PAN,
    masked: false,
  });
  await post(h, {
    event: 'component_input',
    screen: 'pan_details',
    component_id: 'terms_checkbox',
    component_type: 'checkbox',
    hint: 'checked',
    masked: false,
  });
  await post(h, {
    event: 'validation_failed',
    screen: 'pan_details',
    component_id: 'pan_field',
    component_type: 'text_input',
    errors: ['pan_invalid_format'],
    failure_reason_code: 'pan_invalid_format',
    validation_rule_id: 'pan_format_v1',
    expected_pattern: '[A-Z]{5}[0-9]{4}[A-Z]',
    hint: 'INVALIDPAN',
    masked: false,
  });
}

describe('GET /v1/assistant/context/{session_id}: fields as the agent reads them (retry counts, empty entries)', () => {
  const fail = (h: Harness, componentId: string, screen = 'pan_details') =>
    post(h, {
      event: 'validation_failed',
      screen,
      component_id: componentId,
      component_type: 'text_input',
      errors: [`${componentId}_invalid`],
      hint: 'x',
      masked: true,
    });

  it('counts the validation failures of each field, shows them in the context and the session, and tells the agent in the prompt', async () => {
    const h = createHarness();
    await post(h, {
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'pan_field',
      component_type: 'text_input',
      hint: RAW_PAN,
      masked: false,
    });
    await fail(h, 'pan_field');
    await fail(h, 'pan_field');
    await fail(h, 'dob_field');
    // A failure without a field counts for none.
    await post(h, { event: 'validation_failed', screen: 'pan_details', errors: ['generic'] });
    const { body } = await fetchContext(h);
    expect(body.context.retry_counts).toEqual({ pan_field: 2, dob_field: 1 });
    expect((await h.http.get('/api/sessions/s1')).body.retry_counts).toEqual({ pan_field: 2, dob_field: 1 });
    expect(body.system_prompt).toContain(
      '- "pan_field" ("text_input"): 10 characters (4 digits, 6 letters), reads as a PAN; failed validation 2 times.',
    );
    await fail(h, 'dob_field');
    await fail(h, 'pan_field');
    const after = (await fetchContext(h)).body.system_prompt as string;
    expect(after).toContain('This field has failed validation 3 times in this session.');
  });

  it("says an empty field is empty: no text, or the SDKs' __EMPTY__ marker, masked or not", async () => {
    const h = createHarness();
    await post(h, {
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'pan_field',
      component_type: 'text_input',
      hint: '',
      masked: true,
    });
    await post(h, {
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'dob_field',
      component_type: 'date',
      hint: '__EMPTY__',
      masked: false,
    });
    const prompt = (await fetchContext(h)).body.system_prompt as string;
    expect(prompt).toContain('- "pan_field" ("text_input"): nothing entered.');
    expect(prompt).toContain('- "dob_field" ("date"): nothing entered.');
  });

  it('reads a field id as data: `constructor` or `__proto__` count from zero', async () => {
    const h = createHarness();
    await fail(h, 'constructor');
    await fail(h, '__proto__');
    await fail(h, '__proto__');
    expect((await fetchContext(h)).body.context.retry_counts).toEqual({ constructor: 1, ['__proto__']: 2 });
  });

  it(`keeps at most ${32} fields, the longest untouched dropped first`, async () => {
    const h = createHarness();
    for (let field = 0; field < 40; field += 1) await fail(h, `f${field}`);
    await fail(h, 'f8');
    const counts = (await fetchContext(h)).body.context.retry_counts as Record<string, number>;
    expect(Object.keys(counts)).toHaveLength(32);
    expect(counts.f7).toBeUndefined();
    expect(Object.keys(counts).at(-1)).toBe('f8');
    expect(counts.f8).toBe(2);
  });
});

describe('GET /v1/assistant/context/{session_id}: the response', () => {
  it('after the client flow holds the screen, the masked hints and failure, the schema, the step knowledge and the policy', async () => {
    const h = createHarness();
    await clientFlow(h);
    const res = await fetchContext(h);
    expect(res.status).toBe(200);
    const { body } = res;
    expect(Object.keys(body).sort()).toEqual(['context', 'current_screen', 'session_id', 'system_prompt']);
    expect(body.session_id).toBe('s1');
    expect(body.current_screen).toBe('pan_details');
    const { context } = body;
    expect(Object.keys(context).sort()).toEqual(
      [
        'component_hints',
        'consent',
        'flow',
        'kyc_kb',
        'last_validation_failure',
        'latest_event',
        'refresh_policy',
        'retry_counts',
        'screen',
        'screen_schema',
        'voice_active',
      ].sort(),
    );
    expect(context.retry_counts).toEqual({ pan_field: 1 });
    expect(context.screen).toBe('pan_details');
    expect(context.component_hints).toEqual([
      expect.objectContaining({
        component_id: 'pan_field',
        hint: '**********',
        masked: true,
        masked_by: 'server',
        shape: { length: 10, digits: 4, letters: 6, kind: 'pan', matches_pattern: true },
      }),
      expect.objectContaining({ component_id: 'terms_checkbox', hint: 'checked', masked: false }),
    ]);
    expect(context.component_hints[0].updated_at).toBe(new Date(START_TIME).toISOString());
    expect(context.last_validation_failure).toMatchObject({
      screen: 'pan_details',
      component_id: 'pan_field',
      errors: ['pan_invalid_format'],
      hint: '**********',
      masked: true,
      shape: { length: 10, digits: 0, letters: 10, matches_pattern: false },
      at: new Date(START_TIME).toISOString(),
    });
    expect(context.latest_event).toMatchObject({ event: 'validation_failed', hint: '**********', masked: true });
    expect(context.screen_schema).toEqual(panSchema);
    expect(context.voice_active).toBe(false);
    expect(context.refresh_policy).toEqual({ interval_seconds: 60, on_user_turn: true, min_interval_seconds: 5 });
    expect(context.kyc_kb.step_id).toBe('pan_details');
    expect(context.kyc_kb.step.failures.pan_invalid_format.recovery).toMatch(/five letters, four digits, one letter/);
    expect(context.kyc_kb.general.journey).toHaveLength(12);
    expect(context.kyc_kb.steps).toBeUndefined();

    expect(body.system_prompt).toContain('Screen: "pan_details", the step "PAN details"');
    expect(body.system_prompt).toContain(context.kyc_kb.step.failures.pan_invalid_format.recovery);
    expect(body.system_prompt).toContain('10 characters (4 digits, 6 letters), matches the expected pattern');
    expect(body.system_prompt).not.toContain('******');
    for (const raw of [RAW_PAN, 'INVALIDPAN']) expect(res.text).not.toContain(raw);
  });

  it('answers 404 for an unknown session and creates none; 422 for an impossible id', async () => {
    const h = createHarness();
    const res = await fetchContext(h, 'nobody');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'session nobody not found' });
    expect(h.system.sessionHost.size).toBe(0);
    const bad = await h.http.get('/v1/assistant/context/a%20b');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^session_id: must be 1-128 characters/);
    expect((await h.http.get('/api/activity')).body.items).toEqual([]);
  });

  it('sees the screen of an event as soon as its POST has returned, in the case the app sent it', async () => {
    const h = createHarness();
    await clientFlow(h);
    await post(h, { event: 'screen_state', screen: 'PERSONAL_DETAILS', screen_id: 'PERSONAL_DETAILS' });
    const { body } = await fetchContext(h);
    expect(body.current_screen).toBe('PERSONAL_DETAILS');
    expect(body.context.kyc_kb.step_id).toBe('personal_details');
    expect(body.context.kyc_kb.step.title).toBe('Personal details');
    // The registered schema belongs to pan_details, not to this screen.
    expect(body.context.screen_schema).toBeNull();
    expect(body.system_prompt).toContain('On screen "pan_details" (an earlier screen)');
  });

  it('gives an unknown step the general part only', async () => {
    const h = createHarness();
    await post(h, { event: 'screen_state', screen: 'loan_offer' });
    const { body } = await fetchContext(h);
    expect(body.context.kyc_kb).toMatchObject({ step_id: null, step: null });
    expect(body.context.kyc_kb.general.rules.length).toBeGreaterThan(0);
    expect(body.system_prompt).toContain('not a step this assistant knows');
  });

  it('stays under the prompt cap with 100 components of the longest ids a client may send', async () => {
    // 100 such hints hold more than the default session budget: raised, so all 100 are there.
    const h = createHarness({ env: { SESSION_MAX_BYTES: String(1024 * 1024) } });
    for (let i = 0; i < 100; i += 1) {
      await post(h, {
        event: 'component_input',
        screen: 'pan_details',
        component_id: `${i}-${'c'.repeat(250)}`,
        component_type: 'text_input',
        hint: 'A1'.repeat(MAX_HINT_CHARS / 2),
        masked: false,
      });
    }
    await post(h, {
      event: 'validation_failed',
      screen: 'pan_details',
      component_id: '99',
      errors: Array.from({ length: 100 }, (_, i) => `e${i}`),
      hint: 'x'.repeat(MAX_HINT_CHARS),
    });
    const { body } = await fetchContext(h);
    expect(body.context.component_hints).toHaveLength(100);
    expect(body.system_prompt.length).toBeLessThanOrEqual(6000);
    expect(body.system_prompt).toMatch(/- and \d+ more fields not listed\./);
    const [item] = (await h.http.get('/api/activity?kind=voice_agent_context_fetch')).body.items;
    expect(item.payload.prompt_chars).toBe(body.system_prompt.length);
  });

  it('serves the VOICE_CONTEXT_REFRESH_* settings and the knowledge base of KYC_KB_FILE', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kyc-kb-'));
    try {
      const kb = JSON.parse(readFileSync(BUNDLED_KB_FILE, 'utf8')) as { version: string };
      const file = join(dir, 'kb.json');
      writeFileSync(file, JSON.stringify({ ...kb, version: 'tenant-7' }));
      const h = createHarness({
        env: {
          KYC_KB_FILE: file,
          VOICE_CONTEXT_REFRESH_SECONDS: '30',
          VOICE_CONTEXT_REFRESH_ON_USER_TURN: '0',
          VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: '10',
        },
      });
      await post(h, { event: 'identity' });
      const { body } = await fetchContext(h);
      expect(body.context.refresh_policy).toEqual({
        interval_seconds: 30,
        on_user_turn: false,
        min_interval_seconds: 10,
      });
      expect(body.context.kyc_kb.version).toBe('tenant-7');
      expect(body.current_screen).toBeNull();
      expect(body.system_prompt).toContain('Screen: unknown');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is documented in the OpenAPI document', async () => {
    const h = createHarness();
    const doc = (await h.http.get('/openapi.json')).body;
    const op = doc.paths['/v1/assistant/context/{session_id}'].get;
    expect(op.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/AgentContext',
    });
    expect(Object.keys(op.responses)).toEqual(['200', '401', '403', '404', '408', '422', '429', '503']);
    expect(doc.components.schemas.AgentContext.properties.context.properties.refresh_policy).toEqual({
      $ref: '#/components/schemas/RefreshPolicy',
    });
  });
});

describe('GET /v1/assistant/context/{session_id}: the session and the activity', () => {
  it('records voice_agent_context_fetch with the screen and prompt size, correlated with the request', async () => {
    const h = createHarness();
    await clientFlow(h);
    const res = await fetchContext(h)
      .set('X-Request-ID', 'agent-fetch-1')
      .set('traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    const items = (await h.http.get('/api/activity?session_id=s1')).body.items;
    const last = items.at(-1);
    expect(last).toMatchObject({
      kind: 'voice_agent_context_fetch',
      session_id: 's1',
      user_id: USER,
      payload: { screen: 'pan_details', kb_step: 'pan_details', prompt_chars: res.body.system_prompt.length },
      trace: { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', request_id: 'agent-fetch-1' },
    });
    expect(items.filter((item: { kind: string }) => item.kind === 'voice_agent_context_fetch')).toHaveLength(1);
  });

  it('changes nothing in the session: no update time, no user activity', async () => {
    const h = createHarness();
    await clientFlow(h);
    const before = (await h.http.get('/api/sessions/s1')).body;
    h.clock.increment(30_000);
    await fetchContext(h);
    expect((await h.http.get('/api/sessions/s1')).body).toEqual(before);
  });

  it('voice_conversation_turn events update the session without counting as user activity', async () => {
    const h = createHarness();
    await clientFlow(h);
    const activeAt = (await h.http.get('/api/sessions/s1')).body.last_user_activity_at;
    h.clock.increment(45_000);
    await post(h, {
      event: 'voice_conversation_turn',
      screen: 'pan_details',
      properties: { role: 'user', text_chars: 42 },
    });
    const session = (await h.http.get('/api/sessions/s1')).body;
    expect(session.last_user_activity_at).toBe(activeAt);
    expect(session.updated_at).toBe(new Date(START_TIME + 45_000).toISOString());
    const { body } = await fetchContext(h);
    expect(body.context.latest_event).toMatchObject({
      event: 'voice_conversation_turn',
      properties: { role: 'user', text_chars: 42 },
    });
    // The last failure is still the one the agent must help with.
    expect(body.context.last_validation_failure.errors).toEqual(['pan_invalid_format']);
  });
});

describe('a voice agent running the refresh machine against the service', () => {
  it('fetches on start, refreshes on a user turn after the minimum interval, and periodically, on one clock', async () => {
    const h = createHarness({
      env: { VOICE_CONTEXT_REFRESH_SECONDS: '20', VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: '3' },
    });
    await clientFlow(h);
    const screens: unknown[] = [];
    const fetchFromService = fromPromise<unknown, FetchContextInput>(async ({ input }) => {
      const res = await fetchContext(h, input.sessionId);
      if (res.status !== 200) throw new Error(`context fetch answered ${res.status}`);
      screens.push(res.body.current_screen);
      return res.body as unknown;
    });
    const agent = createActor(contextRefreshMachine.provide({ actors: { fetchContext: fetchFromService } }), {
      clock: h.clock,
      input: { sessionId: 's1' },
    });
    agent.start();
    const settled = (fetches: number) => waitFor(agent, (s) => s.matches('settled') && s.context.fetches === fetches);

    await settled(1);
    // The service's policy replaced the agent's defaults.
    expect(agent.getSnapshot().context.policy).toEqual({
      interval_seconds: 20,
      on_user_turn: true,
      min_interval_seconds: 3,
    });

    await post(h, { event: 'screen_state', screen: 'personal_details' });
    agent.send({ type: 'user.turn' });
    h.clock.increment(2_999);
    await settle();
    expect(agent.getSnapshot().value).toEqual({ settled: 'cooling' });
    h.clock.increment(1);
    expect(agent.getSnapshot().value).toBe('fetching');
    await settled(2);
    expect(screens).toEqual(['pan_details', 'personal_details']);

    h.clock.increment(20_000);
    await settled(3);
    expect(screens).toHaveLength(3);
    const fetchTimes = (await h.http.get('/api/activity?kind=voice_agent_context_fetch')).body.items.map(
      (item: { timestamp: string }) => Date.parse(item.timestamp) - START_TIME,
    );
    expect(fetchTimes).toEqual([0, 3_000, 23_000]);
    agent.stop();
  });
});
