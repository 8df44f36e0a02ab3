// Runs on one store: inputs are refused by the schemas before any store, and what a refusal leaves is read the same way on each; vitest.config.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import { ActivityQuery } from '../../src/http/schemas/common.schema.js';
import { TriggerEvaluateIn, TriggerSignalsIn } from '../../src/http/schemas/trigger.schema.js';
import { AssistantStartIn, AssistantStopIn } from '../../src/http/schemas/voice.schema.js';
import type { Harness } from '../support/harness.js';
import { createHarness } from '../support/harness.js';

/**
 * Every endpoint through the real app with inputs built from its zod schema's fields, each given
 * plausible values and hostile ones (deep nesting, sizes at and past the limits, any unicode,
 * keys that are JavaScript property names). Whatever arrives: never a 5xx, and a refusal
 * changes nothing (the session as read back, and the activity recorded).
 */

const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

/** JSON text of an object with exactly these entries: `__proto__` stays a key, as a client can send it. */
const objectText = (entries: [string, string][]): string =>
  `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;

const unicodeText = fc.string({ unit: 'binary', maxLength: 40 });
// From just past the limit to 20,000 levels (deep enough to overflow any recursive walk), within the body limit.
const nested = fc
  .tuple(fc.oneof(fc.integer({ min: 20, max: 100 }), fc.integer({ min: 5_000, max: 20_000 })), fc.boolean())
  .map(([depth, arrays]) =>
    arrays
      ? '['.repeat(depth) + ']'.repeat(depth)
      : '{"a":'.repeat(Math.min(depth, 6_000)) + '1' + '}'.repeat(Math.min(depth, 6_000)),
  );
const bigString = fc.integer({ min: 200, max: 70_000 }).map((length) => JSON.stringify('x'.repeat(length)));

/** Any JSON value as text, hostile shapes included. */
const hostileValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
  { weight: 3, arbitrary: unicodeText.map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: nested },
  { weight: 1, arbitrary: bigString },
  { weight: 1, arbitrary: fc.constantFrom('null', 'true', '-1', '1e308', '0.5', '""', '[]', '{}') },
  {
    weight: 1,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.constantFrom(...PROTOTYPE_KEYS),
          fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)),
        ),
        { maxLength: 3 },
      )
      .map(objectText),
  },
);

const SESSION = 'fz';
const sessionIdValue = fc.oneof(
  { weight: 4, arbitrary: fc.constant(JSON.stringify(SESSION)) },
  { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS).map((key) => JSON.stringify(key)) },
  { weight: 2, arbitrary: hostileValue },
);

/**
 * A body from a schema's field names: each field absent, plausible, or hostile, in any order, plus
 * unknown and prototype-named keys.
 */
function bodyFrom(fields: string[], plausible: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const field = (name: string) =>
    fc
      .option(
        fc.oneof(
          { weight: 4, arbitrary: plausible[name] ?? unicodeText.map((value) => JSON.stringify(value)) },
          { weight: 1, arbitrary: hostileValue },
        ),
        { nil: undefined, freq: 10 },
      )
      .map((value) => [name, value] as const);
  const extra = fc.array(fc.tuple(fc.oneof(unicodeText, fc.constantFrom(...PROTOTYPE_KEYS)), hostileValue), {
    maxLength: 3,
  });
  return fc.tuple(fc.tuple(...fields.map(field)), extra).map(([known, unknown]) => {
    const entries = [
      ...known.filter((entry): entry is readonly [string, string] => entry[1] !== undefined),
      ...unknown,
    ].map(([key, value]) => [key, value] as [string, string]);
    return objectText(entries);
  });
}

/**
 * A valid body with one field (known or not) given a hostile value: most of what reaches a
 * session's state comes this way, past validation.
 */
function mutatedFrom(valid: fc.Arbitrary<Record<string, string>>, fields: string[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...fields) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS) },
    { weight: 1, arbitrary: unicodeText },
  );
  return fc
    .tuple(valid, key, hostileValue)
    .map(([base, name, value]) =>
      objectText([...Object.entries(base).filter(([field]) => field !== name), [name, value]]),
    );
}

const validEvent = fc.record({
  session_id: fc.constant(JSON.stringify(SESSION)),
  event: fc
    .constantFrom('component_input', 'identity', 'screen_schema', 'validation_failed', 'made_up')
    .map((value) => JSON.stringify(value)),
  component_id: fc.constant('"pan"'),
  hint: fc.constantFrom('"ABCDE1234F"', '"x"'),
  properties: fc.constant('{"screen_id":"pan_details","components":[]}'),
});

const eventBody = fc.oneof(
  mutatedFrom(validEvent, Object.keys(EventInSchema.shape)),
  bodyFrom(Object.keys(EventInSchema.shape), {
    session_id: sessionIdValue,
    event: fc
      .constantFrom(
        'component_input',
        'component_input',
        'identity',
        'screen_schema',
        'validation_failed',
        'voice_conversation_turn',
        'made_up',
      )
      .map((value) => JSON.stringify(value)),
    component_id: fc.oneof(
      fc.constant('"pan"'),
      fc.constantFrom(...PROTOTYPE_KEYS).map((key) => JSON.stringify(key)),
    ),
    hint: fc.constantFrom('"ABCDE1234F"', '"4111 1111 1111 1111"', '""'),
    properties: fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).map((value) =>
        JSON.stringify({
          screen_id: 'pan_details',
          components: [{ id: 'pan', validations: [{ pattern: '[A-Z]{5}' }] }],
          value,
        }),
      ),
      nested.map((value) => `{"x":${value}}`),
    ),
  }),
);
const triggerBody = bodyFrom(Object.keys(TriggerEvaluateIn.shape), {
  session_id: sessionIdValue,
  signals: bodyFrom(Object.keys(TriggerSignalsIn.shape), {
    time_spent: fc.integer({ min: -5, max: 1e6 }).map(String),
    errors: fc.array(unicodeText).map((value) => JSON.stringify(value)),
  }),
});
const startBody = bodyFrom(Object.keys(AssistantStartIn.shape), { session_id: sessionIdValue });
const stopBody = bodyFrom(Object.keys(AssistantStopIn.shape), { session_id: sessionIdValue });

const pathSegment = fc
  .oneof(
    fc.constant(SESSION),
    unicodeText,
    fc.constantFrom(...PROTOTYPE_KEYS),
    fc.string({ minLength: 120, maxLength: 300 }),
  )
  .map((value) => encodeURIComponent(value));
const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...Object.keys(ActivityQuery.shape), ...PROTOTYPE_KEYS, 'client_id'), unicodeText),
      fc.oneof(unicodeText, fc.integer().map(String), fc.constantFrom('event', 'trigger', '-1', '1e9')),
    ),
    { maxLength: 4 },
  )
  .map((pairs) => pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&'));

type Request =
  | { method: 'post'; path: string; body: string; contentType: string }
  | { method: 'get' | 'head'; path: string; headers: Record<string, string> };

const request: fc.Arbitrary<Request> = fc.oneof(
  ...(
    [
      ['/v1/events', eventBody, 4],
      ['/v1/assistant/trigger/evaluate', triggerBody, 1],
      ['/v1/assistant/session/start', startBody, 1],
      ['/v1/assistant/session/stop', stopBody, 1],
    ] as const
  ).map(([path, body, weight]) => ({
    weight,
    arbitrary: fc.record({
      method: fc.constant('post' as const),
      path: fc.constant(path as string),
      body: fc.oneof(
        { weight: 8, arbitrary: body },
        { weight: 1, arbitrary: hostileValue },
        { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
      ),
      contentType: fc.constantFrom(
        'application/json',
        'application/json',
        'application/json; charset=utf-8',
        'text/plain',
        'application/json; charset=latin1',
      ),
    }),
  })),
  fc.record({
    method: fc.constant('get' as const),
    path: fc.oneof(
      pathSegment.map((id) => `/api/sessions/${id}`),
      pathSegment.map((id) => `/v1/assistant/context/${id}`),
      pathSegment.map((id) => `/api/reengagement/${id}`),
      queryString.map((query) => `/api/activity?${query}`),
      queryString.map((query) => `/v1/sdk/config?${query}`),
      queryString.map((query) => `/api/features?${query}`),
    ),
    headers: fc.record(
      {
        'X-Client-ID': fc.oneof(
          fc.constant('kycis_demo'),
          unicodeText.filter((value) => /^[\x20-\x7e]*$/.test(value)),
        ),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({
    // HEAD answers at once where GET would open the stream: the query and header are checked all the same.
    method: fc.constant('head' as const),
    path: queryString.map((query) => `/api/activity/stream?${query}`),
    headers: fc.record(
      {
        'Last-Event-ID': fc.oneof(
          fc.integer().map(String),
          unicodeText.filter((value) => /^[\x20-\x7e]*$/.test(value)),
        ),
      },
      { requiredKeys: [] },
    ),
  }),
);

/**
 * What a refusal must leave as it was: the sessions a request names (read back, which must itself
 * never fail, whatever an earlier request stored). A context read is recorded as activity, so the
 * activity log is compared apart, just around the request.
 */
async function observed(h: Harness, sessionIds: string[]): Promise<unknown[]> {
  const views = await Promise.all(
    sessionIds.map(async (id) => {
      const res = await h.http.get(`/api/sessions/${encodeURIComponent(id)}`);
      expect(res.status, `read of session ${id}`).toBeLessThan(500);
      const context = await h.http.get(`/v1/assistant/context/${encodeURIComponent(id)}`);
      expect(context.status, `context of session ${id}`).toBeLessThan(500);
      return res.body as unknown;
    }),
  );
  return views;
}

/** The session ids a request could touch: the fuzz session, and whatever id its body names. */
function namedSessions(req: Request): string[] {
  if (req.method !== 'post') return [SESSION];
  try {
    const parsed = JSON.parse(req.body) as { session_id?: unknown } | null;
    const named =
      parsed &&
      typeof parsed === 'object' &&
      typeof parsed.session_id === 'string' &&
      /^[A-Za-z0-9._:-]{1,128}$/.test(parsed.session_id)
        ? [parsed.session_id]
        : [];
    return [...new Set([SESSION, ...named])];
  } catch {
    return [SESSION];
  }
}

describe('fuzz: every endpoint, inputs from the schemas plus hostile shapes', () => {
  it('never answers 5xx, and a refusal changes nothing', async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'warn' } });
    await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION, screen: 'pan_details' });
    await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, event: 'component_input', component_id: 'pan', hint: 'ABCDE1234F' });
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        const sessions = namedSessions(req);
        const before = await observed(h, sessions);
        const recordedBefore = h.system.activity.bounds().lastId;
        const res =
          req.method === 'post'
            ? await h.http.post(req.path).set('Content-Type', req.contentType).send(req.body)
            : await h.http[req.method](req.path).set(req.headers);
        expect(res.status, `${req.method} ${req.path}`).toBeLessThan(500);
        const recordedAfter = h.system.activity.bounds().lastId;
        const after = await observed(h, sessions);
        if (res.status >= 400) {
          if (req.method !== 'head') expect(typeof res.body.detail).toBe('string');
          expect(after).toEqual(before);
          expect(recordedAfter).toBe(recordedBefore);
        }
      }),
      { numRuns: 400 },
    );
    expect(h.logs.text).not.toMatch(/session actor failed|unhandled error/);
  }, 60_000);
});
