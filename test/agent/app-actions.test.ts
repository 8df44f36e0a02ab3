import { afterEach, describe, expect, it } from 'vitest';
import { APP_METHODS, AppActions } from '../../agent/app-actions.js';
import { createServiceClient } from '../../src/client/index.js';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';

const SESSION = 'app-actions-1';
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close(1000);
});

type Rpc = { destinationIdentity: string; method: string; payload: string; responseTimeout: number };

/** The agent's actions against the real service on a socket; the room's RPC is the test's, answering as `app` says. */
async function actionsOf(h: Harness, app: string | undefined, answer: (call: Rpc) => Promise<string>) {
  const server = await serve(h);
  servers.push(server);
  const calls: Rpc[] = [];
  const actions = new AppActions({
    client: createServiceClient({ baseUrl: server.url }),
    sessionId: SESSION,
    requestTimeoutMs: 5_000,
    app: () => app,
    rpc: (call) => (calls.push(call), answer(call)),
    log: () => undefined,
  });
  return { actions, calls };
}

const recorded = async (h: Harness) =>
  (
    (await h.http.get(`/api/activity?session_id=${SESSION}&kind=event`)).body.items as {
      payload: Record<string, unknown>;
    }[]
  )
    .filter((item) => item.payload.event === 'agent_action')
    .map(({ payload }) => ({ action: payload.action, target: payload.target, outcome: payload.outcome }));

describe("the agent's actions on the app (agent/app-actions.ts)", () => {
  it("asks the user's app by RPC, with a hint masked before it leaves, and records each action with what came of it", async () => {
    const h = createHarness();
    const { actions, calls } = await actionsOf(h, 'user-1', () => Promise.resolve('ok'));
    expect(await actions.perform('highlight_field', 'pan_number')).toBe('done');
    expect(await actions.perform('open_screen', 'pan_details')).toBe('done');
    expect(await actions.perform('show_hint', 'Type it as ABCPE1234F: five letters, four digits, one letter')).toBe(
      'done',
    );
    expect(
      calls.map(({ destinationIdentity, method, payload }) => ({
        destinationIdentity,
        method,
        payload: JSON.parse(payload),
      })),
    ).toEqual([
      { destinationIdentity: 'user-1', method: APP_METHODS.highlight_field, payload: { component_id: 'pan_number' } },
      { destinationIdentity: 'user-1', method: APP_METHODS.open_screen, payload: { screen: 'pan_details' } },
      {
        destinationIdentity: 'user-1',
        method: APP_METHODS.show_hint,
        payload: { text: expect.not.stringContaining('ABCPE1234F') },
      },
    ]);
    expect(await recorded(h)).toEqual([
      { action: 'highlight_field', target: 'pan_number', outcome: 'done' },
      { action: 'open_screen', target: 'pan_details', outcome: 'done' },
      {
        action: 'show_hint',
        target: expect.stringContaining('five letters, four digits, one letter'),
        outcome: 'done',
      },
    ]);
    expect(JSON.stringify(await recorded(h))).not.toContain('ABCPE1234F');
    // The agent's action is not the user doing something.
    expect((await h.http.get(`/api/sessions/${SESSION}`)).body.last_user_activity_at).toBeNull();
  });

  it('records an app that answered an error as failed, and no app in the room as no_app, asking nobody', async () => {
    const h = createHarness();
    const refusing = await actionsOf(h, 'user-1', () =>
      Promise.reject(new Error('Method not supported at destination')),
    );
    expect(await refusing.actions.perform('open_screen', 'selfie')).toBe('failed');
    const alone = await actionsOf(h, undefined, () => Promise.resolve('ok'));
    expect(await alone.actions.perform('highlight_field', 'pan_number')).toBe('no_app');
    expect(alone.calls).toEqual([]);
    expect(await recorded(h)).toEqual([
      { action: 'open_screen', target: 'selfie', outcome: 'failed' },
      { action: 'highlight_field', target: 'pan_number', outcome: 'no_app' },
    ]);
  });
});
