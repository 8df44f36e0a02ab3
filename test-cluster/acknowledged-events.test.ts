import { describe, expect, it } from 'vitest';
import { TRIMMED_MARK } from '../src/domain/session-budget.js';
import { clusterCalls, eventually } from './cluster-calls.js';
import { suiteCluster } from './fixtures/suite-cluster.js';

/** Small enough that one event of stuffing is past it. */
const SESSION_MAX_BYTES = 16_384;

const { cluster } = suiteCluster({ name: 'cluster-acknowledged', processes: 2, env: () => ({ SESSION_MAX_BYTES: String(SESSION_MAX_BYTES) }), startTimeoutMs: 180_000 });
const { post, get, activityOf } = clusterCalls(cluster);

/** Client data of about `bytes`, in strings short enough for the privacy pass to keep whole. */
const stuffing = (bytes: number): Record<string, string> => Object.fromEntries(Array.from({ length: Math.ceil(bytes / 2000) }, (_, index) => [`f${index}`, 'x'.repeat(2000)]));

describe('an SDK event acknowledged before its session runs it (SESSION_HOST=restate: real Restate server, real redis-server)', () => {
  it('past SESSION_MAX_BYTES: the answer, given before the run, has no budget warning; the activity item of the event has it, and the session is trimmed', async () => {
    const answer = await post('/v1/events', { session_id: 'over-budget', event: 'component_input', screen: 'pan_details', component_id: 'pan', junk: stuffing(20_000) });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ok', ingested_at: expect.any(Number) });
    const [item] = await eventually(
      () => activityOf('over-budget', 'event'),
      (items) => items.length > 0,
    );
    expect(item!.payload.warnings).toEqual(['session_budget_exceeded']);
    const session = await get('/api/sessions/over-budget');
    expect((session.body.latest_event as Record<string, unknown>)[TRIMMED_MARK]).toBe(true);
    // An unknown type is in the answer as well: the type alone decides it, before any run.
    const unknown = await post('/v1/events', { session_id: 'over-budget', event: 'workflow_model', screen: 'pan_details', junk: stuffing(20_000) });
    expect(unknown.body.warnings).toEqual(['unknown_event_type']);
    const items = await eventually(
      () => activityOf('over-budget', 'event'),
      (found) => found.length > 1,
    );
    expect(items[1]!.payload.warnings).toEqual(['unknown_event_type', 'session_budget_exceeded']);
  });
});
