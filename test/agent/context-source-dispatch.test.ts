import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ContextSource } from '../../agent/context-source.js';
import { createServiceClient } from '../../src/client/index.js';
import { DEFAULT_REFRESH_POLICY } from '../../src/domain/refresh-policy.js';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';

/**
 * The agent's context fetch says which dispatch its job came by, and the real service takes only
 * the current dispatch's fetch as the call's agent joining
 * (docs/decisions/0032-an-agent-joins-or-the-call-ends.md).
 */
let lk: LiveKitStandIn;
beforeAll(async () => {
  lk = await startLiveKitStandIn();
});
afterAll(() => lk.close());

const SESSION = 'dispatch-fetch-1';
const servers: RunningServer[] = [];
const sources: ContextSource[] = [];
afterEach(async () => {
  for (const source of sources.splice(0)) source.close();
  for (const server of servers.splice(0)) await server.close(1000);
  lk.reset();
});

async function fetchAs(h: Harness, dispatchId: string): Promise<void> {
  const server = await serve(h);
  servers.push(server);
  const source = new ContextSource({
    client: createServiceClient({ baseUrl: server.url }),
    sessionId: SESSION,
    dispatchId,
    fallbackPolicy: DEFAULT_REFRESH_POLICY,
    timeoutMs: 5_000,
    retryMaxMs: 1_000,
    onPrompt: () => undefined,
    onUnreachable: () => undefined,
    onRecovered: () => undefined,
    log: () => undefined,
  });
  sources.push(source);
  await source.start();
  expect(source.current?.session_id).toBe(SESSION);
}

const joinedAt = (h: Harness) => h.system.sessionHost.snapshot(SESSION)?.context.agent_watch?.joined_at ?? null;

describe("the agent's context fetch names its dispatch", () => {
  it("the current dispatch's job joins the call; a job of another dispatch is served its context and joins nothing", async () => {
    const h = createHarness({ env: lk.env() });
    lk.setWorker(false);
    await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION, screen: 'pan_details' });
    const current = lk.dispatches[0]!.id;

    await fetchAs(h, 'AD_replaced0001');
    expect(joinedAt(h)).toBeNull();

    await fetchAs(h, current);
    expect(joinedAt(h)).not.toBeNull();
  });
});
