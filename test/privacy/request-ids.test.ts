import { describe, expect, it } from 'vitest';
import { createHarness } from '../support/harness.js';

/**
 * Request ids are the service's own correlation ids: redaction must never mangle one, or the id a
 * log line carries no longer matches the X-Request-ID header the client got. A UUID whose last
 * group happens to be all digits (`…-551234568277`) read as a 12-digit number and was masked.
 */

const ALL_DIGIT_TAIL = '5f2c1a3b-9e4d-4a7b-8c1d-551234568277';

interface LogLine {
  msg?: string;
  req?: { id?: string };
  request_id?: string;
}

describe('request ids survive redaction', () => {
  it('a UUID with an all-digit last group is echoed, logged and traced as sent', async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    const res = await h.http
      .post('/v1/events')
      .set('X-Request-ID', ALL_DIGIT_TAIL)
      .send({ session_id: 'r1', event: 'screen_state', screen: 'pan_details' })
      .expect(200);
    expect(res.headers['x-request-id']).toBe(ALL_DIGIT_TAIL);
    const lines = h.logs.parsed() as LogLine[];
    expect(lines.filter((line) => line.msg === 'request completed').map((line) => line.req?.id)).toContain(
      ALL_DIGIT_TAIL,
    );
    const items = (await h.http.get('/api/activity').query({ session_id: 'r1' })).body.items as {
      trace: { request_id: string };
    }[];
    expect(items[0]!.trace.request_id).toBe(ALL_DIGIT_TAIL);
  });

  it('every server-made request id in a log line is the one the response header carried', async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    const sent: string[] = [];
    for (let i = 0; i < 60; i += 1) {
      const res = await h.http
        .post('/v1/events')
        .send({ session_id: `r${i}`, event: 'screen_state', screen: 'pan_details' })
        .expect(200);
      sent.push(String(res.headers['x-request-id']));
    }
    const logged = (h.logs.parsed() as LogLine[])
      .filter((line) => line.msg === 'request completed')
      .map((line) => line.req?.id);
    expect(logged).toEqual(sent);
  });

  it('a log object with ids and an identity value: the ids are kept, the value is masked', () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    h.logger.info(
      {
        request_id: ALL_DIGIT_TAIL,
        dispatch: `AD_${ALL_DIGIT_TAIL}`,
        detail: `request ${ALL_DIGIT_TAIL} from 9876543210`,
      },
      'x',
    );
    const [line] = h.logs.parsed();
    expect(line).toMatchObject({
      request_id: ALL_DIGIT_TAIL,
      dispatch: `AD_${ALL_DIGIT_TAIL}`,
      detail: `request ${ALL_DIGIT_TAIL} from ******3210`,
    });
  });
});
