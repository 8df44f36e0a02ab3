import type { SdkEvent } from './sdk-event.js';
import { normaliseStepId } from './step-id.js';

/**
 * The failures a session holds for its current screen (issue: errors accumulate in the session).
 * Plain data with absolute times only, so a persisted session is evaluated the same after a
 * restart: nothing here needs a timer, every bound is compared when a trigger is evaluated.
 */
export interface HeldFailure {
  /** The codes the failure was reported with (one event, or one code of a trigger request). */
  codes: string[];
  at: number;
  /** validation_failed/validation_error, or error_reported (a generic or verification error). */
  kind: 'validation' | 'reported';
  /** A trigger evaluation already counted this failure from one of its own codes. */
  claimed: boolean;
  /** The channel it arrived on; absent in sessions stored before channels were told apart: HTTP. */
  channel?: IngestChannel;
  /** The same failure also arrived on the other channel, and was counted here once. */
  mirrored?: boolean;
}

/**
 * How an SDK event arrived. A deployed SDK with its control plane on reports a failure on both:
 * a WebSocket `control_state` as the fast signal, and `POST /v1/events` as the durable telemetry
 * (docs/decisions/0017-what-the-deployed-sdks-do.md).
 */
export type IngestChannel = 'http' | 'control_plane';

/**
 * How far apart the two copies of one failure may arrive. Both are sent at the same moment, so
 * this only has to outlast the slower channel's delay and a retry or two; two failures of the
 * same code take the user at least a retype and a tap apart, and the same channel never pairs.
 */
export const MIRROR_WINDOW_MS = 10_000;

export interface ErrorWindow {
  /** The normalised step id the failures belong to; '' before any screen is known. */
  screen: string;
  failures: HeldFailure[];
  /**
   * After a trigger fired: the end of its cooldown. Failures held until then still count (so
   * further failures are answered `cooldown`, not `none`); from then on only later ones do.
   */
  restart_at: number | null;
}

/** Far more than any rule needs; it only stops a client from growing the window forever. */
export const MAX_HELD_FAILURES = 20;
export const MAX_CODES_PER_FAILURE = 5;

/** Events that count as a failure on the screen they name. */
export const FAILURE_EVENT_TYPES = new Set(['validation_failed', 'validation_error', 'error_reported']);

const EMPTY: ErrorWindow = Object.freeze({
  screen: '',
  failures: Object.freeze([]) as unknown as HeldFailure[],
  restart_at: null,
});

export const newErrorWindow = (): ErrorWindow => EMPTY;

export const windowScreen = (screen: string | null | undefined): string => (screen ? normaliseStepId(screen) : '');

/** The window for `screen`: the same one, or an empty one when the user moved to another screen. */
export function onScreen(window: ErrorWindow, screen: string | null | undefined): ErrorWindow {
  const key = windowScreen(screen);
  return key === window.screen ? window : { screen: key, failures: EMPTY.failures, restart_at: null };
}

function withFailure(window: ErrorWindow, failure: HeldFailure): ErrorWindow {
  const failures = [...window.failures, failure];
  return {
    ...window,
    failures: failures.length > MAX_HELD_FAILURES ? failures.slice(failures.length - MAX_HELD_FAILURES) : failures,
  };
}

/**
 * The codes a failure event carries: its `errors`, else its reason code, else an `error_code` in
 * its properties or beside them. `AI.trackError(code, …)`'s wire format is not visible
 * (docs/decisions/0017-what-the-deployed-sdks-do.md), so both places are read; without a code the event's name stands in.
 */
export function failureCodes(event: SdkEvent): string[] {
  const fromProperties = event.properties?.error_code ?? event.error_code;
  const codes = event.errors?.length
    ? event.errors
    : event.failure_reason_code
      ? [event.failure_reason_code]
      : typeof fromProperties === 'string'
        ? [fromProperties]
        : [];
  return (codes.length > 0 ? codes : [event.event])
    .slice(0, MAX_CODES_PER_FAILURE)
    .map((code) => code.trim().toLowerCase());
}

