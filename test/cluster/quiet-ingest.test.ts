import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quietIngest } from '../../src/cluster/quiet-ingest.js';
import type { InvocationInput } from '../../src/cluster/session-invocation.js';
import { runSessionInvocation } from '../../src/cluster/session-invocation.js';
import { withDirectIngest } from '../../src/machines/session/direct-ingest.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import type { StoredSession } from '../../src/store/ports.js';
import { commandFor, media, settings, START, step } from '../support/random-session-steps.js';

/**
 * `quietIngest` applies an SDK event to a kept session without rebuilding its machine. Random
 * sessions are kept as the cluster keeps them (one invocation per command, on the machine); before
 * each SDK event, both paths take the same kept session and event, and wherever the quiet path
 * answers, its outcome must be the machine's: reply, kept session, activity, commands, notices.
 */
const logic = withDirectIngest(media);

describe('an SDK event to a quiet kept session (quietIngest)', () => {
  it('comes to what the machine makes of it, over random sessions, and answers for most events', async () => {
    let quiet = 0;
    let events = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        let stored: StoredSession | undefined;
        let at = START;
        for (const s of steps) {
          if (s.kind === 'wait') {
            at += s.ms;
            // A wake at each deadline passed, as Restate's delayed call runs it; after odd waits the
            // next command comes first and finds a deadline due (the wake has not run yet).
            while (s.ms % 2 === 0 && stored && stored.wake_at !== null && stored.wake_at <= at) {
              stored =
                (
                  await runSessionInvocation({
                    logic,
                    sessionId: 's1',
                    settings,
                    at: Math.max(stored.wake_at, stored.summary.last_activity_at),
                    stored,
                  })
                ).stored ?? undefined;
            }
            continue;
          }
          at += 1;
          const input: InvocationInput = {
            logic,
            sessionId: 's1',
            settings,
            at,
            stored,
            command: (reply) => commandFor(s, at, reply),
          };
          const machine = await runSessionInvocation(input);
          if (s.kind === 'ingest') {
            events += 1;
            const fast = quietIngest(input);
            if (fast) {
              quiet += 1;
              expect(fast).toEqual(machine);
            }
          }
          stored = machine.stored ?? undefined;
        }
      }),
      { numRuns: 150 },
    );
    // Random sessions spend time cooling down, in calls and with drop-offs; most events still find them quiet.
    expect(quiet).toBeGreaterThan(events / 2);
  });

  it('leaves to the machine a new session, a session in a call, one with a deadline due, and other commands', async () => {
    const first = await runSessionInvocation({
      logic,
      sessionId: 's1',
      settings,
      at: START,
      stored: undefined,
      command: (reply) =>
        commandFor({ kind: 'ingest', raw: { session_id: 's1', event: 'screen_state', screen: 'intro' } }, START, reply),
    });
    const stored = first.stored!;
    const event = (at: number): InvocationInput => ({
      logic,
      sessionId: 's1',
      settings,
      at,
      stored,
      command: (reply) =>
        commandFor({ kind: 'ingest', raw: { session_id: 's1', event: 'screen_state', screen: 'selfie' } }, at, reply),
    });
    expect(quietIngest(event(START + 1))).toBeDefined();
    expect(quietIngest({ ...event(START + 1), stored: undefined })).toBeUndefined();
    expect(
      quietIngest({ ...event(START + 1), stored: { ...stored, summary: { ...stored.summary, voice: 'active' } } }),
    ).toBeUndefined();
    expect(quietIngest(event(stored.wake_at!))).toBeUndefined();
    expect(
      quietIngest({ ...event(START + 1), command: (reply) => commandFor({ kind: 'trigger' }, START + 1, reply) }),
    ).toBeUndefined();
    // A logic whose SDK events take the machine's path (its own ingest action) is never bypassed.
    expect(quietIngest({ ...event(START + 1), logic: media })).toBeUndefined();
    expect(
      quietIngest({
        ...event(START + 1),
        logic: withDirectIngest(sessionMachine.provide({ actions: { ingest: () => undefined } })),
      }),
    ).toBeUndefined();
  });
});
