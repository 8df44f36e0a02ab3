import { describe, expect, it } from 'vitest';
import { apiDocument } from '../../src/http/api-document.js';
import type { Harness } from '../support/harness.js';
import { advance, createHarness } from '../support/harness.js';

const SECOND = 1000;

interface Summary {
  session_id: string;
  user_id: string | null;
  screen: string | null;
  flow: unknown;
  voice: string;
  cooldown_remaining_ms: number;
  last_activity_at: string;
  status: 'running' | 'hibernated';
}
interface Page {
  sessions: Summary[];
  next_cursor: string | null;
  total: number;
}

const event = (h: Harness, body: object) => h.http.post('/v1/events').send(body).expect(200);
const list = async (h: Harness, query: Record<string, string> = {}): Promise<Page> =>
  (await h.http.get('/api/sessions').query(query).expect(200)).body as Page;

/** Every page in turn, following next_cursor. */
async function allPages(h: Harness, query: Record<string, string>): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null | undefined;
  do {
    const page = await list(h, cursor ? { ...query, cursor } : query);
    pages.push(page);
    cursor = page.next_cursor;
  } while (cursor);
  return pages;
}

/** Sessions s00..s(n-1), one a second, each on a screen of its own parity. */
async function seed(h: Harness, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1) {
    await event(h, {
      session_id: `s${String(i).padStart(2, '0')}`,
      user_id: `user-${i}`,
      event: 'screen_view',
      screen: i % 2 === 0 ? 'pan_details' : 'selfie_capture',
    });
    advance(h.clock, SECOND);
  }
}

