import { AsyncLocalStorage } from 'node:async_hooks';
import * as restate from '@restatedev/restate-sdk';
import type { Logger } from 'pino';
import type { InspectionEvent, Observer } from 'xstate';
import type { MediaObservers } from '../actor-system/media-actors.js';
import { mediaActors } from '../actor-system/media-actors.js';
import type { FlowProgress } from '../actor-system/session-listing.js';
import { flowProgressOf } from '../actor-system/session-listing.js';
import { isQuiescent, storedView } from '../actor-system/stored-session.js';
import { storedDamage } from '../actor-system/stored-session-check.js';
import type { Routing } from '../actor-system/session-host.js';
import type { AgentContextSources } from '../domain/agent-context.js';
import type { MediaProvider } from '../integrations/media-port.js';
import type { IngestResult, Reply, SessionCommand } from '../machines/session/machine-events.js';
import type { SessionSettings } from '../machines/session/session-context.js';
import type { SessionMachine } from '../machines/session/machine.js';
import { remaskEvent } from '../domain/event-redaction.js';
import type { SdkEvent } from '../domain/sdk-event.js';
import { eventTypeWarnings } from '../domain/session-event.js';
import type { ActivityLog, StoredSession, SummaryRow } from '../store/ports.js';
import { StoreUnavailableError } from '../store/ports.js';
import type { CommandFanout } from './command-fanout.js';
import type { WireCommand } from './command-wire.js';
import { fromWireCommand, isWireCommand } from './command-wire.js';
import type { InvocationInput, InvocationOutcome } from './session-invocation.js';
import { runSessionInvocation, SessionInvocationError } from './session-invocation.js';
import { quietIngest } from './quiet-ingest.js';
import { withDirectIngest } from '../machines/session/direct-ingest.js';
import type { KeptState, StateMigration } from './state-versions.js';
import { keptVersion, migrateKept, STATE_MIGRATIONS, stateVersionOf } from './state-versions.js';
import { keptSessionSerde, UnreadableKeptValue } from './kept-session-serde.js';
import type { ActivityDraft } from '../domain/activity.js';
import { activityItem } from '../domain/activity.js';
import { concernsCalls, movesOn } from '../store/call-ledger.js';
import type { RecordRequest } from './call-book-object.js';
import { CALLS_OBJECT } from './call-book-object.js';

/** The virtual object's name: also the first segment of its ingress path. */
export const SESSION_OBJECT = 'KycSession';

export interface AskRequest {
  routing: Routing;
  command: WireCommand;
}

/** An SDK event as sent one-way: a `session.ingest` carrying the time the service took it. */
export type IngestCommand = WireCommand & { at: number; event: { event: string } };

/**
 * What the `ingest` handler takes: a batch of one session's events, applied in order
 * (event-batches.ts); `command`, one event, as a release before batches sent it and a journal may
 * still hold it.
 */
export type IngestRequest = { commands: IngestCommand[] } | { command: IngestCommand };

/**
 * What a one-way event is answered with: only what the event itself says, never what the session
 * made of it (it has not run yet), so the first answer and a retry's (the handler's output) agree.
 */
export const acceptedAnswer = (command: IngestCommand): IngestResult => ({
  ingested_at_ms: command.at,
  warnings: eventTypeWarnings(command.event.event),
});

/**
 * An SDK event as a session may keep it, whoever sent it: the ingress takes calls from anyone who
 * can reach it, not only from the service's fronts, so the event is masked again here
 * (docs/explanation/privacy.md, "Cluster mode"; remaskEvent in domain/event-redaction.ts).
 */
function remasked(command: WireCommand): WireCommand {
  if (command.type !== 'session.ingest' || typeof command.event !== 'object' || command.event === null) return command;
  const { event, sizes } = remaskEvent(command.event as SdkEvent);
  return { ...command, event, sizes };
}

const isIngestCommand = (command: unknown): command is IngestCommand =>
  isWireCommand(command) &&
  command.type === 'session.ingest' &&
  Number.isFinite(command.at) &&
  typeof (command.event as { event?: unknown } | undefined)?.event === 'string';

