import type { Response } from 'supertest';
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import { sessionView } from '../../src/http/views/session-view.js';
import type { Harness } from './harness.js';
import { settle } from './harness.js';
import type { LiveKitStandIn } from './livekit-stand-in.js';
import type { ActivityRules, ActivityView } from './session-invariants.js';
import { activitySignature, activityViolations, dispatchViolations, engagedByActivity } from './session-invariants.js';
import type { ClientCommand, ModelEvent, ModelSnapshot, SessionModelLogic } from './session-model.js';
import { MEDIA_METHOD, isMediaEvent, outcomeOf, requestFor } from './session-model.js';

interface InFlight {
  command: ClientCommand;
  response: Promise<Response>;
  settled: boolean;
}

type Gate = ReturnType<LiveKitStandIn['gateNext']>;

type HttpClient = Harness['http'];

export interface ReplayOptions {
  /** The service; `http` reaches its app (the harness's own client, or one on a listening server). */
  h: Harness;
  http: HttpClient;
  lk: LiveKitStandIn;
  logic: SessionModelLogic;
  rules: ActivityRules;
  /** Each replay has a session of its own, so replays can share one service. */
  sessionId: string;
  userId: string;
}

/** What the service shows after a step: its session view and the session's activity. */
interface Observation {
  exists: boolean;
  active: boolean;
  state: unknown;
  activity: ActivityView[];
}

/**
 * Replays a generated path against the real service: the express app and actor system of the
 * harness on its simulated clock, with media through the LiveKit stand-in. Each client command
 * is the HTTP request the model sent; a media step answers the call the stand-in is holding; a
 * tick advances the clock to the model's next deadline. After each step it checks the invariants
 * on what the service shows, and that the service did what the model did.
 */
export class SessionReplay {
  private model: ModelSnapshot;
  private readonly inFlight = new Map<number, InFlight>();
  private gate: Gate | null = null;
  private lastCommandAt: number | null = null;
  private last: Observation = { exists: false, active: false, state: null, activity: [] };

  private readonly h: Harness;
  private readonly http: HttpClient;
  private readonly lk: LiveKitStandIn;
  private readonly logic: SessionModelLogic;
  private readonly rules: ActivityRules;
  private readonly ids: { sessionId: string; userId: string };

  constructor(options: ReplayOptions) {
    ({ h: this.h, http: this.http, lk: this.lk, logic: this.logic, rules: this.rules } = options);
    this.ids = { sessionId: options.sessionId, userId: options.userId };
    this.model = this.logic.initial();
  }

  private get sessionId(): string {
    return this.ids.sessionId;
  }

  private get room(): string {
    return `${this.logic.options.settings.mediaRoomPrefix}-${this.sessionId}`;
  }

  async perform(event: ModelEvent): Promise<void> {
    const before = this.model;
    expect(
      this.logic.events(before).map((offered) => offered.type),
      'the path is possible from where the replay is',
    ).toContain(event.type);
    const after = this.logic.next(before, event);
    // Hold the next media call before anything can make it, so that it waits for its own step.
    const call = after.call && after.call.serial !== before.call?.serial ? after.call : null;
    const nextGate = call && call.src !== 'mintToken' ? this.lk.gateNext(MEDIA_METHOD[call.src], this.room) : null;

    if (event.type === 'tick') {
      // A millisecond short of the deadline nothing may have fired yet: no timer runs early.
      this.h.clock.increment(after.now - before.now - 1);
      const early = this.observe();
      expect(
        { exists: early.exists, state: early.state, activity: early.activity.length },
        'nothing fires before its time',
      ).toEqual({
        exists: this.last.exists,
        state: this.last.state,
        activity: this.last.activity.length,
      });
      this.h.clock.increment(1);
    } else if (isMediaEvent(event)) {
      this.gate!.answer(outcomeOf(event));
    } else {
      this.send(before, event.type);
    }
    if (call || !after.call) this.gate = nextGate;

    for (const { command, value } of after.answered) {
      const sent = this.inFlight.get(command)!;
      const res = await sent.response;
      const busy = typeof value === 'object' && value !== null && 'busy' in value;
      expect(res.status, `${sent.command} #${command} answered ${res.status}: ${JSON.stringify(res.body)}`).toBe(
        busy ? 503 : 200,
      );
      if (sent.command === 'stop' && !busy) expect(res.body.active).toBe(false);
      if (sent.command === 'trigger' && this.last.active) {
        expect(res.body, 'no prompt while the assistant is starting, running or stopping').toMatchObject({
          trigger: false,
          reason: 'assistant_active',
        });
      }
    }
    if (nextGate) await nextGate.arrived;
    await this.untilWaiting(after);
    if (event.type === 'tick') await this.untilSettled(after);
    this.model = after;
  }

