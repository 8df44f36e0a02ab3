import type { AskFailure, AskResult, Dependency, SessionHost, SessionView } from '../actor-system/session-host.js';
import type { VoiceBusy } from '../machines/session/machine-events.js';
import type { CommitOutcome } from '../store/ports.js';
import { HttpError } from './http-error.js';

const notFound = (sessionId: string) => new HttpError(404, `session ${sessionId} not found`);

/** Nothing was acknowledged: the client retries the same request once the store takes writes again. */
export const storeUnavailable = () =>
  new HttpError(503, 'the change could not be stored (storage full or failing); retry later', { 'Retry-After': '5' });

const UNREACHABLE: Record<Dependency, string> = {
  restate: 'Restate (the session engine)',
  redis: 'Redis (the activity log)',
};

/** Cluster mode: an engine every process relies on cannot be reached from this one; nothing was applied. */
export const dependencyUnavailable = (dependency: Dependency, what = 'nothing was applied') =>
  new HttpError(503, `${UNREACHABLE[dependency]} is unreachable: ${what}; retry later`, { 'Retry-After': '5' });

/** A write of activity items in doubt (docs/decisions/0047-a-write-in-doubt-is-not-a-refusal.md). */
const ITEMS_IN_DOUBT = 'the write of its activity items went out without an answer, so they may appear';

/**
 * A commit of this process's own activity items refused, or in doubt: in cluster mode the activity
 * log is Redis, named as the engine it is; otherwise the embedded store's disk.
 */
export const commitRefused = (clustered: boolean, commit: Exclude<CommitOutcome, 'kept'>) => {
  if (!clustered) return storeUnavailable();
  return commit === 'in_doubt' ? dependencyUnavailable('redis', ITEMS_IN_DOUBT) : dependencyUnavailable('redis');
};

/** What makes a retry of a request whose outcome is unknown safe. */
const AT_MOST_ONCE = '(a retry with the same Idempotency-Key applies it at most once)';

/** A live session's snapshot for routes that only read, or 404. */
export async function snapshotOrThrow(sessionHost: SessionHost, sessionId: string): Promise<SessionView> {
  const snapshot = await sessionHost.snapshot(sessionId);
  if (!snapshot) throw notFound(sessionId);
  return snapshot;
}

/** The HTTP meaning of a sessionHost answer. */
export function replyOrThrow<T>(result: AskResult<T>, sessionId: string): T {
  if (result.ok) return result.value;
  throw failureOf(result, sessionId);
}

/**
 * What a refused or failed command is answered with, status and detail: HTTP throws it, the
 * WebSocket control plane sends its detail in an error frame, so both name the same cause.
 */
export function failureOf(result: AskFailure, sessionId: string): HttpError {
  switch (result.reason) {
    case 'not_found':
      return notFound(sessionId);
    case 'capacity':
      return new HttpError(503, 'session capacity reached and no inactive session can be evicted; retry later', {
        'Retry-After': '5',
      });
    case 'memory':
      return new HttpError(503, 'memory budget for sessions reached (MEMORY_BUDGET_MB); retry later', {
        'Retry-After': '30',
      });
    case 'timeout':
      return new HttpError(503, `session did not answer in time: it may still be applied ${AT_MOST_ONCE}; retry`, {
        'Retry-After': '1',
      });
    case 'unavailable':
      if (!result.unreachable) return storeUnavailable();
      if (result.maybeApplied && result.unreachable === 'redis')
        return dependencyUnavailable('redis', `the session did not change, but ${ITEMS_IN_DOUBT}`);
      return result.maybeApplied
        ? dependencyUnavailable(
            result.unreachable,
            `the connection was lost after the request was sent, so it may have been applied ${AT_MOST_ONCE}`,
          )
        : dependencyUnavailable(result.unreachable);
    case 'failed':
      return new HttpError(500, 'internal server error');
  }
}

/** A voice command refused because too many were already waiting on the session. */
export function unlessBusy<T extends object>(value: T | VoiceBusy): T {
  if ('busy' in value)
    throw new HttpError(503, 'voice session is busy with earlier start/stop requests; retry', { 'Retry-After': '1' });
  return value;
}