/** The request's events, in order; undefined when it is not a batch of SDK events. */
function ingestCommands(request: unknown): IngestCommand[] | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  const { commands, command } = request as { commands?: unknown; command?: unknown };
  if (Array.isArray(commands)) return commands.length > 0 && commands.every(isIngestCommand) ? commands : undefined;
  return isIngestCommand(command) ? [command] : undefined;
}

export type AskResponse =
  | {
      ok: true;
      value: unknown;
      /** The newest activity id written by this invocation (or before it): the asking process waits to have read it. */
      seen_through: number;
    }
  | { ok: false; reason: 'not_found' };

/** What a listing reads of each session (GET /api/sessions), kept apart from the context so a listing never loads one. */
export interface KeptSummary {
  row: SummaryRow;
  flow: FlowProgress | null;
}

/** The object's state keys. */
export const STATE = { session: 'session', summary: 'summary' } as const;

/**
 * The session as the object keeps it: `calls_watch`, until when its SDK events may still resolve an
 * ended call (forwardToCalls); `wakes`, the deadlines a `wake` is scheduled for (nextWakes), kept in
 * the one value every invocation reads anyway (state version 2, state-versions.ts).
 */
type KeptSession = StoredSession & { state_version?: number; calls_watch?: number; wakes?: number[] };

/** The `session` value is kept deflated (kept-session-serde.ts); the other keys as JSON, the summary so Restate's SQL can read it. */
const SESSION_SERDE = keptSessionSerde<KeptSession>();
const serdeOf = (key: string) => (key === STATE.session ? (SESSION_SERDE as restate.Serde<unknown>) : undefined);

export interface SessionObjectDeps {
  /** The session machine before its media actors are provided (each invocation provides journaled ones). */
  sessionLogic: SessionMachine;
  settings: SessionSettings;
  media: MediaProvider;
  logger: Logger;
  observers: MediaObservers;
  /** The log every process shares: a session's items are written by the invocation that made them, all or none. */
  activity: SharedActivityLog;
  /** Where what the machine tells its client unprompted goes: to the control sockets on every process. */
  commands: Pick<CommandFanout, 'publish'>;
  sources: AgentContextSources;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
  /** CALL_RESOLVE_WINDOW_MINUTES, in ms: how long after a call the session's SDK events go to its call book too. */
  callResolveWindowMs: number;
  /** RESTATE_JOURNAL_RETENTION_SECONDS, in ms: how long a completed event's or call's journal is kept to inspect; none unless set. */
  journalRetentionMs?: number | undefined;
  /** The steps from each earlier shape of the kept state to this release's (state-versions.ts); STATE_MIGRATIONS unless a release brings more. */
  stateMigrations?: readonly StateMigration[] | undefined;
}

export type SharedActivityLog = Required<Pick<ActivityLog, 'writeNow'>>;

/**
 * The status an `ask` answers with when the activity log refused its items: the ingress passes it
 * on, and the asking process tells its client which dependency is unreachable.
 */
export const ACTIVITY_LOG_UNREACHABLE = 503;

export const IDEMPOTENCY_RETENTION_MS = 10 * 60_000;

/**
 * Work nobody waits on and Redis can hold up (an acknowledged event, a timer's wake) is retried at
 * most 5 s apart, so it runs within seconds of Redis coming back; Restate 1.7's default waits up to
 * a minute between attempts and pauses the invocation after 70 (about an hour), and a paused
 * invocation holds its session's turn until someone resumes it. 120,000 attempts are about a week.
 */
const KEPT_WORK_RETRY = { maxInterval: 5_000, maxAttempts: 120_000, onMaxAttempts: 'pause' } as const;

/** A failed media call is tried once more, then its failure is journaled and the machine degrades as it would anywhere. */
const MEDIA_RUN = { maxRetryAttempts: 2 };

