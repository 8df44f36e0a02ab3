import { describe, expect, it } from 'vitest';
import { SESSION_OVERHEAD_BYTES } from '../../src/actor-system/memory-budget.js';
import { TRIMMED_MARK } from '../../src/domain/session-budget.js';
import type { Harness } from '../support/harness.js';
import { createHarness } from '../support/harness.js';
import { FILLER, stuffed, stuffing } from '../support/stuffed-session.js';

const post = (h: Harness, body: object) => h.http.post('/v1/events').send(body);
const held = (h: Harness, sessionId: string) => h.system.sessionHost.snapshot(sessionId)!.context.held_bytes;

describe('per-session budget (SESSION_MAX_BYTES)', () => {
  it('counts what a session holds at its exact JSON size, a legacy "unknown" session keyed per user included', async () => {
    const h = createHarness();
    const body = {
      event: 'component_input',
      user_id: 'u-7',
      screen: 'pan_details',
      component_id: 'pan',
      component_type: 'text_input',
      hint: 'ABCDE1234F',
      properties: { field_status: 'FILLED' },
    };
    for (const sessionId of ['s1', 'unknown', 'UNKNOWN']) {
      expect((await post(h, { session_id: sessionId, ...body })).status).toBe(200);
      const key = sessionId === 's1' ? 's1' : 'unknown:u-7';
      const { context } = h.system.sessionHost.snapshot(key)!;
      expect(context.latest_event?.session_id).toBe(key);
      const hints = context.component_hints.reduce((total, hint) => total + hint.bytes, 0);
      expect(held(h, key)).toBe(JSON.stringify(context.latest_event).length + hints);
    }
  });

  it('a 60 KB unknown field: latest_event keeps its known fields and a marker, the session keeps the rest', async () => {
    const h = createHarness({ env: { SESSION_MAX_BYTES: '16384' } });
    expect(
      (
        await post(h, {
          session_id: 's1',
          event: 'component_input',
          component_id: 'pan',
          component_type: 'text_input',
          hint: 'ABCDE1234F',
          screen: 'pan_details',
        })
      ).status,
    ).toBe(200);
    const res = await post(h, {
      session_id: 's1',
      event: 'screen_view',
      screen: 'pan_details',
      unknown_blob: FILLER,
      properties: { step: 2 },
    });
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual(['unknown_event_type', 'session_budget_exceeded']);
    // The event's activity item says the same: where cluster mode, which answers before the run, has it (docs/explanation/cluster.md).
    const items = (await h.http.get('/api/activity?session_id=s1&kind=event')).body.items as {
      payload: { warnings?: string[] };
    }[];
    expect(items.map((item) => item.payload.warnings)).toEqual([
      undefined,
      ['unknown_event_type', 'session_budget_exceeded'],
    ]);
    const session = (await h.http.get('/api/sessions/s1')).body;
    expect(session.latest_event).toEqual({
      session_id: 's1',
      event: 'screen_view',
      screen: 'pan_details',
      properties: { step: 2 },
      timestamp: expect.any(Number),
      [TRIMMED_MARK]: true,
    });
    expect(session.component_hints.map((hint: { component_id: string }) => hint.component_id)).toEqual(['pan']);
    expect(held(h, 's1')).toBeLessThanOrEqual(16_384);
  });

  it('a fully stuffed session stays within the budget: oldest hints go first, then oldest schemas; the newest stay', async () => {
    const h = createHarness({ env: { SESSION_MAX_BYTES: '65536' } });
    const note = 'n'.repeat(900);
    for (let i = 0; i < 100; i += 1) {
      await post(h, {
        session_id: 's1',
        event: 'component_input',
        component_id: `field-${i}`,
        hint: `value-${i}`,
        properties: { note },
        junk: stuffing(20_000),
      });
    }
    for (let i = 0; i < 10; i += 1) {
      await post(h, {
        session_id: 's1',
        event: 'screen_schema',
        properties: { screen_id: `screen-${i}`, components: [], notes: stuffing(8_000) },
      });
    }
    const last = await post(h, {
      session_id: 's1',
      event: 'component_input',
      component_id: 'field-last',
      hint: 'v',
      properties: { note },
      junk: FILLER,
    });
    expect(last.status).toBe(200);
    expect(last.body.warnings).toEqual(['session_budget_exceeded']);
    expect(held(h, 's1')).toBeLessThanOrEqual(65_536);
    const session = (await h.http.get('/api/sessions/s1')).body;
    const hints = session.component_hints.map((hint: { component_id: string }) => hint.component_id);
    expect(hints.at(-1)).toBe('field-last');
    expect(hints).not.toContain('field-0');
    const schemas = session.schemas.map((schema: { screen_id: string }) => schema.screen_id);
    expect(schemas.at(-1)).toBe('screen-9');
    expect(schemas).not.toContain('screen-0');
    expect(session.latest_event[TRIMMED_MARK]).toBe(true);
    expect(session.latest_event.junk).toBeUndefined();
  });

  it('an event that fits changes nothing and carries no marker or warning', async () => {
    const h = createHarness();
    const res = await post(h, { session_id: 's1', event: 'screen_view', screen: 'a', extra: 'kept' });
    expect(res.body.warnings).toEqual(['unknown_event_type']);
    const session = (await h.http.get('/api/sessions/s1')).body;
    expect(session.latest_event.extra).toBe('kept');
    expect(session.latest_event[TRIMMED_MARK]).toBeUndefined();
  });
});

