import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import type { Frame } from '../test/support/ws-client.js';
import { WsClient } from '../test/support/ws-client.js';
import { suiteCluster } from './fixtures/suite-cluster.js';

/** What "promptly" means here: no request may wait for an engine that is gone (a shared 2-core machine included). */
const PROMPT_MS = 5_000;

const { cluster, redis, restartRedis } = suiteCluster({
  name: 'cluster-outages',
  processes: 2,
  startTimeoutMs: 180_000,
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | null;
  ms: number;
}

async function send(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const started = Date.now();
  const response = await fetch(cluster().url + path, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    retryAfter: response.headers.get('retry-after'),
    ms: Date.now() - started,
  };
}

const event = (sessionId: string, screen: string, key?: string) =>
  send(
    'POST',
    '/v1/events',
    { session_id: sessionId, event: 'screen_view', screen },
    key === undefined ? {} : { 'idempotency-key': key },
  );
/** A field SDK's control socket on the first process, connected to `sessionId` while every engine is up. */
async function controlSocket(sessionId: string): Promise<WsClient> {
  const socket = await WsClient.open(`ws://127.0.0.1:${cluster().processes[0]!.port}/v1/events/ws`);
  socket.send({
    type: 'connect',
    message_id: 'connect',
    session_id: sessionId,
    user_id: 'u-outage',
    sdk_version: '1.2.0',
    client: 'android',
    client_id: 'kycis_demo',
  });
  await socket.nextOfType('ack');
  return socket;
}

/** A control_state frame sent during the outage: its error frame, and how long it took. */
async function refusedFrame(
  socket: WsClient,
  sessionId: string,
  messageId: string,
): Promise<{ frame: Frame; ms: number }> {
  const started = Date.now();
  socket.send({
    type: 'control_state',
    message_id: messageId,
    session_id: sessionId,
    event: 'screen_state',
    screen: 'during-ws',
  });
  const frame = await socket.nextOfType('error', (f) => f.message_id === messageId);
  return { frame, ms: Date.now() - started };
}

const screens = async (sessionId: string) =>
  (
    (await send('GET', `/api/activity?session_id=${sessionId}&kind=event&limit=100`)).body.items as {
      payload: { screen: string };
    }[]
  ).map((item) => item.payload.screen);

describe('cluster mode while an engine is down (real Restate server, real redis-server, killed with SIGKILL)', () => {
  it('Redis down: each request is refused at once, naming Redis, and none is applied once Redis is back; a retry then applies once', async () => {
    expect((await event('outage-redis', 'before')).status).toBe(200);
    const socket = await controlSocket('outage-redis');
    // AOF everysec: let the acknowledged write reach the disk before the kill.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await redis().kill();

    const refused = [
      await event('outage-redis', 'during-0', 'outage-key-0'),
      await event('outage-redis', 'during-1', 'outage-key-1'),
      await event('outage-redis', 'during-2'),
    ];
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.body.detail).toMatch(
        /^Redis \(the activity log\) is unreachable: nothing was applied; retry later$/,
      );
      expect(answer.retryAfter).toBe('5');
      expect(answer.ms).toBeLessThan(PROMPT_MS);
    }
    // The control plane names the same cause, as promptly.
    const overSocket = await refusedFrame(socket, 'outage-redis', 'during-ws');
    expect(overSocket.frame).toMatchObject({
      code: 'unavailable',
      message: 'Redis (the activity log) is unreachable: nothing was applied; retry later',
    });
    expect(overSocket.ms).toBeLessThan(PROMPT_MS);
    socket.close();
    // The session itself lives in Restate, which is up: reads answer, and show nothing of the refused events.
    const during = await send('GET', '/api/sessions/outage-redis');
    expect(during.status).toBe(200);
    expect(during.body.screen).toBe('before');
    // One engine down is not every process dying: alive, but out of rotation while Redis is gone, and /health says what is wrong.
    expect((await send('GET', '/health/live')).status).toBe(200);
    const ready = await send('GET', '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'redis_unreachable', cluster: { redis_answers: false } });
    const health = await send('GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      store: { kind: 'redis', status: 'failing' },
      cluster: { redis: 'failing', restate: { ingress: 'ok', admin: 'ok' } },
    });

    await restartRedis();
    // Time for anything still retrying inside Restate to land, were it retrying.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await send('GET', '/api/sessions/outage-redis')).body.screen).toBe('before');
    expect(await screens('outage-redis')).toEqual(['before']);

    // The client retries with the same key: run anew (the refusal was not kept under the key), applied once.
    const retried = await event('outage-redis', 'during-0', 'outage-key-0');
    expect(retried.status).toBe(200);
    expect((await event('outage-redis', 'during-0', 'outage-key-0')).status).toBe(200);
    expect((await send('GET', '/api/sessions/outage-redis')).body.screen).toBe('during-0');
    // Recorded by the invocation the read above waited for; this process reads it back a moment later.
    const deadline = Date.now() + 5_000;
    while ((await screens('outage-redis')).length < 2 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await screens('outage-redis')).toEqual(['before', 'during-0']);
  });

  it(
    'Redis stopped (SIGSTOP, its connections left open): /health says so, and what a process ' +
      'writes itself is refused within the bound, naming Redis',
    async () => {
      expect((await event('frozen-redis', 'before')).status).toBe(200);
      process.kill(redis().pid, 'SIGSTOP');
      try {
        const health = await send('GET', '/health');
        expect(health.status).toBe(503);
        expect(health.body).toMatchObject({
          cluster: { redis: 'failing', redis_answers: false, restate: { ingress: 'ok', admin: 'ok' } },
        });
        expect(health.ms).toBeLessThan(PROMPT_MS);
        // Not ready on either process while Redis answers nothing: Restate would take events one-way that wait for it.
        for (const { port } of cluster().processes) {
          const started = Date.now();
          const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
          expect(ready.status).toBe(503);
          expect(await ready.json()).toMatchObject({ status: 'redis_unreachable', cluster: { redis_answers: false } });
          expect(Date.now() - started).toBeLessThan(PROMPT_MS);
        }
        // Neither names a session: what they record, each process writes to Redis itself.
        const flow = await send('POST', '/v1/flows/set', {
          flow_key: 'frozen-flow',
          current_step: 'pan_details',
          step_sequence: ['phone_entry', 'pan_details'],
        });
        const trigger = await send('POST', '/v1/assistant/trigger/evaluate', {
          signals: { screen: 'PAN_DETAILS', idle_seconds: 13 },
        });
        for (const answer of [flow, trigger]) {
          expect(answer.status).toBe(503);
          expect(answer.body.detail).toMatch(
            /^Redis \(the activity log\) is unreachable: nothing was applied; retry later$/,
          );
          expect(answer.ms).toBeLessThan(PROMPT_MS);
        }
      } finally {
        process.kill(redis().pid, 'SIGCONT');
      }
      await vi.waitFor(async () => expect((await send('GET', '/health')).status).toBe(200), {
        timeout: 15_000,
        interval: 250,
      });
      // Ready again on every process once Redis answers, with no request in between.
      for (const { port } of cluster().processes)
        expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
      expect((await event('frozen-redis', 'after')).status).toBe(200);
    },
  );

  it('Redis holding writes past their bound (CLIENT PAUSE WRITE; a PING still answers): what a process writes itself is answered in doubt, not refused, and appears after', async () => {
    const admin = new Redis(redis().url);
    try {
      await admin.call('CLIENT', 'PAUSE', '6000', 'WRITE');
      const flow = await send('POST', '/v1/flows/set', {
        flow_key: 'paused-flow',
        current_step: 'pan_details',
        step_sequence: ['phone_entry', 'pan_details'],
      });
      expect(flow.status).toBe(503);
      expect(flow.body.detail).toBe(
        'Redis (the activity log) is unreachable: the write of its activity items went out without an ' +
          'answer, so they may appear; retry later',
      );
      // The write was not refused: it lands once Redis goes on (docs/decisions/0047-a-write-in-doubt-is-not-a-refusal.md).
      await vi.waitFor(
        async () => {
          const items = (await send('GET', '/api/activity?kind=flow_graph_recorded&limit=100')).body.items as {
            payload: { flow_key: string };
          }[];
          expect(items.map((item) => item.payload.flow_key)).toContain('paused-flow');
        },
        { timeout: 15_000, interval: 250 },
      );
    } finally {
      admin.disconnect();
    }
  });

  it('Restate down: writes and reads answer 503 naming Restate at once, never 500; the processes stay alive and ready', async () => {
    expect((await event('outage-restate', 'before')).status).toBe(200);
    const socket = await controlSocket('outage-restate');
    process.kill(cluster().restate.pid, 'SIGKILL');
    await cluster().restate.stop();

    const answers = [
      await event('outage-restate', 'during'),
      await send('GET', '/api/sessions/outage-restate'),
      await send('GET', '/api/sessions'),
      await send('GET', '/api/sessions?q=outage'),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.body.detail).toMatch(
        /^Restate \(the session engine\) is unreachable: nothing (was applied|could be read); retry later$/,
      );
      expect(answer.retryAfter).toBe('5');
      expect(answer.ms).toBeLessThan(PROMPT_MS);
    }
    const overSocket = await refusedFrame(socket, 'outage-restate', 'during-ws');
    expect(overSocket.frame).toMatchObject({
      code: 'unavailable',
      message: 'Restate (the session engine) is unreachable: nothing was applied; retry later',
    });
    expect(overSocket.ms).toBeLessThan(PROMPT_MS);
    socket.close();
    expect((await send('GET', '/health/live')).status).toBe(200);
    expect((await send('GET', '/health/ready')).status).toBe(200);
    const health = await send('GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      status: 'cluster_unreachable',
      cluster: { restate: { ingress: 'unreachable', admin: 'unreachable' } },
    });
  });
});