/**
 * Each session is a Restate virtual object keyed by its session id: one handler at a time per
 * key across the cluster. `ask` delivers one command; `wake` fires the timers due; `view` reads.
 * Timers are one delayed call to `wake` at the earliest deadline the context holds; the object
 * keeps the deadlines already scheduled and schedules only an earlier one, so re-arming a timer
 * on every event leaves no pile of pending calls, and a wake for a deadline no longer kept does
 * nothing.
 */
export function sessionObject(deps: SessionObjectDeps) {
  const migrations = deps.stateMigrations ?? STATE_MIGRATIONS;
  // Not kept by default: every event is an invocation, and its answer went to its caller.
  const journalRetention = deps.journalRetentionMs ?? 0;
  const stateVersion = stateVersionOf(migrations);
  const readSession = (ctx: restate.ObjectContext) => readKeptSession(ctx, deps.logger, migrations);
  // Built once, not per invocation (providing actors rebuilds every state node): a media call is
  // journaled by the context of the invocation whose machine made it, found through the async
  // context the invocation runs the machine in.
  const running = new AsyncLocalStorage<restate.ObjectContext>();
  const logic = withDirectIngest(
    deps.sessionLogic.provide({
      actors: mediaActors(
        deps.media,
        deps.logger,
        deps.observers,
        (call, run) => {
          const ctx = running.getStore();
          if (!ctx) return Promise.reject(new Error(`media call ${call} outside a session invocation`));
          return ctx.run(call, run, MEDIA_RUN);
        },
        'caller',
      ),
    }),
  );
  /** The command (none for a wake) as the session runs it at `at`: what it makes of it, nothing kept yet. */
  const step = async (
    ctx: restate.ObjectContext,
    stored: StoredSession | undefined,
    at: number,
    command?: (reply: Reply<unknown>) => SessionCommand,
  ): Promise<InvocationOutcome> => {
    const input: InvocationInput = {
      logic,
      sessionId: ctx.key,
      settings: deps.settings,
      at,
      stored,
      command,
      inspect: deps.inspect,
    };
    let outcome;
    try {
      // Most SDK events find their session quiet: applied without rebuilding the machine (quiet-ingest.ts).
      outcome = quietIngest(input) ?? (await running.run(ctx, () => runSessionInvocation(input)));
    } catch (error) {
      // A machine bug is not retried forever: the request fails (500) and the state stays as it was.
      if (error instanceof SessionInvocationError) throw new restate.TerminalError(error.message);
      throw error;
    }
    // A timer's item is stamped at the invocation's time: a wake that ran late (Restate was down) emits its due time, kept as `due_at`.
    for (const draft of outcome.activity) if (draft.due_at !== undefined) draft.at = Math.max(draft.at, at);
    return outcome;
  };
  /**
   * What an invocation's steps made, kept: their items written, their commands pushed, and the
   * session's state set once, as the last step left it (`cleared`: a step found it gone or ended
   * it, so what was kept before goes first). `wakes`: the deadlines still scheduled, when the
   * invocation is a wake that took its own off. Answers the newest activity id written.
   */
  const keep = async (
    ctx: restate.ObjectContext,
    before: KeptSession | undefined,
    outcomes: readonly InvocationOutcome[],
    at: number,
    cleared: boolean,
    wakes?: number[],
  ): Promise<number> => {
    const activity = outcomes.flatMap((outcome) => outcome.activity);
    // The same invocation replayed after a crash emits the same items: their keys make the second write a no-op.
    // Written before any state is set: an invocation refused here leaves the session as it was.
    const invocationId = ctx.request().id;
    const seenThrough = await deps.activity.writeNow(
      activity.map((draft, index) => ({ draft, writeKey: `${invocationId}:${index}` })),
    );
    const callsWatch = forwardToCalls(
      ctx,
      activity,
      deps.callResolveWindowMs,
      cleared ? 0 : (before?.calls_watch ?? 0),
    );
    // Journaled, so an invocation replayed after a crash does not push the same command twice.
    const commands = outcomes.flatMap((outcome) => outcome.commands);
    if (commands.length > 0) await ctx.run('publish control commands', () => deps.commands.publish(ctx.key, commands));
    // Best effort, and journaled so a replay does not notify twice: a notice that fails is the
    // agent's next refresh. Not throttled here: each event carries at most one notice.
    for (const { room, notice } of outcomes.flatMap((outcome) => outcome.notices)) {
      await ctx.run('notify the voice agent', () =>
        deps.media
          .notifyAgent(room, notice)
          .catch((error: unknown) => deps.logger.warn({ err: error, room, call: 'notifyAgent' }, 'media call failed')),
      );
    }
    const stored = outcomes.at(-1)?.stored ?? null;
    if (cleared || stored === null) ctx.clearAll();
    if (stored !== null) {
      const kept: KeptSession = { ...stored, state_version: stateVersion };
      if (callsWatch >= at) kept.calls_watch = callsWatch;
      const scheduled = nextWakes(ctx, stored.wake_at, at, cleared ? [] : (wakes ?? before?.wakes ?? []));
      if (scheduled.length > 0) kept.wakes = scheduled;
      ctx.set(STATE.session, kept, SESSION_SERDE);
      const summary: KeptSummary = {
        row: { session_id: ctx.key, ...stored.summary },
        flow: flowProgressOf(storedView(stored, deps.settings, at).context),
      };
      ctx.set(STATE.summary, summary);
    }
    return seenThrough;
  };

  return restate.object({
    name: SESSION_OBJECT,
    // A retry with the same Idempotency-Key within this window gets the first answer; past it, results are not kept.
    // Journals of completed invocations are kept a minute (for inspection), not the server's default: every event is one.
    options: { idempotencyRetention: IDEMPOTENCY_RETENTION_MS, journalRetention: 60_000 },
    handlers: {
      // Its journal is not kept once it ends, as an event's is not: the answer went to the caller.
      ask: restate.handlers.object.exclusive(
        { journalRetention },
        async (ctx: restate.ObjectContext, request: AskRequest): Promise<AskResponse> => {
          if (!isWireCommand(request?.command) || (request.routing !== 'create' && request.routing !== 'existing')) {
            throw new restate.TerminalError('not a session command', { errorCode: 400 });
          }
          let stored = await readSession(ctx);
          // The service's time when it took the request (journaled with the input), as an event's is
          // and as one process decides at: no clock entry, so no round trip to Restate before the
          // command runs. Never before what the session already holds. A command without one (none
          // is sent so today) takes Restate's time.
          const sentAt = request.command.at;
          const at = sessionTime(
            typeof sentAt === 'number' && Number.isFinite(sentAt) ? sentAt : await ctx.date.now(),
            stored,
          );
          if (stored && idledOut(stored, deps.settings, at)) {
            // Its idle eviction was due before this command (a wake not yet run): gone, as in one process.
            ctx.clearAll();
            stored = undefined;
          }
          if (!stored && request.routing === 'existing') return { ok: false, reason: 'not_found' };
          try {
            const outcome = await step(ctx, stored, at, (reply) =>
              fromWireCommand(remasked(request.command), at, deps.sources, reply),
            );
            const seenThrough = await keep(ctx, stored, [outcome], at, false);
            return { ok: true, value: outcome.reply ?? null, seen_through: seenThrough };
          } catch (error) {
            // Refused, not retried: a caller told 503 must never see the command applied once Redis is back.
            if (error instanceof StoreUnavailableError)
              throw new restate.TerminalError(error.message, { errorCode: ACTIVITY_LOG_UNREACHABLE });
            throw error;
          }
        },
      ),
      // Sent one-way: acknowledged once Restate holds it, run in turn with the key's other
      // exclusive handlers, so a later call or read of the session sees it. A batch's events are
      // applied in order, each at its own time, and kept once (event-batches.ts).
      ingest: restate.handlers.object.exclusive(
        { idempotencyRetention: IDEMPOTENCY_RETENTION_MS, journalRetention, retryPolicy: KEPT_WORK_RETRY },
        async (ctx: restate.ObjectContext, request: IngestRequest): Promise<IngestResult | IngestResult[]> => {
          const commands = ingestCommands(request);
          if (!commands) throw new restate.TerminalError('not an SDK event', { errorCode: 400 });
          const before = await readSession(ctx);
          let current = before;
          let cleared = false;
          let at = 0;
          const outcomes: InvocationOutcome[] = [];
          for (const command of commands) {
            // The service's time when it took the event (journaled with the input: no clock entry to
            // record), never before what the session already holds.
            at = sessionTime(command.at, current);
            if (current && idledOut(current, deps.settings, at)) {
              current = undefined;
              cleared = true;
            }
            let outcome;
            try {
              outcome = await step(ctx, current, at, (reply) =>
                fromWireCommand(remasked(command), at, deps.sources, reply),
              );
            } catch (error) {
              // A machine bug on one event fails that event alone, as it would sent by itself; the batch's others are kept.
              if (!(error instanceof restate.TerminalError) || commands.length === 1) throw error;
              deps.logger.error(
                { err: error, session_id: ctx.key },
                'an SDK event failed in the session machine and was dropped from its batch',
              );
              continue;
            }
            outcomes.push(outcome);
            current = outcome.stored ?? undefined;
            if (outcome.stored === null) cleared = true;
          }
          if (outcomes.length === 0)
            throw new restate.TerminalError('every SDK event of the batch failed in the session machine');
          // Nobody waits on it, and it was acknowledged: a Redis failure is retried by Restate until
          // Redis is back (not refused, as a call is), so the events are kept.
          await keep(ctx, before, outcomes, at, cleared);
          const answers = commands.map(acceptedAnswer);
          return 'commands' in request ? answers : answers[0]!;
        },
      ),
      wake: restate.handlers.object.exclusive(
        { ingressPrivate: true, retryPolicy: KEPT_WORK_RETRY },
        async (ctx: restate.ObjectContext, deadline: number): Promise<void> => {
          // Read (and migrated) first: the wakes are kept in it. A session gone has none.
          const stored = await readSession(ctx);
          const wakes = stored?.wakes ?? [];
          if (!stored || !wakes.includes(deadline)) return;
          // A delayed call runs at or after its time; never fire a timer before its deadline.
          const at = Math.max(await ctx.date.now(), deadline);
          const remaining = wakes.filter((wake) => wake !== deadline);
          await keep(ctx, stored, [await step(ctx, stored, at)], at, false, remaining);
        },
      ),
      // An erasure (erasure-object.ts): the session's state goes; a wake still scheduled finds nothing.
      erase: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: restate.ObjectContext): Promise<boolean> => {
          const held = (await ctx.stateKeys()).includes(STATE.session);
          ctx.clearAll();
          return held;
        },
      ),
      // Exclusive, so it waits for the events sent before it: a read after an acknowledged event
      // sees it. A damaged state is shown as none and left for a command to clear.
      view: restate.handlers.object.exclusive(async (ctx: restate.ObjectContext): Promise<StoredSession | null> => {
        const read = await ctx.get(STATE.session, SESSION_SERDE);
        if (read instanceof UnreadableKeptValue) return null;
        let stored: StoredSession | null = read;
        // Shown in this release's shape; the next command writes it so.
        if (stored && keptVersion(stored) !== stateVersion)
          stored = migrateKept(await keptState(ctx), migrations).session as StoredSession | null;
        return stored && storedDamage(stored) === undefined ? stored : null;
      }),
    },
  });
}

