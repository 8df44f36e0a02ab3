import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { components } from '../../src/client/schema.js';
import type { Harness } from '../support/harness.js';
import { START_TIME, createHarness, restartAfterCrash, tempDataDir } from '../support/harness.js';

const SESSION = 'call-s1';
const start = (h: Harness, body: Record<string, unknown> = {}) =>
  h.http.post('/v1/assistant/session/start').send({ session_id: SESSION, user_id: 'user-7', ...body });
const stop = (h: Harness) => h.http.post('/v1/assistant/session/stop').send({ session_id: SESSION });
const turn = (h: Harness, role: 'user' | 'agent', text: string, channel = 'voice') =>
  h.http
    .post('/v1/events')
    .send({ session_id: SESSION, event: 'voice_conversation_turn', properties: { role, channel, text } });
const consent = (h: Harness, decision: string, extra: Record<string, unknown> = {}) =>
  h.http
    .post('/v1/assistant/consent')
    .send({ session_id: SESSION, decision, notice_version: '2026-11', language: 'hi', ...extra });
const failOn = (h: Harness, screen: string, code: string) =>
  h.http.post('/v1/events').send({
    session_id: SESSION,
    user_id: 'user-7',
    event: 'validation_failed',
    screen,
    component_id: 'pan',
    errors: [code],
  });
type Call = components['schemas']['Call'];
const calls = async (h: Harness): Promise<[Call, ...Call[]]> =>
  (await h.http.get(`/api/sessions/${SESSION}/calls`).expect(200)).body.calls;