/**
 * The window after an ingested event: a screen change empties it, a failure event adds to it,
 * unless it is the copy of a failure already held from the other channel (then that one is marked
 * mirrored, and the failure still counts once).
 */
export function afterEvent(
  window: ErrorWindow,
  event: SdkEvent,
  screen: string | null,
  at: number,
  channel: IngestChannel = 'http',
): ErrorWindow {
  const current = onScreen(window, screen);
  if (!FAILURE_EVENT_TYPES.has(event.event)) return current;
  const codes = failureCodes(event);
  const kind = event.event === 'error_reported' ? 'reported' : 'validation';
  const twin = current.failures.findIndex(
    (failure) =>
      !failure.mirrored &&
      failure.kind === kind &&
      (failure.channel ?? 'http') !== channel &&
      Math.abs(at - failure.at) <= MIRROR_WINDOW_MS &&
      failure.codes.some((code) => codes.includes(code)),
  );
  if (twin >= 0)
    return {
      ...current,
      failures: current.failures.map((failure, i) => (i === twin ? { ...failure, mirrored: true } : failure)),
    };
  const failure: HeldFailure = { codes, at, kind, claimed: false };
  // Only a control-plane failure says so: an HTTP one stays as stored sessions already hold it.
  if (channel === 'control_plane') failure.channel = channel;
  return withFailure(current, failure);
}

/** Failures that still count at `now`: younger than the window, and after the restart once it is due. */
export function prune(window: ErrorWindow, now: number, windowMs: number): ErrorWindow {
  const restarted = window.restart_at !== null && now >= window.restart_at;
  const from = Math.max(now - windowMs, restarted ? window.restart_at! : Number.NEGATIVE_INFINITY);
  const failures = window.failures.filter((failure) => failure.at > from);
  if (failures.length === window.failures.length && !restarted) return window;
  return { ...window, failures, restart_at: restarted ? null : window.restart_at };
}

/**
 * The window once a trigger request's codes are counted: a code matching a failure the session
 * holds and no earlier request counted is that failure (reported both ways, it counts once);
 * any other code is a failure of its own.
 */
export function withRequestCodes(window: ErrorWindow, codes: readonly string[], at: number): ErrorWindow {
  let failures = window.failures;
  const added: HeldFailure[] = [];
  for (const raw of codes.slice(0, MAX_HELD_FAILURES)) {
    const code = raw.trim().toLowerCase();
    const index = failures.findIndex((failure) => !failure.claimed && failure.codes.includes(code));
    if (index >= 0) failures = failures.map((failure, i) => (i === index ? { ...failure, claimed: true } : failure));
    else added.push({ codes: [code], at, kind: 'validation', claimed: true });
  }
  return added.reduce(withFailure, { ...window, failures });
}

/** The codes the window holds, one per failure, as the policy's `errors` signal. */
export const heldCodes = (window: ErrorWindow): string[] => window.failures.map((failure) => failure.codes[0] ?? '');

/** After a trigger fired at `at`, cooling down until `cooldownUntil`. */
export const restartAfterTrigger = (window: ErrorWindow, at: number, cooldownUntil: number | null): ErrorWindow => ({
  ...window,
  restart_at: Math.max(at, cooldownUntil ?? at),
});

/**
 * After a voice session ended: the failures held were what the assistant was there for (those
 * before the call brought it, those during it the agent saw), so none is a reason to offer it again.
 */
export const clearedAfterVoice = (window: ErrorWindow): ErrorWindow =>
  window.failures.length === 0 && window.restart_at === null
    ? window
    : { screen: window.screen, failures: EMPTY.failures, restart_at: null };

/** The most recent failure still held, for the popup. */
export const latestFailure = (window: ErrorWindow): HeldFailure | undefined => window.failures.at(-1);