export type SessionObject = ReturnType<typeof sessionObject>;

/**
 * The session's kept state, as it can run again. One the machine cannot run (stored-session-check.ts)
 * would fail every invocation, and Restate would retry each forever: it is cleared, with its
 * reason logged, and the key begins anew, as a hibernated session does in one process.
 */
async function readKeptSession(
  ctx: restate.ObjectContext,
  logger: Logger,
  migrations: readonly StateMigration[],
): Promise<KeptSession | undefined> {
  const read = (await ctx.get(STATE.session, SESSION_SERDE)) ?? undefined;
  // Bytes that do not read back are no session to migrate or check: discarded with why.
  let stored = read instanceof UnreadableKeptValue ? undefined : read;
  if (stored && keptVersion(stored) !== stateVersionOf(migrations))
    stored = migrateInPlace(ctx, await keptState(ctx), migrations);
  const damage = read instanceof UnreadableKeptValue ? read.reason : stored && storedDamage(stored);
  if (damage === undefined) return stored;
  logger.error({ session_id: ctx.key, problem: damage }, 'stored session cannot be restored; session discarded');
  ctx.clearAll();
  return undefined;
}

/** Every key the object keeps. */
async function keptState(ctx: restate.ObjectSharedContext): Promise<KeptState> {
  const state: KeptState = {};
  for (const key of await ctx.stateKeys()) state[key] = await ctx.get(key, serdeOf(key));
  return state;
}