describe('the call record', () => {
  it('keeps a consented call: masked transcript with role, time and screen, places before and after, context versions, ended_by and the report', async () => {
    const h = createHarness();
    await failOn(h, 'PAN_DETAILS', 'invalid_pan');
    const started = await start(h).expect(200);
    await consent(h, 'given').expect(200);
    h.clock.increment(2_000);
    await turn(h, 'agent', 'Namaste, main aapki madad karungi.').expect(200);
    h.clock.increment(3_000);
    // A PAN said aloud: masked on arrival, never kept as said.
    await turn(h, 'user', 'my PAN is ABCPE1234F and it fails').expect(200);
    await h.http.get(`/v1/assistant/context/${SESSION}`).expect(200);
    await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, event: 'screen_schema_lazy', screen: 'aadhaar_otp' })
      .expect(200);
    await h.http.get(`/v1/assistant/context/${SESSION}`).expect(200);
    h.clock.increment(60_000);
    await stop(h).expect(200);

    const [call] = await calls(h);
    expect(call).toMatchObject({
      call_id: started.body.assistant_invocation_id,
      session_id: SESSION,
      user_id: 'user-7',
      started_at: new Date(START_TIME).toISOString(),
      ended_by: 'client',
      start: { screen: 'PAN_DETAILS', step: 'pan_details', errors: ['invalid_pan'] },
      end: { screen: 'aadhaar_otp', step: 'aadhaar_otp', errors: [] },
      turns: { user: 1, agent: 1 },
      transcript_kept: true,
      handoff: null,
      report: {
        duration_ms: 65_000,
        turns: { user: 1, agent: 1 },
        outcome: 'resolved',
        reason: 'moved_past_step',
        step: 'pan_details',
        summary_source: 'record',
      },
    });
    expect(call.context_versions).toHaveLength(2);
    expect(call.context_versions[0]).not.toBe(call.context_versions[1]);
    expect(call.transcript).toEqual([
      {
        role: 'agent',
        channel: 'voice',
        text: 'Namaste, main aapki madad karungi.',
        at: new Date(START_TIME + 2_000).toISOString(),
        screen: 'PAN_DETAILS',
      },
      {
        role: 'user',
        channel: 'voice',
        text: expect.not.stringContaining('ABCPE1234F'),
        at: new Date(START_TIME + 5_000).toISOString(),
        screen: 'PAN_DETAILS',
      },
    ]);
    expect(call.report!.summary).toContain('pan_details');
    expect(call.report!.summary).toContain('invalid_pan');
    expect((await h.http.get(`/api/calls/${call.call_id}`).expect(200)).body).toEqual(call);
  });

  it("gives a turn's activity item its role and masked text", async () => {
    const h = createHarness();
    await start(h).expect(200);
    await turn(h, 'user', 'my PAN is ABCPE1234F', 'chat').expect(200);
    const items = (await h.http.get(`/api/activity?session_id=${SESSION}&kind=event`)).body.items as {
      payload: Record<string, unknown>;
    }[];
    expect(items.at(-1)!.payload).toMatchObject({
      event: 'voice_conversation_turn',
      role: 'user',
      channel: 'chat',
      text: expect.stringContaining('my PAN is'),
    });
    expect(JSON.stringify(items)).not.toContain('ABCPE1234F');
  });

  it('keeps no words without consent, and stops keeping them (dropping what the call kept) on withdrawal', async () => {
    const h = createHarness();
    await start(h).expect(200);
    await turn(h, 'user', 'said before any consent').expect(200);
    await consent(h, 'refused').expect(200);
    await turn(h, 'user', 'said after a refusal').expect(200);
    expect((await calls(h))[0]).toMatchObject({ transcript: [], turns: { user: 2, agent: 0 }, transcript_kept: false });

    await consent(h, 'given').expect(200);
    await turn(h, 'user', 'said with consent').expect(200);
    expect((await calls(h))[0].transcript.map((t: { text: string }) => t.text)).toEqual(['said with consent']);

    await consent(h, 'withdrawn').expect(200);
    await turn(h, 'user', 'said after withdrawal').expect(200);
    await stop(h).expect(200);
    const [call] = await calls(h);
    expect(call).toMatchObject({
      transcript: [],
      transcript_kept: false,
      turns: { user: 4, agent: 0 },
      report: { outcome: 'unresolved', reason: 'still_on_step' },
    });
  });

  it('records the consent append-only: every decision in order, and the database refuses to alter one', async () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    await start(h).expect(200);
    for (const decision of ['given', 'withdrawn', 'given']) await consent(h, decision).expect(200);
    const book = h.system.calls!;
    expect(book.consents(SESSION).map((entry) => entry.decision)).toEqual(['given', 'withdrawn', 'given']);
    expect(book.consents(SESSION)[0]).toMatchObject({
      notice_version: '2026-11',
      language: 'hi',
      user_id: 'user-7',
      at: START_TIME,
    });
    expect(() => book.db.exec("UPDATE consents SET decision = 'refused'")).toThrow(/append-only/);
    const items = (await h.http.get(`/api/activity?session_id=${SESSION}&kind=consent`)).body.items;
    expect(items).toHaveLength(3);
  });

  it("hands the agent its tenant's consent notice and version in the context", async () => {
    const h = createHarness();
    await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, event: 'screen_schema_lazy', screen: 'pan_details', client_id: 'bank-a' })
      .expect(200);
    const { body } = await h.http.get(`/v1/assistant/context/${SESSION}`).expect(200);
    expect(body.context.consent).toMatchObject({
      notice_version: 'default-1',
      notice: { en: expect.stringContaining('consent'), hi: expect.any(String) },
    });
  });

  it('refuses a bad consent naming the field, and changes nothing', async () => {
    const h = createHarness();
    await start(h).expect(200);
    const bad = await consent(h, 'maybe').expect(422);
    expect(bad.body.detail).toMatch(/decision/);
    expect((await consent(h, 'given', { notice_version: 'has spaces' }).expect(422)).body.detail).toMatch(
      /notice_version/,
    );
    expect((await consent(h, 'given', { language: '12' }).expect(422)).body.detail).toMatch(/language/);
    expect(
      (
        await h.http
          .post('/v1/assistant/consent')
          .send({ session_id: 'nobody', decision: 'given', notice_version: 'v1', language: 'en' })
      ).status,
    ).toBe(404);
    expect(h.system.calls!.consents(SESSION)).toEqual([]);
  });

  it('reports abandoned when the user said nothing, handoff when one was asked for, and ended_by silence', async () => {
    const h = createHarness({ env: { VOICE_SILENCE_TIMEOUT_SECONDS: '120' } });
    await start(h).expect(200);
    await turn(h, 'agent', 'hello?').expect(200);
    await stop(h).expect(200);
    await start(h).expect(200);
    await turn(h, 'user', 'I want a person').expect(200);
    await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, event: 'handoff_requested', properties: { reason: 'user_asked' } })
      .expect(200);
    h.clock.increment(121_000);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const [second, first] = await calls(h);
    expect(first!.report).toMatchObject({ outcome: 'abandoned', reason: 'no_user_turn' });
    expect(second).toMatchObject({
      ended_by: 'silence',
      handoff: { reason: 'user_asked' },
      report: { outcome: 'handoff', reason: 'handoff_requested' },
    });
    expect(second.report!.summary).toMatch(/silence/);
  });

  it('answers 404 for an unknown call and 422 naming a malformed id', async () => {
    const h = createHarness();
    expect((await h.http.get('/api/calls/nope').expect(404)).body.detail).toMatch(/no call/);
    expect((await h.http.get('/api/calls/a%20b').expect(422)).body.detail).toMatch(/call_id/);
    expect((await h.http.get(`/api/sessions/${SESSION}/calls?limit=0`).expect(422)).body.detail).toMatch(/limit/);
  });

  it('keeps calls across a restart, and removes them past TRANSCRIPT_RETENTION_DAYS on the clock', async () => {
    const dataDir = tempDataDir();
    const env = { STORE: 'sqlite', DATA_DIR: dataDir, TRANSCRIPT_RETENTION_DAYS: '2' };
    const h = createHarness({ env });
    await start(h).expect(200);
    await consent(h, 'given').expect(200);
    await turn(h, 'user', 'kept for two days').expect(200);
    await stop(h).expect(200);
    const again = restartAfterCrash(h, { env, startAt: h.clock.now() });
    const [call] = await calls(again);
    expect(call.transcript).toHaveLength(1);
    again.clock.increment(2 * 86_400_000 - 120_000);
    await again.system.callUpkeep!.round();
    expect(await calls(again)).toHaveLength(1);
    again.clock.increment(180_000);
    await again.system.callUpkeep!.round();
    expect(await calls(again)).toEqual([]);
    expect((await again.http.get(`/api/calls/${call.call_id}`)).status).toBe(404);
  });
});

