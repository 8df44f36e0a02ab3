import { describe, expect, it } from 'vitest';
import { WsClient } from '../test/support/ws-client.js';
import { clusterCalls, eventually } from './cluster-calls.js';
import { suiteCluster } from './fixtures/suite-cluster.js';
import { listeningSockets } from './listening-sockets.js';

const { cluster } = suiteCluster({ name: 'cluster-fronts', processes: 1, fronts: 1, startTimeoutMs: 180_000 });
const { post, get, activityOf, invocations } = clusterCalls(cluster);

/** The TCP ports a process listens on, each once: a port however many sockets listen on it (HTTP_ACCEPTORS, src/http/acceptors.ts). */
const listeningPorts = (pid: number): number[] =>
  [...new Set(listeningSockets(pid).map((socket) => socket.port))].sort((a, b) => a - b);

/** Requests this process answered on a route, from its own metrics. */
async function answered(port: number, route: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('kyc_http_request_duration_seconds_count{') && line.includes(`route="${route}"`))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describe('CLUSTER_ROLE=front: processes that serve the HTTP API only (real Restate server, real redis-server)', () => {
  it('listens on its HTTP port alone: it serves no Restate endpoint, and no deployment names it', async () => {
    const [front] = cluster().fronts;
    const [worker] = cluster().processes;
    expect(listeningPorts(front!.pid)).toEqual([front!.port]);
    expect(listeningPorts(worker!.pid)).toEqual([worker!.port, worker!.endpointPort].sort((a, b) => a - b));
    const deployments = await cluster().restate.deployments();
    expect(deployments.map((deployment) => deployment.id)).toEqual(
      cluster().releases.map((release) => release.deploymentId),
    );
  });

  it('takes every client request; the sessions run in the process that serves the endpoint, in order, each answer seeing its own write', async () => {
    const [front] = cluster().fronts;
    const [worker] = cluster().processes;
    const screens = Array.from({ length: 10 }, (_, index) => `front_${index}`);
    for (const screen of screens) {
      expect(
        (await post('/v1/events', { session_id: 'fronted', user_id: 'u1', event: 'screen_view', screen })).status,
      ).toBe(200);
      expect((await get('/api/sessions/fronted')).body.screen).toBe(screen);
    }
    // A call too: asked at the front, decided where the session runs.
    const trigger = await post('/v1/assistant/trigger/evaluate', {
      session_id: 'fronted',
      signals: { screen: 'front_9' },
    });
    expect(trigger.status).toBe(200);
    expect(typeof trigger.body.trigger).toBe('boolean');
    const items = await eventually(
      () => activityOf('fronted', 'event'),
      (found) => found.length === screens.length,
    );
    expect(items.map((item) => item.payload.screen)).toEqual(screens);
    // Every invocation ran on the release's deployment: the only place sessions run.
    const ran = await invocations('fronted', 'ingest');
    expect(ran.length).toBe(screens.length);
    // The front answered the clients; the endpoint's process was sent none of them.
    expect(await answered(front!.port, '/v1/events')).toBe(screens.length);
    expect(await answered(worker!.port, '/v1/events')).toBe(0);
  });

  it("pushes a session's control commands, decided where the session runs, to a WebSocket a front holds", async () => {
    const [front] = cluster().fronts;
    const session = 'fronted-ws';
    const socket = await WsClient.open(`ws://127.0.0.1:${front!.port}/v1/events/ws`);
    try {
      socket.send({
        type: 'connect',
        message_id: 'm1',
        session_id: session,
        user_id: 'u-ws',
        sdk_version: '1.2.0',
        client: 'android',
        client_id: 'kycis_demo',
      });
      await socket.nextOfType('ack');
      const decided = await post('/v1/assistant/trigger/evaluate', {
        session_id: session,
        signals: { screen: 'pan_details', errors: ['a', 'b'] },
      });
      expect(decided.body).toMatchObject({ trigger: true });
      expect(await socket.nextOfType('command')).toMatchObject({
        command: 'suggest_start_voice_agent',
        session_id: session,
      });
    } finally {
      socket.close();
    }
  });
});
