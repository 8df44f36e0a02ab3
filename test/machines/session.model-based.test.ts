import supertest from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getStateNodes as nodesOf } from 'xstate';
import type { TestPath } from 'xstate/graph';
import { TestModel, getStateNodes } from 'xstate/graph';
import { loadConfig } from '../../src/config.js';
import { sessionSettings } from '../../src/actor-system/system-options.js';
import { DEFAULT_SDK_CONFIG } from '../../src/domain/sdk-config.js';
import { loadKnowledgeBase } from '../../src/integrations/knowledge-base.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { START_TIME, createHarness, serve } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';
import type { ClientCommand, ModelEvent, ModelSnapshot, SessionModelOptions } from '../support/session-model.js';
import { createSessionModel, machineState } from '../support/session-model.js';
import { SessionReplay } from '../support/session-replay.js';

// Runs on one store: the paths test the session machine against its model through the app; what
// each store keeps of a session is tested on both by every other HTTP test and in durability/; vitest.config.ts.

/**
 * Model-based tests of the session machine. Paths are generated with xstate/graph over a model
 * whose session is the real machine (test/support/session-model.ts), then every path is replayed
 * against the real service — express app, actor system, simulated clock, livekit-server-sdk
 * against the wire-level stand-in — checking the invariants after every step.
 */
/**
 * The agent watch (docs/decisions/0032-an-agent-joins-or-the-call-ends.md) checks a call every few
 * seconds, so its timers would interleave with every other timer in every order and the graph
 * would not end. Here its checks come after every other timer, so no path reaches them: these
 * paths test the rest of the machine beside a watch that waits, and a resume of a call whose agent
 * was heard. The checks, redispatches and their ends have their own tests, on the stand-in
 * (test/integrations/agent-join.test.ts) and on a real LiveKit server (test-media/voice-agent-join.test.ts).
 */
const AGENT_CHECKS_LAST = { VOICE_AGENT_JOIN_SECONDS: '2000000', VOICE_ROOM_CHECK_SECONDS: '2000000' };
// Timers in a known order: cooldown (60 s) < reengagement (300 s) < idle eviction (900 s) < agent checks.
const ENV = {
  SESSION_IDLE_TTL_SECONDS: '900',
  REENGAGEMENT_INACTIVITY_SECONDS: '300',
  LOG_LEVEL: 'warn',
  ...AGENT_CHECKS_LAST,
};
const config = loadConfig(ENV);
const RULES = {
  cooldownMs: DEFAULT_SDK_CONFIG.thresholds.min_trigger_interval_seconds * 1000,
  reengagementMs: config.sessions.reengagementInactivitySeconds * 1000,
  popupCooldownMs: DEFAULT_SDK_CONFIG.thresholds.assistant_prompt_cooldown_seconds * 1000,
};

function sessionModel(media: SessionModelOptions['media'], commands: readonly ClientCommand[]) {
  return createSessionModel({
    sessionId: 's1',
    userId: 'u1',
    settings: sessionSettings(config, { ready: true }),
    sources: {
      knowledgeBase: loadKnowledgeBase(config.voice.knowledgeBaseFile),
      refreshPolicy: config.voice.contextRefresh,
    },
    startTime: START_TIME,
    media,
    commands,
  });
}

let lk: LiveKitStandIn;
beforeAll(async () => {
  lk = await startLiveKitStandIn();
});
afterAll(() => lk.close());
beforeEach(() => lk.reset());

/** Far above the graphs here (a few hundred vertices); a machine change that makes them explode fails fast. */
const TRAVERSAL_LIMIT = 5_000;

const describePath = (path: TestPath<ModelSnapshot, ModelEvent>) =>
  path.steps
    .slice(1)
    .map((step) => step.event.type)
    .join(' → ');

/**
 * One service for the paths of a group, each path on a session of its own: a service per path
 * would cost more than most paths. Other sessions' timers firing when a path moves the clock is
 * what a shared service does anyway.
 */