describe('an outcome decided after the call (CALL_RESOLVE_WINDOW_MINUTES)', () => {
  const MINUTE = 60_000;
  const moveTo = (h: Harness, screen: string) =>
    h.http.post('/v1/events').send({ session_id: SESSION, event: 'screen_schema_lazy', screen });
  /** A call on PAN_DETAILS in which the user spoke and did not get past it. */
  const stuckCall = async (h: Harness) => {
    await failOn(h, 'PAN_DETAILS', 'invalid_pan');
    await start(h).expect(200);
    await turn(h, 'user', 'it keeps failing').expect(200);
    h.clock.increment(30_000);
    await stop(h).expect(200);
    return h.clock.now();
  };

  it('becomes resolved when the user moves past the step within the window; the report says when, and its summary says so', async () => {
    const h = createHarness({ env: { CALL_RESOLVE_WINDOW_MINUTES: '10' } });
    const endedAt = await stuckCall(h);
    expect((await calls(h))[0].report).toMatchObject({
      outcome: 'unresolved',
      reason: 'still_on_step',
      outcome_open_until: new Date(endedAt + 10 * MINUTE).toISOString(),
      resolved_at: null,
    });
    // Still on the step it was about: nothing changes.
    h.clock.increment(2 * MINUTE);
    await moveTo(h, 'pan_details').expect(200);
    expect((await calls(h))[0].report).toMatchObject({ outcome: 'unresolved' });
    h.clock.increment(4 * MINUTE);
    await moveTo(h, 'aadhaar_otp').expect(200);
    const [call] = await calls(h);
    expect(call.report).toMatchObject({
      outcome: 'resolved',
      reason: 'moved_past_step_after_call',
      step: 'pan_details',
      outcome_open_until: null,
      resolved_at: new Date(endedAt + 6 * MINUTE).toISOString(),
    });
    expect(call.report!.summary).toMatch(/after the call\. Now on aadhaar_otp\./);
    // Where the call ended stays where it ended.
    expect(call.end).toMatchObject({ step: 'pan_details' });
  });

  it('stays as it was when the user moves on after the window, or with the window at 0', async () => {
    const h = createHarness({ env: { CALL_RESOLVE_WINDOW_MINUTES: '10' } });
    const endedAt = await stuckCall(h);
    h.clock.set(endedAt + 10 * MINUTE + 1);
    await moveTo(h, 'aadhaar_otp').expect(200);
    expect((await calls(h))[0].report).toMatchObject({
      outcome: 'unresolved',
      reason: 'still_on_step',
      resolved_at: null,
    });

    const off = createHarness({ env: { CALL_RESOLVE_WINDOW_MINUTES: '0' } });
    await stuckCall(off);
    expect((await calls(off))[0].report).toMatchObject({ outcome_open_until: null });
    off.clock.increment(MINUTE);
    await moveTo(off, 'aadhaar_otp').expect(200);
    expect((await calls(off))[0].report).toMatchObject({ outcome: 'unresolved' });
  });

  it('keeps the window across a restart: a move after it, within the window, resolves the call', async () => {
    const env = { STORE: 'sqlite', DATA_DIR: tempDataDir(), CALL_RESOLVE_WINDOW_MINUTES: '10' };
    const h = createHarness({ env });
    const endedAt = await stuckCall(h);
    const again = restartAfterCrash(h, { env });
    again.clock.set(endedAt + 9 * MINUTE);
    await moveTo(again, 'aadhaar_otp').expect(200);
    expect((await calls(again))[0].report).toMatchObject({
      outcome: 'resolved',
      reason: 'moved_past_step_after_call',
      resolved_at: new Date(endedAt + 9 * MINUTE).toISOString(),
    });
  });

  it('leaves a call that ended resolved or handed off as it was', async () => {
    const h = createHarness({ env: { CALL_RESOLVE_WINDOW_MINUTES: '10' } });
    await start(h, { screen: 'PAN_DETAILS' }).expect(200);
    await turn(h, 'user', 'I want a person').expect(200);
    await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, event: 'handoff_requested', properties: { reason: 'user_asked' } })
      .expect(200);
    await stop(h).expect(200);
    expect((await calls(h))[0].report).toMatchObject({ outcome: 'handoff', outcome_open_until: null });
    h.clock.increment(MINUTE);
    await moveTo(h, 'aadhaar_otp').expect(200);
    expect((await calls(h))[0].report).toMatchObject({ outcome: 'handoff', resolved_at: null });
  });
});

