import { describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { advance, createHarness } from '../support/harness.js';

const failure = {
  session_id: 's1',
  event: 'validation_failed',
  screen: 'pan_details',
  component_id: 'pan_field',
  component_type: 'text_input',
  errors: ['pan_invalid'],
};

const send = (h: Harness, body: Record<string, unknown>, headers: Record<string, string>) =>
  h.http.post('/v1/events').set(headers).send(body);
const retryCounts = async (h: Harness) =>
  (await h.http.get('/api/sessions/s1')).body.retry_counts as Record<string, number>;

describe('replays: the same request id from the same client within REPLAY_WINDOW_SECONDS is applied once', () => {
  it('50 copies of one validation_failed with one X-Request-ID count once, each answered as the first', async () => {
    const h = createHarness();
    const answers = [];
    for (let i = 0; i < 50; i += 1) answers.push(await send(h, failure, { 'X-Request-ID': 'req-0001' }));
    expect(new Set(answers.map((res) => res.status))).toEqual(new Set([200]));
    expect(new Set(answers.map((res) => JSON.stringify(res.body))).size).toBe(1);
    expect(await retryCounts(h)).toEqual({ pan_field: 1 });
    expect(h.system.activity.list({ limit: 100, kind: 'event' })).toHaveLength(1);
  });

  it('copies sent while the first is still under way wait for it and get its answer; an Idempotency-Key works the same', async () => {
    const h = createHarness();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => send(h, failure, { 'Idempotency-Key': 'key-1' })),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(10).fill(200));
    expect(await retryCounts(h)).toEqual({ pan_field: 1 });
  });

  it('the same id on a different request is refused with 422 and changes nothing', async () => {
    const h = createHarness();
    await send(h, failure, { 'X-Request-ID': 'req-0002' });
    const other = await send(h, { ...failure, component_id: 'dob_field' }, { 'X-Request-ID': 'req-0002' });
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatch(/^X-Request-ID: already used for a different request/);
    expect(await retryCounts(h)).toEqual({ pan_field: 1 });
  });

  it('the same JSON with its keys in another order, at every depth, is the same request: answered as the first, applied once', async () => {
    const h = createHarness();
    const nested = {
      ...failure,
      properties: { field_status: 'ERROR', semantic_slot: 'pan', display: { value: 'x', length: 1 } },
    };
    const reordered = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(reordered)
        : typeof value === 'object' && value !== null
          ? Object.fromEntries(
              Object.entries(value)
                .reverse()
                .map(([k, v]) => [k, reordered(v)]),
            )
          : value;
    const first = await send(h, nested, { 'Idempotency-Key': 'key-order' });
    expect(first.status).toBe(200);
    const copy = reordered(nested) as Record<string, unknown>;
    expect(JSON.stringify(copy)).not.toBe(JSON.stringify(nested));
    const again = await send(h, copy, { 'Idempotency-Key': 'key-order' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await retryCounts(h)).toEqual({ pan_field: 1 });
    expect(h.system.activity.list({ limit: 100, kind: 'event' })).toHaveLength(1);
  });

  it('a refused first request is not repeated: its retry with the same id is run', async () => {
    const h = createHarness();
    const refused = await send(h, { ...failure, errors: 'not a list' }, { 'X-Request-ID': 'req-0003' });
    expect(refused.status).toBe(422);
    // Not a different request: a corrected one, run because the first changed nothing.
    expect((await send(h, failure, { 'X-Request-ID': 'req-0003' })).status).toBe(200);
    expect(await retryCounts(h)).toEqual({ pan_field: 1 });
  });

  it('another client, or the same id after the window, is a request of its own', async () => {
    const h = createHarness({ env: { API_KEY: 'k1,k2', REPLAY_WINDOW_SECONDS: '300' } });
    await send(h, failure, { 'X-Request-ID': 'req-0004', 'X-API-Key': 'k1' });
    await send(h, failure, { 'X-Request-ID': 'req-0004', 'X-API-Key': 'k2' });
    expect((await h.http.get('/api/sessions/s1').set('X-API-Key', 'k1')).body.retry_counts).toEqual({ pan_field: 2 });
    advance(h.clock, 301_000, 60_000);
    await send(h, failure, { 'X-Request-ID': 'req-0004', 'X-API-Key': 'k1' });
    expect((await h.http.get('/api/sessions/s1').set('X-API-Key', 'k1')).body.retry_counts).toEqual({ pan_field: 3 });
  });

  it('REPLAY_WINDOW_SECONDS=0 turns it off', async () => {
    const h = createHarness({ env: { REPLAY_WINDOW_SECONDS: '0' } });
    for (let i = 0; i < 3; i += 1) await send(h, failure, { 'X-Request-ID': 'req-0005' });
    expect(await retryCounts(h)).toEqual({ pan_field: 3 });
  });
});