function replays(logic: ReturnType<typeof sessionModel>) {
  let h: Harness;
  let server: RunningServer;
  let http: Harness['http'];
  let paths = 0;
  // On a listening server with kept-alive connections: a server per request (supertest's way
  // with an app) costs more than the request.
  beforeAll(async () => {
    h = createHarness({ env: { ...ENV, ...lk.env() } });
    server = await serve(h);
    http = supertest(server.url);
  });
  afterAll(() => server.close(0));
  return async (path: TestPath<ModelSnapshot, ModelEvent>): Promise<void> => {
    paths += 1;
    const session = new SessionReplay({ h, http, lk, logic, rules: RULES, sessionId: `path-${paths}`, userId: 'u1' });
    const perform = ({ event }: { event: ModelEvent }) => session.perform(event);
    try {
      await path.test({
        events: {
          ingest: perform,
          turn: perform,
          context: perform,
          trigger: perform,
          popup: perform,
          start: perform,
          stop: perform,
          tick: perform,
          'media.ok': perform,
          'media.fail': perform,
          'media.lost': perform,
        },
        states: { '*': () => session.check() },
      });
    } catch (error) {
      session.abandon();
      throw error;
    }
    await session.finish();
  };
}

const instant = sessionModel('instant', ['ingest', 'turn', 'context', 'trigger', 'start', 'stop']);
const instantModel = new TestModel(instant, {
  events: instant.events,
  serializeState: instant.serializeState,
  limit: TRAVERSAL_LIMIT,
});
const stepwise = sessionModel('stepwise', ['start', 'stop', 'popup']);
const stepwiseModel = new TestModel(stepwise, {
  events: stepwise.events,
  serializeState: stepwise.serializeState,
  limit: TRAVERSAL_LIMIT,
});
const paths = {
  instantShortest: instantModel.getShortestPaths(),
  instantSimple: instantModel.getSimplePaths({ serializeState: machineState }),
  stepwiseShortest: stepwiseModel.getShortestPaths(),
};

describe('media as instant fakes: ingest, start, start-again, stop, trigger, agent turns and fetches, timers', () => {
  const replay = replays(instant);

  describe('shortest paths: to every state, and every event each state absorbs', () => {
    for (const path of paths.instantShortest) it(describePath(path), () => replay(path));
  });

  describe("simple paths: every route through the machine's states that visits none twice", () => {
    for (const path of paths.instantSimple) it(describePath(path), () => replay(path));
  });
});

describe('media step by step: starts, stops and popups while calls run, failures, answers lost after the work', () => {
  const replay = replays(stepwise);

  describe('shortest paths: to every state, and every event each state absorbs', () => {
    for (const path of paths.stepwiseShortest) it(describePath(path), () => replay(path));
  });
});

describe('what the paths cover', () => {
  it('they take the session through every state it can rest in', () => {
    // Planning states and `stopping.done` are left the moment they are entered; minting a token
    // is local, so the model ends it at once, as the service does within the same request.
    // The agent watch's checks and what a resume does for an agent found missing are reached by no
    // path here (AGENT_CHECKS_LAST above), and a resume's check for an agent that was heard only in
    // passing (instant media; heard means a context fetch, which step-by-step paths leave out to
    // halve their number): all tested on their own (test/integrations/agent-join.test.ts).
    const watchChecks = new Set([
      'session.agent.checking',
      'session.agent.redispatching',
      'session.agent.rechecking',
      'session.voice.starting.checkingAgent',
      'session.voice.starting.replacingDispatch',
    ]);
    const resting = getStateNodes(sessionMachine.root).filter(
      (node) =>
        node.type === 'atomic' &&
        !node.always &&
        node.id !== 'session.voice.starting.mintingToken' &&
        !watchChecks.has(node.id),
    );
    const visited = new Set<unknown>();
    for (const path of Object.values(paths).flat()) {
      for (const { state } of path.steps)
        if (state.session) for (const node of nodesOf(sessionMachine.root, state.session.value)) visited.add(node);
    }
    expect(resting.filter((node) => !visited.has(node)).map((node) => node.id)).toEqual([]);
    expect(resting.length).toBeGreaterThan(10);
  });
});
