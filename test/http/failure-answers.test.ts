import { describe, expect, it } from 'vitest';
import { failureOf } from '../../src/http/ask.js';

const answer = (...args: Parameters<typeof failureOf>) => {
  const error = failureOf(...args);
  return { status: error.status, detail: error.message, retryAfter: error.headers?.['Retry-After'] };
};

describe('what a refused or failed command is answered with', () => {
  it('an engine that could not be reached: nothing was applied, named', () => {
    expect(answer({ ok: false, reason: 'unavailable', unreachable: 'restate' }, 's1')).toEqual({
      status: 503,
      detail: 'Restate (the session engine) is unreachable: nothing was applied; retry later',
      retryAfter: '5',
    });
  });

  it('a connection lost after the request was sent: says it may have been applied, and how a retry stays safe', () => {
    expect(answer({ ok: false, reason: 'unavailable', unreachable: 'restate', maybeApplied: true }, 's1')).toEqual({
      status: 503,
      detail:
        'Restate (the session engine) is unreachable: the connection was lost after the request was ' +
        'sent, so it may have been applied (a retry with the same Idempotency-Key applies it at ' +
        'most once); retry later',
      retryAfter: '5',
    });
  });

  it('a write of the activity log in doubt: the session did not change, its items may appear', () => {
    expect(answer({ ok: false, reason: 'unavailable', unreachable: 'redis', maybeApplied: true }, 's1')).toEqual({
      status: 503,
      detail:
        'Redis (the activity log) is unreachable: the session did not change, but the write of its ' +
        'activity items went out without an answer, so they may appear; retry later',
      retryAfter: '5',
    });
  });

  it('a session that did not answer in time: the change may still be made', () => {
    expect(answer({ ok: false, reason: 'timeout' }, 's1').detail).toBe(
      'session did not answer in time: it may still be applied (a retry with the same Idempotency-Key applies it at most once); retry',
    );
  });
});
