import { describe, expect, it } from 'vitest';
import { createHarness } from '../support/harness.js';

/** docs/explanation/privacy.md, "What is kept": an id that is no identifier is kept as its keyed digest. */
const DIGEST = /^h-[0-9a-f]{24}$/;

describe('ids that are no identifiers are keyed by digest', () => {
  it('a user id that is a mobile number is one digest everywhere, another user another, and the number is kept nowhere', async () => {
    const h = createHarness();
    // Two users whose numbers share their last four: a mask keeping the last four would name both alike.
    const first = '9123456789';
    const second = '9876546789';
    await h.http.post('/v1/assistant/session/start').send({ session_id: 'dg-1', user_id: first }).expect(200);
    await h.http
      .post('/v1/events')
      .send({ session_id: 'dg-2', user_id: first, event: 'screen_view', screen: 'pan_details' })
      .expect(200);
    await h.http
      .post('/v1/events')
      .send({
        session_id: 'dg-3',
        user_id: second,
        event: 'screen_view',
        screen: 'pan_details',
        properties: { message_id: '98-76-54-32-10' },
      })
      .expect(200);
    const userOf = async (id: string) => (await h.http.get(`/api/sessions/${id}`).expect(200)).body.user_id as string;
    const [a, b, c] = [await userOf('dg-1'), await userOf('dg-2'), await userOf('dg-3')];
    expect(a).toMatch(DIGEST);
    expect(b).toBe(a);
    expect(c).toMatch(DIGEST);
    expect(c).not.toBe(a);
    // Nested ids too; the shape of what was there is still listed.
    const event = (await h.http.get('/api/sessions/dg-3').expect(200)).body.latest_event;
    expect(event.properties.message_id).toMatch(DIGEST);
    expect(event.redacted_fields).toContainEqual(
      expect.objectContaining({ path: 'properties.message_id', digits: 10 }),
    );
    // A legacy session keyed by the same user id carries the same digest in its key.
    await h.http
      .post('/v1/events')
      .send({ session_id: 'unknown', user_id: first, event: 'screen_view', screen: 'pan_details' })
      .expect(200);
    expect((await h.http.get(`/api/sessions/unknown:${a}`).expect(200)).body.user_id).toBe(a);
    const everything = JSON.stringify([
      (await h.http.get('/api/activity?limit=1000')).body,
      (await h.http.get('/api/sessions')).body,
      h.logs.text,
    ]);
    for (const raw of [first, second, '98-76-54-32-10']) expect(everything).not.toContain(raw);
  });

  it('erasing a user by the number the app knows removes that user only, not another with the same last four', async () => {
    const h = createHarness();
    await h.http.post('/v1/assistant/session/start').send({ session_id: 'er-1', user_id: '9123456789' }).expect(200);
    await h.http.post('/v1/assistant/session/start').send({ session_id: 'er-2', user_id: '9876546789' }).expect(200);
    const res = await h.http.delete('/api/users/9123456789').expect(200);
    expect(res.body.removed.sessions).toBe(1);
    expect((await h.http.get('/api/sessions/er-1')).status).toBe(404);
    expect((await h.http.get('/api/sessions/er-2')).status).toBe(200);
  });
});