/** New sessions, one event each, until the service refuses one (or `most` are admitted). */
async function fillUntilRefused(h: Harness, body: (sessionId: string) => object, prefix: string, most: number) {
  let admitted = 0;
  let refused: Awaited<ReturnType<typeof post>> | undefined;
  while (!refused && admitted < most) {
    const res = await post(h, body(`${prefix}${admitted}`));
    if (res.status === 200) admitted += 1;
    else refused = res;
  }
  return { admitted, refused };
}

describe('process-wide budget (MEMORY_BUDGET_MB)', () => {
  it('past it, new sessions get 503 with Retry-After, existing ones still work, and the estimate stays within it', async () => {
    const h = createHarness({ env: { MEMORY_BUDGET_MB: '64', SESSION_HIBERNATE_SECONDS: '0' } });
    const { admitted, refused } = await fillUntilRefused(h, stuffed, 's', 2000);
    expect(refused?.status).toBe(503);
    expect(refused?.headers['retry-after']).toBe('30');
    expect(refused?.body.detail).toMatch(/memory budget .*MEMORY_BUDGET_MB/);
    expect(h.system.sessionHost.has(`s${admitted}`)).toBe(false);
    const { memory } = (await h.http.get('/health')).body;
    expect(memory.sessions).toBe(admitted);
    // Each admitted session fitted when it came; it then grew by at most its own budget.
    expect(memory.used_bytes).toBeLessThanOrEqual(memory.budget_bytes + 2 * 65_536 + SESSION_OVERHEAD_BYTES);
    expect(admitted).toBeGreaterThan(100);
    expect((await post(h, { session_id: 's0', event: 'screen_view', screen: 'b' })).status).toBe(200);
  });

  it('counts a session of nested empty containers at what it costs the heap, not at twice its JSON', async () => {
    const h = createHarness({ env: { MEMORY_BUDGET_MB: '64', SESSION_HIBERNATE_SECONDS: '0' } });
    // 15,000 empty arrays: 45 KB of JSON, about 600 KB of heap once parsed (40 bytes each).
    const nested = (sessionId: string) => ({
      session_id: sessionId,
      event: 'component_input',
      properties: { a: Array.from({ length: 15_000 }, () => []) },
    });
    const { admitted, refused } = await fillUntilRefused(h, nested, 'n', 500);
    expect(refused?.status).toBe(503);
    const heldBytes = held(h, 'n0');
    expect(heldBytes).toBeGreaterThan(45_000);
    const { memory } = (await h.http.get('/health')).body;
    // Each counted at 40 heap bytes an array, at least: 13 times its JSON, where twice would let in seven times as many.
    expect(memory.used_bytes / memory.sessions).toBeGreaterThanOrEqual(15_000 * 40);
    expect(admitted).toBeLessThanOrEqual(Math.ceil(memory.budget_bytes / (15_000 * 40)));
    expect(admitted).toBeGreaterThan(10);
  });
});
