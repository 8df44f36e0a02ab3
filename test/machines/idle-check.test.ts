import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { idleTimerDeadline } from '../../src/domain/idle-timer.js';
import { DeadlineClock } from '../support/deadline-clock.js';
import { commandFor, media, settings, START } from '../support/random-session-steps.js';

/**
 * The presence region takes its idle check from the host (docs/decisions/0043-the-idle-check-sent-by-the-host.md):
 * the machine arms no timer for it, ignores a check sent before its deadline, and otherwise ends
 * the session or re-arms, as the delayed event it replaced did.
 */
const TTL = settings.idleTtlMs;

function session() {
  const clock = new DeadlineClock();
  clock.set(START);
  const actor = createActor(media, { id: 's1', clock, input: { sessionId: 's1', at: START, settings } });
  const expired: string[] = [];
  actor.on('session.expired', (emitted) => expired.push(emitted.sessionId));
  actor.start();
  const check = (at: number) => actor.send({ type: 'session.idle_check', at });
  const deadline = () => idleTimerDeadline(actor.getSnapshot().context.idle_timer);
  const touch = (at: number) =>
    actor.send(commandFor({ kind: 'ingest', raw: { session_id: 's1', event: 'identity' } }, at, () => undefined));
  return { actor, clock, expired, check, deadline, touch };
}

describe('the idle check, sent by the host', () => {
  it('arms no timer: a session left a day past its TTL stays until the check is sent', () => {
    const s = session();
    s.clock.increment(TTL + 86_400_000);
    expect(s.actor.getSnapshot().value).toMatchObject({ presence: 'live' });
    expect(s.expired).toEqual([]);
    s.check(s.clock.now());
    expect(s.actor.getSnapshot().value).toMatchObject({ presence: 'expired' });
    expect(s.expired).toEqual(['s1']);
  });

  it('a check sent before the deadline changes nothing; one at the deadline ends an untouched session', () => {
    const s = session();
    const before = s.actor.getSnapshot();
    s.check(START + TTL - 1);
    expect(s.actor.getSnapshot().context).toBe(before.context);
    expect(s.expired).toEqual([]);
    s.check(START + TTL);
    expect(s.expired).toEqual(['s1']);
  });

  it('a session touched meanwhile re-arms for what remains of its TTL, and ends then', () => {
    const s = session();
    s.touch(START + 50_000);
    s.check(START + TTL);
    expect(s.actor.getSnapshot().value).toMatchObject({ presence: 'live' });
    expect(s.deadline()).toBe(START + 50_000 + TTL);
    s.check(START + 50_000 + TTL - 1);
    expect(s.expired).toEqual([]);
    // A check that comes late is taken at its deadline: the session was idle for the TTL then.
    s.check(START + 50_000 + TTL + 5_000);
    expect(s.expired).toEqual(['s1']);
  });
});
