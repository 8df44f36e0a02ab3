import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SDK_CONFIG } from '../../src/domain/sdk-config.js';
import type { ClientFlow } from '../fixtures/client-flows.js';
import { errorDrivenFlow, manualStartFlow, passiveFlow } from '../fixtures/client-flows.js';
import { USER } from '../fixtures/client-events.js';
import type { FlowRun } from '../support/client-flow.js';
import { runFlow } from '../support/client-flow.js';
import type { Harness } from '../support/harness.js';
import { createHarness } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';
import type { ActivityView } from '../support/session-invariants.js';
import { activitySignature, activityViolations } from '../support/session-invariants.js';

let lk: LiveKitStandIn;
beforeAll(async () => {
  lk = await startLiveKitStandIn();
});
afterAll(() => lk.close());
beforeEach(() => lk.reset());

const activity = async (h: Harness, sessionId: string) =>
  (await h.http.get(`/api/activity?session_id=${sessionId}&limit=1000`)).body.items as (ActivityView & {
    session_id: string;
    user_id: string;
  })[];
const order = (items: ActivityView[]) => items.map((item) => activitySignature(item.kind, item.payload));
const rules = (h: Harness) => ({
  cooldownMs: DEFAULT_SDK_CONFIG.thresholds.min_trigger_interval_seconds * 1000,
  reengagementMs: h.config.sessions.reengagementInactivitySeconds * 1000,
});

/** Spec 6.3, numbered as there; each flow has the items its steps produce. */
const TYPICAL = {
  identity: ['event:identity'], // 1
  schema: ['event:screen_schema', 'schema_push'], // 2: a pushed schema is registered (schema_push) as it arrives
  lazySchema: ['event:screen_schema_lazy'], // 2
  inputs: (n: number) => Array<string>(n).fill('event:component_input'), // 3
  failure: ['event:validation_failed'], // 4
  trigger: ['trigger:fired'], // 5
  start: ['session_start:new'], // 6
  turns: ['event:voice_conversation_turn', 'event:voice_conversation_turn'], // 7
  contextFetch: ['voice_agent_context_fetch'], // 8
  stop: ['session_stop:active'], // 9
  reengagement: ['reengagement:session_stop'], // 10: voice was active
};
const VOICE = [...TYPICAL.start, ...TYPICAL.turns, ...TYPICAL.contextFetch, ...TYPICAL.stop, ...TYPICAL.reengagement];

type Items = Awaited<ReturnType<typeof activity>>;
const find = (items: Items, signature: string) =>
  items.find((item) => activitySignature(item.kind, item.payload) === signature)!;

/** Each flow, the order of docs/reference/events.md it must give, and what sets it apart. */
const FLOWS: [string, (sessionId: string) => ClientFlow, string[], (run: FlowRun, items: Items) => void][] = [
  [
    'manual start: the client never evaluates the trigger',
    manualStartFlow,
    [...TYPICAL.identity, ...TYPICAL.schema, ...TYPICAL.inputs(2), ...VOICE],
    (run) => expect(run.decision).toBeUndefined(),
  ],
  [
    'error-driven: the evaluation right after the failure fires on the repeated errors',
    errorDrivenFlow,
    [
      ...TYPICAL.identity,
      ...TYPICAL.lazySchema,
      ...TYPICAL.inputs(1),
      ...TYPICAL.failure,
      ...TYPICAL.trigger,
      ...VOICE,
    ],
    (run, items) => {
      expect(run.decision).toEqual({
        trigger: true,
        reason: 'repeated_errors',
        action: 'start_voice_agent',
        intervention_mode: 'voice_offer',
      });
      expect(find(items, 'trigger:fired').timestamp).toBe(find(items, 'event:validation_failed').timestamp);
    },
  ],
  [
    'passive: the evaluation 25 s after the screen opened, on the clock, fires on the time spent',
    passiveFlow,
    [...TYPICAL.identity, ...TYPICAL.lazySchema, ...TYPICAL.inputs(2), ...TYPICAL.trigger, ...VOICE],
    (run, items) => {
      expect(run.decision).toEqual({
        trigger: true,
        reason: 'high_time_spent',
        action: 'start_voice_agent',
        intervention_mode: 'voice_offer',
      });
      const trigger = find(items, 'trigger:fired');
      expect(Date.parse(trigger.timestamp) - Date.parse(find(items, 'event:screen_schema_lazy').timestamp)).toBe(
        25_000,
      );
      expect(trigger.payload.signals).toEqual({ screen: 'personal_details', time_spent: 25 });
    },
  ],
];

describe('the client flows of docs/reference/events.md, through the HTTP API on a simulated clock', () => {
  it.each(FLOWS)(
    '%s; exactly the activity order of docs/reference/events.md',
    async (_name, flowFor, typical, check) => {
      const h = createHarness({ env: lk.env() });
      const flow = flowFor('flow-1');
      const run = await runFlow(h, flow);
      const items = await activity(h, flow.sessionId);
      expect(order(items)).toEqual(typical);
      expect(activityViolations(items, rules(h))).toEqual([]);
      expect(items.every((item) => item.session_id === flow.sessionId && item.user_id === USER)).toBe(true);
      expect(JSON.stringify(items)).not.toMatch(/ABCDE1234F|Ravi Kumar/);
      check(run, items);

      // One agent dispatched into the session's room, and the room gone with the stop.
      const room = 'kyc-room-flow-1';
      expect(lk.calls.filter((call) => call.method === 'CreateDispatch').map((call) => call.body.room)).toEqual([room]);
      expect(lk.rooms.has(room)).toBe(false);
      const started = find(items, 'session_start:new');
      expect(started.payload).toMatchObject({ room, resumed: false, warnings: [] });
      expect(started.payload.dispatch_id).toMatch(/^AD_/);
      expect(run.started).toMatchObject({ livekit_room: room, livekit_url: lk.url, warnings: [] });
      expect(run.stopped).toEqual({ session_id: flow.sessionId, active: false, warnings: [] });
      expect((await h.http.get(`/api/sessions/${flow.sessionId}`)).body).toMatchObject({
        active: false,
        state: { voice: 'inactive', reengagement: 'armed' },
      });
    },
  );

  it('three users at once on one service: each session still has exactly its own typical order', async () => {
    const h = createHarness({ env: lk.env() });
    // Interleaved request by request; the waits move the one clock for everyone, as time does.
    await Promise.all(FLOWS.map(([, flowFor], i) => runFlow(h, flowFor(`together-${i}`))));
    for (const [i, [, , typical]] of FLOWS.entries()) {
      const items = await activity(h, `together-${i}`);
      expect(order(items)).toEqual(typical);
      expect(activityViolations(items, rules(h))).toEqual([]);
    }
    expect(lk.dispatches).toEqual([]);
    expect(lk.calls.filter((call) => call.method === 'CreateDispatch')).toHaveLength(3);
  });
});
