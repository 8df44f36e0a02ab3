import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACTIVITY_ACTOR_BYTES, ACTIVITY_READER_BYTES } from '../../src/actor-system/activity-actor.js';
import { HELD_BYTES_FACTOR, SESSION_OVERHEAD_BYTES } from '../../src/actor-system/memory-budget.js';
import type { Harness } from '../support/harness.js';
import { TEST_STORE, advance, createHarness, settle } from '../support/harness.js';

const SESSIONS = ['s0', 's1', 's2', 's3'];
const HIBERNATE_SECONDS = 10;
const IDLE_TTL_SECONDS = 40;

/** Client data of about `chunks` × 2 KB, in strings short enough for the privacy pass to keep. */
const stuffing = (chunks: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: chunks }, (_, i) => [`f${i}`, 'x'.repeat(2000)]));

type Step = { kind: 'event'; session: number; chunks: number } | { kind: 'wait'; seconds: number };

const steps = fc.array(
  fc.oneof(
    fc.record({
      kind: fc.constant('event' as const),
      session: fc.integer({ min: 0, max: SESSIONS.length - 1 }),
      chunks: fc.integer({ min: 0, max: 3 }),
    }),
    fc.record({ kind: fc.constant('wait' as const), seconds: fc.integer({ min: 1, max: IDLE_TTL_SECONDS + 5 }) }),
  ),
  { minLength: 1, maxLength: 25 },
);

/**
 * What the budget should hold, recomputed from the sessions themselves: each session it counts at
 * its fixed part plus its client data at twice its size or its density, beside what the activity actor holds. A hibernated session counts with STORE=memory (its
 * data is still in the process) and not with STORE=sqlite (it is on disk only).
 */
async function expectedUse(h: Harness, store: 'memory' | 'sqlite'): Promise<{ used_bytes: number; sessions: number }> {
  const page = (await h.http.get('/api/sessions?limit=100')).body as {
    sessions: { session_id: string; status: 'running' | 'hibernated' }[];
  };
  // The activity actor holds its line beside the sessions' (src/actor-system/activity-actor.ts).
  let used = ACTIVITY_ACTOR_BYTES + ACTIVITY_READER_BYTES * h.system.activityActor.readerNames().length;
  let sessions = 0;
  for (const { session_id: sessionId, status } of page.sessions) {
    if (store === 'sqlite' && status === 'hibernated') continue;
    const { held_bytes: heldBytes = 0, held_density: density = HELD_BYTES_FACTOR } =
      h.system.sessionHost.snapshot(sessionId)!.context;
    used += SESSION_OVERHEAD_BYTES + Math.ceil(Math.max(HELD_BYTES_FACTOR, density) * heldBytes);
    sessions += 1;
  }
  return { used_bytes: used, sessions };
}

describe('the memory budget kept by session accounts', () => {
  const store = TEST_STORE;
  it(`counts exactly what the sessions held hold, through events, hibernation, waking and expiry (STORE=${store})`, async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (plan: Step[]) => {
        const h = createHarness({
          env: {
            SESSION_HIBERNATE_SECONDS: String(HIBERNATE_SECONDS),
            SESSION_IDLE_TTL_SECONDS: String(IDLE_TTL_SECONDS),
          },
        });
        try {
          for (const step of plan) {
            if (step.kind === 'wait') advance(h.clock, step.seconds * 1000);
            else {
              const body = {
                session_id: SESSIONS[step.session],
                event: 'screen_view',
                screen: 'pan_details',
                properties: stuffing(step.chunks),
              };
              expect((await h.http.post('/v1/events').send(body)).status).toBe(200);
            }
            await settle();
            const { used_bytes, sessions } = (await h.http.get('/health')).body.memory as {
              used_bytes: number;
              sessions: number;
            };
            expect({ used_bytes, sessions }).toEqual(await expectedUse(h, store));
          }
        } finally {
          h.system.stop();
        }
      }),
      { numRuns: 20 },
    );
  });
});