/**
 * Kept state written by an earlier release, brought to this one's shape and written back in the
 * same invocation as the command that found it: migrated once, and never half. A state written
 * by a newer release throws (NewerStateError): retried, not run with a shape this code does not know.
 */
function migrateInPlace(
  ctx: restate.ObjectContext,
  before: KeptState,
  migrations: readonly StateMigration[],
): KeptSession | undefined {
  const after = migrateKept(before, migrations);
  for (const key of Object.keys(before)) if (!(key in after)) ctx.clear(key);
  for (const [key, value] of Object.entries(after)) ctx.set(key, value, serdeOf(key));
  return after.session as KeptSession | undefined;
}

/**
 * The items a call needs go to the session's call book (call-book-object.ts) by a one-way call
 * journaled here, so the book follows exactly the changes that were kept. An SDK event that says
 * where the user is goes too while an ended call's outcome may still become resolved: until
 * `watchUntil`, the window after the last call's end, kept with the session (no state read of its
 * own). Answers the window as it stands after these items.
 */
function forwardToCalls(
  ctx: restate.ObjectContext,
  drafts: readonly ActivityDraft[],
  windowMs: number,
  watchUntil: number,
): number {
  let until = watchUntil;
  const items: RecordRequest['items'] = [];
  for (const draft of drafts) {
    if (!concernsCalls(draft) && !(movesOn(draft) && draft.at <= until)) continue;
    items.push({ item: activityItem('', '', draft), at: draft.at });
    if (draft.kind === 'session_stop' && draft.payload.was_active === true && windowMs > 0) until = draft.at + windowMs;
  }
  if (items.length > 0)
    ctx.genericSend({
      service: CALLS_OBJECT,
      method: 'record',
      key: ctx.key,
      parameter: { items } satisfies RecordRequest,
      inputSerde: restate.serde.json,
    });
  return until;
}

/** A command's time as the session runs it: when the service took it, never before what the session already holds. */
const sessionTime = (sentAt: number, stored: StoredSession | undefined): number =>
  Math.max(sentAt, stored?.summary.last_activity_at ?? 0);

/** Idle for the whole TTL with nothing under way: the session's idle check would end it. */
const idledOut = (stored: StoredSession, settings: SessionSettings, at: number): boolean =>
  stored.summary.last_activity_at + settings.idleTtlMs <= at && isQuiescent(stored, at);

/**
 * The deadlines with a wake scheduled once the session needs `deadline`: one delayed call at it,
 * unless one already scheduled comes at or before it (that wake schedules the next).
 */
function nextWakes(ctx: restate.ObjectContext, deadline: number | null, at: number, wakes: number[]): number[] {
  if (deadline === null || !Number.isFinite(deadline) || wakes.some((wake) => wake <= deadline)) return wakes;
  ctx.genericSend({
    service: SESSION_OBJECT,
    method: 'wake',
    key: ctx.key,
    parameter: deadline,
    inputSerde: restate.serde.json,
    delay: Math.max(0, deadline - at),
  });
  return [...wakes, deadline];
}
