import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import type { components } from '../../src/client/schema.js';
import type { Harness } from '../support/harness.js';
import { createHarness, restartAfterCrash, tempDataDir } from '../support/harness.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const SESSION = 'hook-s1';
const receivers: WebhookReceiver[] = [];

afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.stop();
});

async function receiver(): Promise<{ receiver: WebhookReceiver; url: string }> {
  const made = new WebhookReceiver(SECRET);
  receivers.push(made);
  return { receiver: made, url: await made.start() };
}

/** The receiver verifies timestamps against real time: the simulated clock starts at it. */
const harness = (url: string, env: Record<string, string> = {}) =>
  createHarness({
    env: { STORE: 'sqlite', DATA_DIR: tempDataDir(), WEBHOOK_URL: url, WEBHOOK_SECRET: SECRET, ...env },
    startAt: Date.now(),
  });

async function call(h: Harness): Promise<string> {
  const started = await h.http
    .post('/v1/assistant/session/start')
    .send({ session_id: SESSION, user_id: 'hook-user', screen: 'pan_details' })
    .expect(200);
  await h.http
    .post('/v1/assistant/consent')
    .send({ session_id: SESSION, decision: 'given', notice_version: 'default-1', language: 'en' })
    .expect(200);
  await h.http
    .post('/v1/events')
    .send({ session_id: SESSION, event: 'voice_conversation_turn', properties: { role: 'user', text: 'help me' } })
    .expect(200);
  await h.http.post('/v1/assistant/session/stop').send({ session_id: SESSION }).expect(200);
  return started.body.assistant_invocation_id as string;
}

const deliveries = async (h: Harness, query = '') =>
  (await h.http.get(`/api/webhooks/deliveries${query}`).expect(200)).body
    .deliveries as components['schemas']['WebhookDelivery'][];