  /** After every step: the invariants hold on what the service shows, and it is where the model is. */
  check(): void {
    const seen = this.observe();
    const { model } = this;
    const voiceInFlight = [...this.inFlight.values()].some(
      (sent) => !sent.settled && (sent.command === 'start' || sent.command === 'stop'),
    );

    expect(dispatchViolations(this.dispatches()), 'never two agents in one room').toEqual([]);
    expect(activityViolations(seen.activity, this.rules), 'activity in the order of docs/reference/events.md').toEqual(
      [],
    );
    if (seen.exists) {
      expect(seen.active, '`active` only between a start and a stop').toBe(
        voiceInFlight || engagedByActivity(seen.activity),
      );
    }
    if (this.last.exists && !seen.exists) {
      expect(this.last.active, 'a session with voice running is never evicted').toBe(false);
      expect(this.h.clock.now() - this.lastCommandAt!, 'evicted only after the idle TTL').toBeGreaterThanOrEqual(
        this.logic.options.settings.idleTtlMs,
      );
    }

    expect(seen.exists, 'the session exists as in the model').toBe(model.session !== null && !model.expired);
    if (seen.exists) expect(seen.state, 'the session is in the state the model is in').toEqual(model.session!.value);
    expect(
      seen.activity.map((item) => activitySignature(item.kind, item.payload)),
      'the activity the model emitted',
    ).toEqual(model.activity);
    this.last = seen;
  }

  /** Lets whatever the path left running finish (no call is held any more), and checks the invariants once more. */
  async finish(): Promise<void> {
    this.gate?.answer('ok');
    this.gate = null;
    await Promise.all([...this.inFlight.values()].map((sent) => sent.response));
    const seen = this.observe();
    expect(dispatchViolations(this.dispatches()), 'never two agents in one room').toEqual([]);
    expect(activityViolations(seen.activity, this.rules), 'activity in the order of docs/reference/events.md').toEqual(
      [],
    );
    if (seen.exists)
      expect(seen.active, '`active` only between a start and a stop').toBe(engagedByActivity(seen.activity));
  }

  /** After a failed step: lets the session run on without holding anything, so that nothing waits for ever. */
  abandon(): void {
    this.gate?.answer('ok');
    this.gate = null;
  }

  private send(model: ModelSnapshot, command: ClientCommand): void {
    const request = requestFor(this.ids, model, command);
    const test =
      request.method === 'get' ? this.http.get(request.path) : this.http.post(request.path).send(request.body);
    const sent: InFlight = { command, response: Promise.resolve(test), settled: false };
    sent.response = sent.response.finally(() => {
      sent.settled = true;
    });
    this.inFlight.set(model.sent.length, sent);
    this.lastCommandAt = this.h.clock.now();
  }

  /** A voice command the session holds back has no answer to wait for: wait until it is held. */
  private async untilWaiting(model: ModelSnapshot): Promise<void> {
    const expected = model.session?.context.voiceWork.waiting.length ?? 0;
    const held = () => this.h.system.sessionHost.snapshot(this.sessionId)?.context.voiceWork.waiting.length ?? 0;
    // Event-loop turns, not time: the request is in flight within this process.
    for (let turn = 0; turn < 10_000 && held() !== expected; turn += 1) await settle();
    expect(held(), 'voice commands held back').toBe(expected);
  }

  /**
   * A timer can begin media work no request waits on (the silence check's stop): with nothing held
   * at a gate, wait until the session is where the model is, and let `check` say if it never gets there.
   */
  private async untilSettled(model: ModelSnapshot): Promise<void> {
    if (model.call || !model.session || model.expired) return;
    const seen = () => this.h.system.sessionHost.snapshot(this.sessionId)?.value;
    // Event-loop turns, not time: the media call goes to the stand-in on loopback.
    for (let turn = 0; turn < 10_000 && !isDeepStrictEqual(seen(), model.session.value); turn += 1) await settle();
  }

  private dispatches() {
    return this.lk.dispatches.filter((dispatch) => dispatch.room === this.room);
  }

  /**
   * The session view and the activity, read as their routes read them (`sessionView`,
   * the activity log's `list`) but without HTTP, so that a check after every step stays cheap.
   */
  private observe(): Observation {
    const snapshot = this.h.system.sessionHost.snapshot(this.sessionId);
    const view = snapshot ? sessionView(snapshot.context, snapshot.value) : undefined;
    const activity = this.h.system.activity.list({ limit: 1000, sessionId: this.sessionId });
    return { exists: view !== undefined, active: view?.active ?? false, state: view?.state ?? null, activity };
  }
}