describe('GET /api/sessions', () => {
  it('summarises each session held: screen, voice state, cooldown remaining, last activity, running or hibernated', async () => {
    const h = createHarness({ env: { SESSION_HIBERNATE_SECONDS: '60' } });
    await event(h, { session_id: 'quiet', user_id: 'u-quiet', event: 'screen_view', screen: 'pan_details' });
    advance(h.clock, 120 * SECOND);
    await event(h, { session_id: 'busy', user_id: 'u-busy', event: 'screen_view', screen: 'pan_details' });
    const fired = await h.http
      .post('/v1/assistant/trigger/evaluate')
      .send({ session_id: 'busy', signals: { screen: 'pan_details', time_spent: 25, errors: [], idle_seconds: 0 } })
      .expect(200);
    expect(fired.body.trigger).toBe(true);
    await h.http.post('/v1/assistant/session/start').send({ session_id: 'busy' }).expect(200);
    advance(h.clock, 10 * SECOND);

    const page = await list(h);
    expect(page.total).toBe(2);
    expect(page.next_cursor).toBeNull();
    const [busy, quiet] = page.sessions;
    expect(busy).toEqual({
      session_id: 'busy',
      user_id: 'u-busy',
      screen: 'pan_details',
      flow: null,
      voice: 'active',
      cooldown_remaining_ms: 50 * SECOND,
      last_activity_at: new Date(h.clock.now() - 10 * SECOND).toISOString(),
      status: 'running',
    });
    expect(quiet).toMatchObject({
      session_id: 'quiet',
      voice: 'inactive',
      cooldown_remaining_ms: 0,
      status: 'hibernated',
    });
    // Listing wakes nobody.
    expect(h.system.sessionHost.counts).toEqual({ running: 1, hibernated: 1 });
  });

  it('pages with a cursor through every session exactly once, in order, both ways and by either key', async () => {
    const h = createHarness();
    await seed(h, 23);
    const ids = Array.from({ length: 23 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    for (const [sort, order, expected] of [
      ['last_activity', 'desc', [...ids].reverse()],
      ['last_activity', 'asc', ids],
      ['session_id', 'asc', ids],
      ['session_id', 'desc', [...ids].reverse()],
    ] as const) {
      const pages = await allPages(h, { limit: '5', sort, order });
      expect(pages.map((page) => page.sessions.length)).toEqual([5, 5, 5, 5, 3]);
      expect(pages.flatMap((page) => page.sessions.map((s) => s.session_id))).toEqual(expected);
      expect(pages.every((page) => page.total === 23)).toBe(true);
    }
    // A session touched between pages moves to the front; paging on shows the rest, none twice.
    const first = await list(h, { limit: '5' });
    await event(h, { session_id: 's00', event: 'identity' });
    const rest = await allPages(h, { limit: '5', cursor: first.next_cursor! });
    const seen = [...first.sessions, ...rest.flatMap((page) => page.sessions)].map((s) => s.session_id);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('filters by voice, screen and text, the total counting matches over every page', async () => {
    const h = createHarness();
    await seed(h, 6);
    await h.http.post('/v1/assistant/session/start').send({ session_id: 's03' }).expect(200);

    const active = await list(h, { voice: 'active' });
    expect(active.sessions.map((s) => s.session_id)).toEqual(['s03']);
    expect((await list(h, { voice: 'inactive' })).total).toBe(5);
    const selfie = await list(h, { screen: 'SELFIE_capture', sort: 'session_id', order: 'asc' });
    expect(selfie.sessions.map((s) => s.session_id)).toEqual(['s01', 's03', 's05']);
    expect((await list(h, { q: 'USER-4' })).sessions.map((s) => s.session_id)).toEqual(['s04']);
    expect((await list(h, { q: 'pan_', limit: '2' })).total).toBe(3);
    expect((await list(h, { q: 'nobody' })).sessions).toEqual([]);
  });

  it('answers 422 naming the parameter for a bad query or a cursor it did not give, and lists nothing', async () => {
    const h = createHarness();
    await seed(h, 2);
    for (const [query, problem] of [
      [{ limit: '0' }, 'limit'],
      [{ limit: '501' }, 'limit'],
      [{ voice: 'sometimes' }, 'voice'],
      [{ sort: 'user_id' }, 'sort'],
      [{ order: 'up' }, 'order'],
      [{ q: 'x'.repeat(201) }, 'q'],
      [{ cursor: 'bm90LWEtY3Vyc29y' }, 'cursor'],
      [{ cursor: '%%%' }, 'cursor'],
    ] as const) {
      const res = await h.http.get('/api/sessions').query(query);
      expect(res.status, JSON.stringify(query)).toBe(422);
      expect(res.body.detail).toContain(problem);
      expect(res.body.detail).not.toContain('bm90LWEtY3Vyc29y');
    }
  });

  it('takes any cursor of the documented form as the position it names, in either sort order', async () => {
    const h = createHarness();
    await seed(h, 6);
    const pattern = new RegExp(
      (
        apiDocument() as {
          paths: Record<string, { get: { parameters: { name: string; schema: { pattern: string } }[] } }>;
        }
      ).paths['/api/sessions']!.get.parameters.find((p) => p.name === 'cursor')!.schema.pattern,
    );
    const given = (await list(h, { limit: '2', sort: 'session_id', order: 'asc' })).next_cursor!;
    expect(given).toMatch(pattern);
    // Made up, never given: after s02 by id, after the time of s03 (then s02, s01, s00) by last activity.
    const madeUp = (time: number, id: string) => `${time}~${id}`;
    expect(madeUp(0, 's02')).toMatch(pattern);
    const byId = await list(h, { sort: 'session_id', order: 'asc', cursor: madeUp(0, 's02') });
    expect(byId.sessions.map((s) => s.session_id)).toEqual(['s03', 's04', 's05']);
    const s03 = Date.parse((await list(h, { q: 's03' })).sessions[0]!.last_activity_at);
    const byTime = await list(h, { cursor: madeUp(s03, 's03') });
    expect(byTime.sessions.map((s) => s.session_id)).toEqual(['s02', 's01', 's00']);
    // The cursor of one sort order continues after the same session in the other.
    expect((await list(h, { cursor: given })).sessions.map((s) => s.session_id)).toEqual(['s00']);
    const wrong = await h.http.get('/api/sessions').query({ cursor: '1~a b' });
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail).toBe("cursor: must be a page's next_cursor: a time in ms, '~', a session id");
  });

  it('needs the API key like every /api route', async () => {
    const h = createHarness({ env: { API_KEY: 'k' } });
    expect((await h.http.get('/api/sessions')).status).toBe(401);
    expect((await h.http.get('/api/sessions').set('X-API-Key', 'k')).status).toBe(200);
  });
});

describe('GET /api/sessions/{session_id}/agent-context', () => {
  it("serves what the agent would get, as the agent's own fetch does, without recording a fetch or waking the session", async () => {
    const h = createHarness({ env: { SESSION_HIBERNATE_SECONDS: '60' } });
    await event(h, {
      session_id: 's1',
      user_id: 'u1',
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'pan',
      component_type: 'text_input',
      hint: 'ABCDE1234F',
    });
    advance(h.clock, 120 * SECOND);
    expect(h.system.sessionHost.counts).toEqual({ running: 0, hibernated: 1 });

    const peek = await h.http.get('/api/sessions/s1/agent-context').expect(200);
    expect(h.system.sessionHost.counts).toEqual({ running: 0, hibernated: 1 });
    const kinds = (await h.http.get('/api/activity').query({ session_id: 's1' })).body.items.map(
      (item: { kind: string }) => item.kind,
    );
    expect(kinds).not.toContain('voice_agent_context_fetch');
    expect(JSON.stringify(peek.body)).not.toContain('ABCDE1234F');

    const served = await h.http.get('/v1/assistant/context/s1').expect(200);
    expect(peek.body).toEqual(served.body);
    expect((await h.http.get('/api/sessions/nobody/agent-context')).status).toBe(404);
    expect((await h.http.get('/api/sessions/bad%20id/agent-context')).status).toBe(422);
  });
});

describe('flow progress in a summary', () => {
  const summaryOf = async (h: ReturnType<typeof createHarness>, sessionId: string) =>
    (
      (await h.http.get('/api/sessions').query({ q: sessionId }).expect(200)).body.sessions as {
        session_id: string;
        flow: unknown;
      }[]
    ).find((item) => item.session_id === sessionId);

  it('is where the current screen stands in the sequence the SDK set, as /v1/flows/set reports it', async () => {
    const h = createHarness();
    const steps = ['phone_otp', 'email_otp', 'pan_details', 'personal_details'];
    const set = await h.http
      .post('/v1/flows/set')
      .send({ session_id: 'f1', flow_key: 'kyc', step_sequence: steps, current_step: 'pan_details' })
      .expect(200);
    expect(set.body.progress).toMatchObject({ position: 3, total: 4 });
    await h.http
      .post('/v1/events')
      .send({ session_id: 'f1', event: 'screen_state', screen: 'pan_details' })
      .expect(200);
    expect((await summaryOf(h, 'f1'))?.flow).toEqual({
      flow_key: 'kyc',
      current_step: 'pan_details',
      position: 3,
      total: 4,
      percent: 75,
    });
    await h.http.post('/v1/events').send({ session_id: 'f1', event: 'screen_state', screen: 'elsewhere' }).expect(200);
    expect((await summaryOf(h, 'f1'))?.flow).toMatchObject({ position: null, percent: null, total: 4 });
  });

  it('is null for a session with no flow, and after the flow is cleared', async () => {
    const h = createHarness();
    await h.http
      .post('/v1/events')
      .send({ session_id: 'f2', event: 'screen_state', screen: 'pan_details' })
      .expect(200);
    expect((await summaryOf(h, 'f2'))?.flow).toBeNull();
    await h.http
      .post('/v1/flows/set')
      .send({ session_id: 'f2', flow_key: 'kyc', step_sequence: ['pan_details'] })
      .expect(200);
    expect((await summaryOf(h, 'f2'))?.flow).toMatchObject({ flow_key: 'kyc', position: 1, total: 1 });
    await h.http.post('/v1/flows/set').send({ session_id: 'f2', flow_key: 'kyc', step_sequence: [] }).expect(200);
    expect((await summaryOf(h, 'f2'))?.flow).toBeNull();
  });
});
