import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SDK_CONFIG } from '../../src/domain/sdk-config.js';
import { errorDrivenFlow, manualStartFlow, passiveFlow } from '../fixtures/client-flows.js';
import type { FlowRun } from '../support/client-flow.js';
import { runFlow } from '../support/client-flow.js';
import { DeadlineClock } from '../support/deadline-clock.js';
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

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const activity = async (h: Harness, sessionId: string) =>
  (await h.http.get(`/api/activity?session_id=${sessionId}&limit=1000`)).body.items as ActivityView[];
const exists = async (h: Harness, sessionId: string) => (await h.http.get(`/api/sessions/${sessionId}`)).status === 200;

describe('a day on the simulated clock, with the default settings', () => {
  it(
    'reengagement fires once per stopped session, idle sessions go after ' +
      'SESSION_IDLE_TTL_SECONDS, a call nobody stops ends once silent; in well under a second',
    async () => {
      const wallStart = performance.now();
      const h = createHarness({ env: lk.env(), clock: new DeadlineClock() });
      const ttlMs = h.config.sessions.idleTtlSeconds * 1000;
      const reengagementMs = h.config.sessions.reengagementInactivitySeconds * 1000;
      expect([ttlMs, reengagementMs]).toEqual([DAY, 5 * MINUTE]);

      // Morning: three users go through the three client flows of docs/reference/events.md, ten minutes apart; a fourth
      // starts the assistant and never stops it (the stop was lost, or the app killed).
      const flows = [manualStartFlow('day-manual'), errorDrivenFlow('day-errors'), passiveFlow('day-passive')];
      const runs = new Map<string, FlowRun>();
      for (const flow of flows) {
        runs.set(flow.sessionId, await runFlow(h, flow));
        h.clock.increment(10 * MINUTE);
      }
      expect(
        (
          await h.http
            .post('/v1/assistant/session/start')
            .send({ session_id: 'day-running', user_id: 'user-7', screen: 'selfie_capture' })
        ).status,
      ).toBe(200);
      const runningRoom = 'kyc-room-day-running';
      const runningStart = h.clock.now();

      // The rest of the day: the clock moves to each moment something is due, and a millisecond
      // before it; on the way it stops at every deadline, so each timer fires on time.
      const simulatedStart = performance.now();
      const dayStart = h.clock.now();
      const at = (time: number) => h.clock.increment(time - h.clock.now());
      for (const flow of flows) {
        const { lastAt } = runs.get(flow.sessionId)!;
        const fired = async () => (await activity(h, flow.sessionId)).filter((item) => item.payload.source === 'timer');
        if (lastAt + reengagementMs > h.clock.now()) {
          at(lastAt + reengagementMs - 1);
          expect(await fired()).toEqual([]);
          at(lastAt + reengagementMs);
        }
        expect((await fired()).map((item) => [item.timestamp, item.payload.reason, item.payload.recommended])).toEqual([
          [new Date(lastAt + reengagementMs).toISOString(), 'user_inactive_5min', true],
        ]);
      }
      for (const flow of flows) {
        const { lastAt } = runs.get(flow.sessionId)!;
        at(lastAt + ttlMs - 1);
        expect(await exists(h, flow.sessionId)).toBe(true);
        at(lastAt + ttlMs);
        expect(await exists(h, flow.sessionId)).toBe(false);
      }
      at(dayStart + DAY);
      const simulatedMs = performance.now() - simulatedStart;

      // Each stopped session: its typical order, then the one reengagement of its timer; then gone.
      for (const flow of flows) {
        const items = await activity(h, flow.sessionId);
        expect(items.map((item) => activitySignature(item.kind, item.payload)).slice(-4)).toEqual([
          'voice_agent_context_fetch',
          'session_stop:active',
          'reengagement:session_stop',
          'reengagement:timer',
        ]);
        expect(
          activityViolations(items, {
            cooldownMs: DEFAULT_SDK_CONFIG.thresholds.min_trigger_interval_seconds * 1000,
            reengagementMs,
          }),
        ).toEqual([]);
        expect((await h.http.get(`/api/reengagement/${flow.sessionId}`)).status).toBe(404);
      }
      // The call nobody stopped: no agent ever fetched its context, so the silence check ended it
      // VOICE_SILENCE_TIMEOUT_SECONDS after the start, as a stop would (room deleted, reengagement
      // armed), and the session then went after its idle TTL like the others.
      const silenceMs = h.config.voice.silenceTimeoutSeconds * 1000;
      const running = await activity(h, 'day-running');
      expect(running.map((item) => activitySignature(item.kind, item.payload))).toEqual([
        'session_start:new',
        'session_stop:active:silence',
        'reengagement:session_stop',
        'reengagement:timer',
      ]);
      // Due VOICE_SILENCE_TIMEOUT_SECONDS after the start; stamped when recorded, once the room is
      // deleted (a media call, answered here after the clock had moved on).
      expect(running[1]).toMatchObject({
        due_at: new Date(runningStart + silenceMs).toISOString(),
        payload: { ended_by: 'silence', silent_seconds: silenceMs / 1000 },
      });
      expect(Date.parse(running[1]!.timestamp)).toBeGreaterThanOrEqual(runningStart + silenceMs);
      expect(lk.rooms.has(runningRoom)).toBe(false);
      expect(await exists(h, 'day-running')).toBe(false);
      expect(h.system.sessionHost.size).toBe(0);

      // Simulated time costs no waiting: the day's timers take milliseconds. The bounds leave wide
      // room for a loaded CI machine (the day alone takes a few ms; the whole run, HTTP included,
      // a few hundred) while still failing if anything waited in real time.
      const wallMs = performance.now() - wallStart;
      expect(simulatedMs).toBeLessThan(1000);
      expect(wallMs).toBeLessThan(5000);
    },
  );
});