describe('signed webhooks from the durable outbox', () => {
  it('deliver consent.recorded and call.ended with the report to a real receiver that verifies the signature', async () => {
    const { receiver: hooks, url } = await receiver();
    const h = harness(url);
    const callId = await call(h);
    await h.system.callUpkeep!.round();
    expect(hooks.received.every((message) => !(message.verified instanceof Error))).toBe(true);
    const [ended] = hooks.messages('call.ended');
    expect(ended!.data).toMatchObject({
      call_id: callId,
      session_id: SESSION,
      ended_by: 'client',
      transcript_kept: true,
      report: { turns: { user: 1, agent: 0 }, outcome: 'unresolved' },
    });
    expect(hooks.messages('consent.recorded')[0]!.data).toMatchObject({
      session_id: SESSION,
      call_id: callId,
      decision: 'given',
      notice_version: 'default-1',
      language: 'en',
    });
    // The words stay in the service: a webhook carries the report, never the transcript.
    expect(hooks.received.map((message) => message.body).join('')).not.toContain('help me');
    const listed = await deliveries(h);
    expect(listed.map((delivery) => [delivery.type, delivery.status, delivery.attempts, delivery.last_status])).toEqual(
      [
        ['call.ended', 'delivered', 1, 200],
        ['consent.recorded', 'delivered', 1, 200],
      ],
    );
    expect(new Set(hooks.received.map((message) => message.headers['webhook-id']))).toEqual(
      new Set(listed.map((delivery) => delivery.message_id)),
    );
  });

  it('deliver handoff.requested, then handoff.unanswered when the agent said nobody was free: the call back owed, once', async () => {
    const { receiver: hooks, url } = await receiver();
    const h = harness(url);
    const started = await h.http
      .post('/v1/assistant/session/start')
      .send({ session_id: SESSION, screen: 'pan_details' })
      .expect(200);
    await h.http
      .post('/v1/events')
      .send({
        session_id: SESSION,
        event: 'handoff_requested',
        screen: 'pan_details',
        properties: { reason: 'the user asked' },
      })
      .expect(200);
    await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, event: 'handoff_unanswered', properties: { waited_seconds: 120 } })
      .expect(200);
    // Said twice (a retried post): one message all the same.
    await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, event: 'handoff_unanswered', properties: { waited_seconds: 120 } })
      .expect(200);
    await h.system.callUpkeep!.round();
    expect(hooks.received.every((message) => !(message.verified instanceof Error))).toBe(true);
    const unanswered = hooks.messages('handoff.unanswered');
    expect(unanswered).toHaveLength(1);
    expect(unanswered[0]!.data).toMatchObject({
      session_id: SESSION,
      call_id: started.body.assistant_invocation_id,
      reason: 'the user asked',
      screen: 'pan_details',
      requested_at: expect.any(String),
      unanswered_at: expect.any(String),
    });
  });

  it('keep a delivery through a receiver that is down and a restart of the service, and deliver it after', async () => {
    const { receiver: hooks, url } = await receiver();
    const port = hooks.port;
    await hooks.stop();
    const dataDir = tempDataDir();
    const h = harness(url, { DATA_DIR: dataDir });
    await call(h);
    await h.system.callUpkeep!.round();
    const failed = await deliveries(h, '?status=pending');
    expect(failed).toHaveLength(2);
    expect(failed[0]).toMatchObject({
      attempts: 1,
      last_status: null,
      last_error: expect.stringMatching(/not delivered/),
    });

    const again = restartAfterCrash(h);
    await hooks.start(port);
    // Not before it is due: the backoff holds it.
    await again.system.callUpkeep!.round();
    expect(hooks.received).toEqual([]);
    again.clock.increment(5_001);
    await again.system.callUpkeep!.round();
    expect(hooks.messages('call.ended')).toHaveLength(1);
    expect(hooks.messages('consent.recorded')).toHaveLength(1);
    expect((await deliveries(again)).map((delivery) => [delivery.status, delivery.attempts])).toEqual([
      ['delivered', 2],
      ['delivered', 2],
    ]);
  });

  it('back off with jitter for 24 hours, then keep the delivery as failed; a retry sends it again with the same id', async () => {
    const { receiver: hooks, url } = await receiver();
    hooks.status = 500;
    const h = harness(url);
    await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION }).expect(200);
    await h.http.post('/v1/assistant/session/stop').send({ session_id: SESSION }).expect(200);
    await h.system.callUpkeep!.round();
    const gaps: number[] = [];
    let [delivery] = await deliveries(h);
    while (delivery!.status === 'pending') {
      const next = Date.parse(delivery!.next_attempt_at!);
      gaps.push(next - Date.parse(delivery!.last_attempt_at!));
      h.clock.increment(next - h.clock.now());
      await h.system.callUpkeep!.round();
      [delivery] = await deliveries(h);
    }
    expect(delivery).toMatchObject({
      status: 'failed',
      last_status: 500,
      last_error: 'answered 500',
      next_attempt_at: null,
    });
    expect(gaps.length).toBeGreaterThan(10);
    expect(gaps[1]!).toBeGreaterThan(gaps[0]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(3_600_000);
    expect(h.clock.now() - Date.parse(delivery!.created_at)).toBeLessThanOrEqual(24 * 3_600_000);
    const attempts = hooks.received.length;
    expect(attempts).toBe(delivery!.attempts);

    hooks.status = 200;
    const retried = (await h.http.post(`/api/webhooks/deliveries/${delivery!.id}/retry`).send({}).expect(200)).body;
    expect(retried).toMatchObject({ status: 'pending', attempts });
    await h.system.callUpkeep!.round();
    expect((await deliveries(h))[0]).toMatchObject({ status: 'delivered', attempts: attempts + 1, last_status: 200 });
    expect(new Set(hooks.received.map((message) => message.headers['webhook-id'])).size).toBe(1);
  });

  it('say handoff.requested and user.erased, the erasure without the user; an erasure takes the pending deliveries of the user with it', async () => {
    const { receiver: hooks, url } = await receiver();
    const h = harness(url);
    await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION, user_id: 'hook-user' }).expect(200);
    await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, event: 'handoff_requested', properties: { reason: 'asked_for_a_person' } })
      .expect(200);
    await h.system.callUpkeep!.round();
    expect(hooks.messages('handoff.requested')[0]!.data).toMatchObject({
      session_id: SESSION,
      reason: 'asked_for_a_person',
    });
    hooks.status = 503;
    await h.http.post('/v1/assistant/session/stop').send({ session_id: SESSION }).expect(200);
    await h.system.callUpkeep!.round();
    expect((await deliveries(h, '?status=pending')).map((delivery) => delivery.type)).toEqual(['call.ended']);
    hooks.status = 200;
    const erased = (await h.http.delete('/api/users/hook-user').expect(200)).body;
    expect(erased.removed.webhook_deliveries).toBe(2);
    await h.system.callUpkeep!.round();
    const [said] = hooks.messages('user.erased');
    expect(said!.data).toMatchObject({ erasure_id: erased.erasure_id, removed: erased.removed });
    expect(JSON.stringify(said)).not.toContain('hook-user');
    expect((await deliveries(h)).map((delivery) => delivery.type)).toEqual(['user.erased']);
  });

  it(
    'say call.ended with the outcome as it stands and when it may still change, then ' +
      'call.outcome_updated when the user moves past the step within the window',
    async () => {
      const { receiver: hooks, url } = await receiver();
      const h = harness(url, { CALL_RESOLVE_WINDOW_MINUTES: '10' });
      const callId = await call(h);
      await h.system.callUpkeep!.round();
      const endedAt = h.clock.now();
      expect(hooks.messages('call.ended')[0]!.data).toMatchObject({
        call_id: callId,
        report: {
          outcome: 'unresolved',
          outcome_open_until: new Date(endedAt + 600_000).toISOString(),
          resolved_at: null,
        },
      });

      h.clock.increment(60_000);
      await h.http
        .post('/v1/events')
        .send({ session_id: SESSION, event: 'screen_schema_lazy', screen: 'aadhaar_otp' })
        .expect(200);
      await h.system.callUpkeep!.round();
      expect(hooks.received.every((message) => !(message.verified instanceof Error))).toBe(true);
      const updated = hooks.messages('call.outcome_updated');
      expect(updated).toHaveLength(1);
      expect(updated[0]!.data).toMatchObject({
        call_id: callId,
        session_id: SESSION,
        ended_at: new Date(endedAt).toISOString(),
        previous_outcome: 'unresolved',
        report: {
          outcome: 'resolved',
          reason: 'moved_past_step_after_call',
          resolved_at: new Date(endedAt + 60_000).toISOString(),
          outcome_open_until: null,
        },
      });
      // One update per change: a further move says nothing more.
      h.clock.increment(60_000);
      await h.http
        .post('/v1/events')
        .send({ session_id: SESSION, event: 'screen_schema_lazy', screen: 'selfie' })
        .expect(200);
      await h.system.callUpkeep!.round();
      expect(hooks.messages('call.outcome_updated')).toHaveLength(1);
    },
  );

  it('refuse WEBHOOK_URL without a secret, and a secret not of the whsec_ form', () => {
    expect(() => createHarness({ env: { WEBHOOK_URL: 'http://127.0.0.1:9/x' } })).toThrow(/WEBHOOK_SECRET/);
    expect(() => createHarness({ env: { WEBHOOK_URL: 'http://127.0.0.1:9/x', WEBHOOK_SECRET: 'plain' } })).toThrow(
      /WEBHOOK_SECRET/,
    );
  });
});

describe("docs/reference/webhooks.md's receiver", () => {
  it('run as the page gives it, verifies and prints the call.ended the service sends', async () => {
    const page = readFileSync('docs/reference/webhooks.md', 'utf8');
    const code = /## A receiver that verifies[\s\S]*?```js\n([\s\S]*?)```/.exec(page)![1]!;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      env: { ...process.env, WEBHOOK_SECRET: SECRET, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const listening = (await lines.next()).value as string;
      const port = /listening on (\d+)/.exec(listening)![1];
      const h = harness(`http://127.0.0.1:${port}/`);
      const callId = await call(h);
      await h.system.callUpkeep!.round();
      const printed: { type: string; data: Record<string, unknown> }[] = [];
      while (!printed.some((message) => message.type === 'call.ended'))
        printed.push(JSON.parse((await lines.next()).value as string));
      expect(printed.find((message) => message.type === 'call.ended')!.data).toMatchObject({
        call_id: callId,
        report: { outcome: 'unresolved' },
      });
      expect(
        (await deliveries(h)).every((delivery) => delivery.status === 'delivered' && delivery.last_status === 204),
      ).toBe(true);
    } finally {
      child.kill();
    }
  });
});