describe('DELETE /api/users/{user_id}', () => {
  it(
    'erases every session, call, transcript, consent entry and activity item of the user, from ' +
      'the file bytes too, and records the erasure without them',
    async () => {
      const dataDir = tempDataDir();
      const h = createHarness({ env: { STORE: 'sqlite', DATA_DIR: dataDir } });
      const MARK = 'zebra-lantern-quokka';
      // A named request: its reply (which names the session) is kept in the file for a copy sent after a restart.
      await start(h, { user_id: 'erase-me-77' }).set('Idempotency-Key', 'erase-me-request-1').expect(200);
      await consent(h, 'given').expect(200);
      await turn(h, 'user', `the word is ${MARK}`).expect(200);
      await stop(h).expect(200);
      // Another user's session stays.
      await h.http.post('/v1/assistant/session/start').send({ session_id: 'other', user_id: 'keep-me' }).expect(200);
      await h.http
        .post('/v1/events')
        .send({
          session_id: 'other',
          event: 'voice_conversation_turn',
          properties: { role: 'user', text: 'other words' },
        })
        .expect(200);
      // Hibernated or running, the stored rows and the journal are all written before the look.
      h.store.sessions.count();

      const keptReplies = () =>
        h.system
          .calls!.db.prepare('SELECT count(*) AS n FROM kept_replies WHERE instr(reply, ?) > 0')
          .get(JSON.stringify(SESSION));
      expect(keptReplies()).toEqual({ n: 1 });
      const res = await h.http.delete('/api/users/erase-me-77').expect(200);
      expect(keptReplies()).toEqual({ n: 0 });
      expect(res.body).toMatchObject({
        erasure_id: expect.stringMatching(/^era_/),
        removed: { sessions: 1, calls: 1, transcript_turns: 1, consent_records: 1 },
      });
      expect(res.body.removed.activity_items).toBeGreaterThanOrEqual(5);
      expect((await h.http.get(`/api/sessions/${SESSION}`)).status).toBe(404);
      expect((await h.http.get(`/api/sessions/${SESSION}/calls`)).body.calls).toEqual([]);
      expect((await h.http.get(`/api/activity?session_id=${SESSION}`)).body.items).toEqual([]);
      expect(JSON.stringify((await h.http.get('/api/activity?limit=1000')).body)).not.toContain('erase-me-77');
      expect((await h.http.get('/api/sessions/other')).status).toBe(200);

      const file = h.store.sessions.health().file!;
      for (const path of [file, `${file}-wal`]) {
        let bytes: Buffer;
        try {
          bytes = readFileSync(path);
        } catch {
          continue;
        }
        expect(bytes.includes(MARK), `${path} still holds the transcript`).toBe(false);
        expect(bytes.includes('erase-me-77'), `${path} still holds the user id`).toBe(false);
      }
      const erasures = h.system.calls!.db.prepare('SELECT * FROM erasures').all() as { removed: string }[];
      expect(erasures).toHaveLength(1);
      expect(erasures[0]!.removed).not.toContain('erase-me-77');
    },
  );

  it('erases a running session of the user and answers 0s for a user never seen', async () => {
    const h = createHarness();
    await start(h, { user_id: 'running-user' }).expect(200);
    const res = await h.http.delete('/api/users/running-user').expect(200);
    expect(res.body.removed.sessions).toBe(1);
    expect((await h.http.get(`/api/sessions/${SESSION}`)).status).toBe(404);
    expect((await h.http.delete('/api/users/nobody').expect(200)).body.removed).toEqual({
      sessions: 0,
      calls: 0,
      transcript_turns: 0,
      consent_records: 0,
      activity_items: 0,
      webhook_deliveries: 0,
    });
    expect((await h.http.delete('/api/users/has%20space').expect(422)).body.detail).toMatch(/user_id/);
  });
});
