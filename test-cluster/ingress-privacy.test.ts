import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { clusterCalls, eventually } from './cluster-calls.js';
import { suiteCluster } from './fixtures/suite-cluster.js';
import { listeningSockets } from './listening-sockets.js';

/**
 * The Restate ingress takes a call from anyone who can reach it, not only from the service's
 * fronts: the session object masks again whatever event it is sent (docs/explanation/privacy.md, "Cluster
 * mode"), so a raw event sent straight to `KycSession/{id}/ingest/send` shows nothing raw on any read.
 */
const { cluster, redis } = suiteCluster({ name: 'cluster-ingress-privacy', processes: 1, startTimeoutMs: 180_000 });

const refused = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('timeout', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(true));
  });
const { get, activityOf } = clusterCalls(cluster);

const RAW = ['ABCDE1234F', '2345 6789 0124', '9876543210', 'priya.sharma@gmail.com', 'Kavita Deshpande', '482913'];

describe('an event sent straight to the Restate ingress (SESSION_HOST=restate: real Restate server, real redis-server)', () => {
  it('is masked inside the session object: the session, the agent context, its prompt and the activity show none of it raw', async () => {
    const id = 'ingress-raw-1';
    const event = {
      session_id: id,
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'pan_field',
      component_type: 'text_input',
      hint: 'ABCDE1234F',
      masked: false,
      // The pass's own fields, forged: replaced, never trusted.
      masked_by: 'client',
      properties: {
        note: 'my aadhaar is 2345 6789 0124, call 9876543210',
        mail: 'priya.sharma@gmail.com',
        otp: 482913,
        remark: 'Name: Kavita Deshpande',
      },
    };
    const sent = await fetch(`${cluster().restate.ingressUrl}KycSession/${id}/ingest/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        command: { type: 'session.ingest', at: Date.now(), event, sizes: { bytes: 10, propertiesBytes: 5 } },
      }),
    });
    expect(sent.status).toBeLessThan(300);
    const session = await eventually(
      () => get(`/api/sessions/${id}`),
      (response) =>
        response.status === 200 &&
        (response.body.latest_event as { event?: string } | undefined)?.event === 'component_input',
    );
    const context = await get(`/v1/assistant/context/${id}`);
    const items = await eventually(
      () => activityOf(id, 'event'),
      (found) => found.length > 0,
    );
    const seen = JSON.stringify([session.body, context.body, items]);
    for (const raw of RAW) expect(seen, raw).not.toContain(raw);
    expect(seen).not.toContain('2345');
    expect((session.body.latest_event as { hint: string }).hint).toBe('**********');
    // The masked event is still the event: the session holds its screen and component.
    expect(context.body.current_screen).toBe('pan_details');
  });

  it("is reachable from this machine only: Restate's ingress, admin and node ports, Redis and the service's ports listen on 127.0.0.1 alone", async () => {
    const pids = [
      ...cluster().restate.nodes.map((node) => node.pid),
      ...cluster().processes.map((process) => process.pid),
      redis().pid,
    ];
    const sockets = pids.flatMap((pid) => listeningSockets(pid).map(({ address, port }) => `${address}:${port}`));
    const ingressPort = Number(new URL(cluster().restate.ingressUrl).port);
    expect(sockets).toContain(`127.0.0.1:${ingressPort}`);
    expect(sockets).toContain(`127.0.0.1:${new URL(cluster().restate.adminUrl).port}`);
    expect(sockets.filter((socket) => !socket.startsWith('127.0.0.1:'))).toEqual([]);
    // From another address of this machine, as from outside: a raw write to the ingress finds no one.
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((address) => address?.family === 'IPv4' && !address.internal)?.address;
    if (outside) expect(await refused(outside, ingressPort)).toBe(true);
    expect(await refused('127.0.0.1', ingressPort)).toBe(false);
  });
});
