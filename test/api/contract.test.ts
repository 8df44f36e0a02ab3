// Runs on one store: every answer is checked against the OpenAPI document, whose shapes are the same on each store; vitest.config.ts.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Response } from 'supertest';
import { describe, expect, it } from 'vitest';
import { apiDocument } from '../../src/http/api-document.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { SseTestClient } from '../support/sse-client.js';

interface DocResponse {
  description: string;
  content?: Record<string, { schema?: Record<string, unknown> }>;
}
interface Operation {
  operationId: string;
  method: 'get' | 'post' | 'delete';
  path: string;
  responses: Record<string, DocResponse>;
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
}

const doc = apiDocument() as { paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>> };
const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ ...op, method: method as Operation['method'], path })),
);

// The document is added whole, so the `#/components/...` references inside it resolve as they do for any reader.
const ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false, allErrors: true });
ajv.addSchema(doc, 'openapi');
const pointer = (...parts: string[]) => parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** The status is one the operation documents, and the body matches what it documents for that status. */
function expectDocumented(op: Operation, status: number, contentType: string | undefined, body: unknown): void {
  const documented = op.responses[String(status)];
  expect(documented, `${op.operationId} answered ${status}, which it does not document`).toBeDefined();
  if (!documented!.content) return;
  const [mediaType] = Object.keys(documented!.content);
  expect(contentType ?? '', `${op.operationId} ${status} content type`).toContain(mediaType);
  const at = `openapi#/${pointer('paths', op.path, op.method, 'responses', String(status), 'content', mediaType!, 'schema')}`;
  const validate = ajv.compile({ $ref: at });
  expect(validate(body) ? [] : validate.errors, `${op.operationId} ${status} body against the document`).toEqual([]);
}

const SESSION = '7664f88e-4980-41c3-bec0-f0e1591ee548';
const concretePath = (op: Operation) =>
  op.path
    .replace('{session_id}', SESSION)
    .replace('{call_id}', 'no-such-call')
    .replace('{user_id}', 'user-42')
    .replace('{id}', '1');
const firstExample = (op: Operation): unknown =>
  Object.values(op.requestBody?.content['application/json']?.examples ?? {})[0]?.value ?? {};

function send(h: Harness, op: Operation, body?: unknown, headers: Record<string, string> = {}) {
  const request =
    op.method === 'post'
      ? h.http.post(concretePath(op))
      : op.method === 'delete'
        ? h.http.delete(concretePath(op))
        : h.http.get(concretePath(op));
  request.set(headers);
  return op.method === 'post' ? request.send((body ?? firstExample(op)) as object) : request;
}

const ingest = (h: Harness) =>
  h.http
    .post('/v1/events')
    .send({ session_id: SESSION, user_id: 'user-42', event: 'screen_state', screen: 'pan_details' });

interface Case {
  name: string;
  status: number;
  run(h: Harness, op: Operation): Promise<Response>;
}

/**
 * A representative request for every operation in the document, by operationId. A route added
 * to the document without an entry here fails the test below.
 */
const CASES: Record<string, Case[]> = {
  ingestEvent: [
    { name: 'the first example', status: 200, run: (h, op) => send(h, op) },
    { name: 'no event field', status: 422, run: (h, op) => send(h, op, { session_id: SESSION }) },
  ],
  evaluateTrigger: [
    { name: 'the first example', status: 200, run: (h, op) => send(h, op) },
    {
      name: 'X-Client-ID not a plain id',
      status: 422,
      run: (h, op) => send(h, op, undefined, { 'X-Client-ID': 'a b' }),
    },
  ],
  getSdkConfig: [
    {
      name: 'with a tenant',
      status: 200,
      run: (h, op) => send(h, op, undefined, { 'X-Client-ID': 'demo-bank', 'X-SVC-SDK-Version': '2.4.1' }),
    },
    {
      name: 'If-None-Match with the current version',
      status: 304,
      run: async (h, op) => send(h, op, undefined, { 'If-None-Match': (await send(h, op)).headers.etag as string }),
    },
  ],
  listActivity: [
    { name: 'after an event', status: 200, run: async (h, op) => (await ingest(h), h.http.get(`${op.path}?limit=5`)) },
    { name: 'limit 0', status: 422, run: (h, op) => h.http.get(`${op.path}?limit=0`) },
  ],
  streamActivity: [{ name: 'unknown kind', status: 422, run: (h, op) => h.http.get(`${op.path}?kind=nope`) }],
  evaluatePopup: [
    { name: 'the first example', status: 200, run: (h, op) => send(h, op) },
    { name: 'no session_id', status: 422, run: (h, op) => send(h, op, { signals: {} }) },
  ],
  evaluateAssistant: [
    { name: 'the first example', status: 200, run: (h, op) => send(h, op) },
    { name: 'no session_id', status: 422, run: (h, op) => send(h, op, { signals: {} }) },
  ],
  setFlow: [
    { name: 'the harness sequence', status: 200, run: (h, op) => send(h, op) },
    { name: 'no flow_key', status: 422, run: (h, op) => send(h, op, { session_id: SESSION }) },
  ],
  registerDropoff: [
    { name: 'the first example', status: 200, run: (h, op) => send(h, op) },
    { name: 'no session_id', status: 422, run: (h, op) => send(h, op, { user_id: 'user-42' }) },
  ],
  cancelDropoff: [
    {
      name: 'after a registration',
      status: 200,
      run: async (h, op) => (
        await h.http
          .post('/api/dropoff/register')
          .send({ session_id: SESSION, user_id: 'user-42', phone: '9876543210' }),
        send(h, op)
      ),
    },
    { name: 'unknown session', status: 404, run: (h, op) => send(h, op) },
  ],
  openControlPlane: [
    { name: 'a plain GET without Upgrade', status: 426, run: (h, op) => send(h, op) },
    { name: 'an empty X-Client-ID', status: 422, run: (h, op) => send(h, op, undefined, { 'X-Client-ID': '' }) },
  ],
  listSessions: [
    {
      name: 'after an event',
      status: 200,
      run: async (h, op) => (await ingest(h), h.http.get(`${op.path}?limit=5&sort=session_id&order=asc`)),
    },
    { name: 'limit 0', status: 422, run: (h, op) => h.http.get(`${op.path}?limit=0`) },
  ],
  previewAgentContext: [
    { name: 'a live session', status: 200, run: async (h, op) => (await ingest(h), send(h, op)) },
    { name: 'unknown session', status: 404, run: (h, op) => send(h, op) },
    { name: 'invalid id', status: 422, run: (h, op) => h.http.get(op.path.replace('{session_id}', 'a%20b')) },
  ],
  getStatus: [{ name: 'plain', status: 200, run: (h, op) => send(h, op) }],
  getSessionMachine: [{ name: 'plain', status: 200, run: (h, op) => send(h, op) }],
  getMetrics: [{ name: 'after an event', status: 200, run: async (h, op) => (await ingest(h), send(h, op)) }],
  getConsole: [{ name: 'the page', status: 200, run: (h, op) => send(h, op) }],
  getFeatureFlags: [{ name: 'plain', status: 200, run: (h, op) => send(h, op) }],
  getSession: [
    { name: 'a live session', status: 200, run: async (h, op) => (await ingest(h), send(h, op)) },
    { name: 'unknown session', status: 404, run: (h, op) => send(h, op) },
    { name: 'invalid id', status: 422, run: (h, op) => h.http.get(op.path.replace('{session_id}', 'a%20b')) },
  ],
  startAssistantSession: [
    { name: 'the first example', status: 200, run: (h, op) => send(h, op) },
    { name: 'no session_id', status: 422, run: (h, op) => send(h, op, { user_id: 'user-42' }) },
  ],
  stopAssistantSession: [
    {
      name: 'after a start',
      status: 200,
      run: async (h, op) => (
        await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION }),
        send(h, op)
      ),
    },
    { name: 'unknown session', status: 404, run: (h, op) => send(h, op) },
  ],
  getReengagement: [
    { name: 'a live session', status: 200, run: async (h, op) => (await ingest(h), send(h, op)) },
    { name: 'unknown session', status: 404, run: (h, op) => send(h, op) },
  ],
  getAgentContext: [
    { name: 'a live session', status: 200, run: async (h, op) => (await ingest(h), send(h, op)) },
    { name: 'unknown session', status: 404, run: (h, op) => send(h, op) },
  ],
  // Its 200 is a held stream: test/http/agent-presence.test.ts reads it on a real socket.
  holdAgentPresence: [
    {
      name: 'unknown session',
      status: 404,
      run: (h, op) => h.http.get(`${op.path.replace('{session_id}', 'nobody')}?identity=agent-1`),
    },
    {
      name: 'no identity',
      status: 422,
      run: async (h, op) => (await ingest(h), h.http.get(op.path.replace('{session_id}', SESSION))),
    },
  ],
  recordConsent: [
    {
      name: 'during a call',
      status: 200,
      run: async (h, op) => (
        await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION }),
        send(h, op)
      ),
    },
    { name: 'unknown session', status: 404, run: (h, op) => send(h, op) },
    {
      name: 'an unknown decision',
      status: 422,
      run: (h, op) => send(h, op, { session_id: SESSION, decision: 'maybe', notice_version: 'v1', language: 'en' }),
    },
  ],
  listSessionCalls: [
    {
      name: 'after a call',
      status: 200,
      run: async (h, op) => (
        await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION }),
        await h.http.post('/v1/assistant/session/stop').send({ session_id: SESSION }),
        send(h, op)
      ),
    },
    { name: 'invalid id', status: 422, run: (h, op) => h.http.get(op.path.replace('{session_id}', 'a%20b')) },
  ],
  getCall: [
    {
      name: 'after a call',
      status: 200,
      run: async (h, op) =>
        h.http.get(
          op.path.replace(
            '{call_id}',
            (await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION })).body
              .assistant_invocation_id,
          ),
        ),
    },
    { name: 'unknown call', status: 404, run: (h, op) => send(h, op) },
  ],
  listHandoffs: [
    {
      name: 'a call waiting for a person',
      status: 200,
      run: async (h, op) => (
        await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION }),
        await h.http
          .post('/v1/events')
          .send({ session_id: SESSION, event: 'handoff_requested', properties: { reason: 'asked' } }),
        send(h, op)
      ),
    },
  ],
  joinCall: [
    {
      name: 'a running call',
      status: 200,
      run: async (h, op) =>
        h.http
          .post(
            op.path.replace(
              '{call_id}',
              (await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION })).body
                .assistant_invocation_id,
            ),
          )
          .send({ operator: 'desk 7' }),
    },
    { name: 'unknown call', status: 404, run: (h, op) => send(h, op) },
    { name: 'no operator', status: 422, run: (h, op) => h.http.post(op.path.replace('{call_id}', 'c1')).send({}) },
  ],
  eraseUser: [
    { name: 'a user with a session', status: 200, run: async (h, op) => (await ingest(h), send(h, op)) },
    {
      name: 'a user id with a space',
      status: 422,
      run: (h, op) => h.http.delete(op.path.replace('{user_id}', 'a%20b')),
    },
  ],
  listWebhookDeliveries: [
    { name: 'plain', status: 200, run: (h, op) => send(h, op) },
    { name: 'an unknown status', status: 422, run: (h, op) => h.http.get(`${op.path}?status=lost`) },
  ],
  retryWebhookDelivery: [
    { name: 'unknown delivery', status: 404, run: (h, op) => send(h, op) },
    { name: 'not an id', status: 422, run: (h, op) => h.http.post(op.path.replace('{id}', 'x')).send({}) },
  ],
  receiveLiveKitWebhook: [{ name: 'unsigned', status: 401, run: (h, op) => send(h, op) }],
  getHealth: [{ name: 'serving', status: 200, run: (h, op) => send(h, op) }],
  getLiveness: [{ name: 'alive', status: 200, run: (h, op) => send(h, op) }],
  getReadiness: [{ name: 'ready', status: 200, run: (h, op) => send(h, op) }],
  getOpenApiDocument: [{ name: 'plain', status: 200, run: (h, op) => send(h, op) }],
  getApiReference: [{ name: 'plain', status: 200, run: (h, op) => send(h, op) }],
  getApiReferenceDocument: [{ name: 'plain', status: 200, run: (h, op) => send(h, op) }],
};

const bodyOf = (res: Response): unknown => (res.type === 'text/html' ? res.text : res.body);

describe('every documented operation against the real service', () => {
  it('has representative requests here, and every entry here names a documented operation', () => {
    const ids = operations.map((op) => op.operationId);
    expect(
      ids.filter((id) => !CASES[id]),
      'operations with no entry in CASES',
    ).toEqual([]);
    expect(
      Object.keys(CASES).filter((id) => !ids.includes(id)),
      'entries naming no operation',
    ).toEqual([]);
  });

  it('names operations verb-first in camelCase, each once', () => {
    const ids = operations.map((op) => op.operationId);
    for (const id of ids) expect(id).toMatch(/^[a-z]+[A-Z][A-Za-z]*$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  for (const op of operations) {
    for (const testCase of CASES[op.operationId] ?? []) {
      it(`${op.operationId} (${op.method.toUpperCase()} ${op.path}): ${testCase.name} answers ${testCase.status} as documented`, async () => {
        const h = createHarness();
        const res = await testCase.run(h, op);
        expect(res.status).toBe(testCase.status);
        expectDocumented(op, res.status, res.headers['content-type'], bodyOf(res));
      });
    }
  }

  it('streamActivity: each message, and the JSON its data carries, is what the document says, a reset included', async () => {
    const op = operations.find((candidate) => candidate.operationId === 'streamActivity')!;
    const variants = (
      op.responses['200']!.content!['text/event-stream']!.schema as {
        anyOf: { properties: { event: { const: string }; data: { contentSchema: { $ref: string } } } }[];
      }
    ).anyOf;
    const h = createHarness();
    const server = await serve(h);
    try {
      await ingest(h);
      const events = new Set<string>();
      // '0' replays from the start; an id this log never gave is answered with a reset first.
      for (const lastEventId of ['0', '999']) {
        const stream = await SseTestClient.open(`${server.url}${op.path}`, { 'Last-Event-ID': lastEventId });
        await stream.until((client) => client.items.length > 0);
        stream.close();
        expect(stream.response.status).toBe(200);
        for (const message of stream.messages) {
          // As a reader of the wire hands it over (Schemathesis's among them): event name, id, data text.
          const wire = {
            event: message.event ?? 'message',
            ...(message.id ? { id: message.id } : {}),
            data: message.data,
          };
          expectDocumented(op, 200, stream.response.headers.get('content-type') ?? undefined, wire);
          const variant = variants.find((candidate) => candidate.properties.event.const === wire.event)!;
          const validate = ajv.compile({ $ref: `openapi${variant.properties.data.contentSchema.$ref}` });
          expect(
            validate(JSON.parse(message.data)) ? [] : validate.errors,
            `${wire.event} data against its contentSchema`,
          ).toEqual([]);
          events.add(wire.event);
        }
      }
      expect([...events].sort()).toEqual(['activity', 'reset']);
    } finally {
      await server.close(0);
    }
  });

  it('streamActivity: an empty Last-Event-ID is taken as none, as the document says', async () => {
    const op = operations.find((candidate) => candidate.operationId === 'streamActivity')!;
    const header = (op as unknown as { parameters: { name: string; schema: { pattern: string } }[] }).parameters.find(
      (p) => p.name === 'Last-Event-ID',
    )!;
    expect('').toMatch(new RegExp(header.schema.pattern));
    const h = createHarness();
    const server = await serve(h);
    try {
      await ingest(h);
      const stream = await SseTestClient.open(`${server.url}${op.path}`, { 'Last-Event-ID': '' });
      await stream.until((client) => client.retry !== undefined);
      expect(stream.response.status).toBe(200);
      // Live from now: nothing replayed, no reset.
      await ingest(h);
      await stream.until((client) => client.items.length > 0);
      stream.close();
      expect(stream.messages.map((m) => m.event)).toEqual(['activity']);
    } finally {
      await server.close(0);
    }
  });
});

describe("the middleware's statuses, as documented on each operation", () => {
  const harness = (env: Record<string, string> = {}) => createHarness({ env });
  const answers = (op: Operation, status: number) => String(status) in op.responses;

  it('401 without a key wherever a key applies, and nowhere else', async () => {
    const h = harness({ API_KEY: 'contract-key' });
    for (const op of operations) {
      const res = await send(h, op);
      if (answers(op, 401)) {
        expect(res.status, op.operationId).toBe(401);
        expectDocumented(op, 401, res.headers['content-type'], res.body);
      } else {
        expect(res.status, op.operationId).not.toBe(401);
      }
    }
  });

  it('429 over the rate limit wherever it applies, and nowhere else', async () => {
    const h = harness({ RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_LOOPBACK: 'true' });
    await h.http.get('/api/features');
    // Every operation documents 429 for requests pipelined too deep (src/http/pipelining.ts); the rate limit's is named.
    const rateLimited = (op: Operation) =>
      answers(op, 429) && op.responses['429']!.description.includes('RATE_LIMIT_PER_MINUTE');
    for (const op of operations) {
      const res = await send(h, op);
      if (rateLimited(op)) {
        expect(res.status, op.operationId).toBe(429);
        expect(res.headers['retry-after'], op.operationId).toBeDefined();
        expectDocumented(op, 429, res.headers['content-type'], res.body);
      } else {
        expect(res.status, op.operationId).not.toBe(429);
      }
    }
  });

  it('503 while shutting down on every operation that documents it', async () => {
    const h = harness();
    h.app.beginShutdown();
    for (const op of operations.filter((candidate) => answers(candidate, 503))) {
      const res = await send(h, op);
      expect(res.status, op.operationId).toBe(503);
      expectDocumented(op, 503, res.headers['content-type'], res.body);
    }
  });

  it('400, 413 and 415 on every operation with a JSON body', async () => {
    const h = harness();
    for (const op of operations.filter((candidate) => candidate.method === 'post')) {
      const malformed = await h.http
        .post(concretePath(op))
        .set('content-type', 'application/json')
        .send('{"session_id":');
      const tooBig = await h.http.post(concretePath(op)).send({ session_id: SESSION, pad: 'x'.repeat(70 * 1024) });
      const notJson = await h.http.post(concretePath(op)).set('content-type', 'text/plain').send('hello');
      for (const [res, status] of [
        [malformed, 400],
        [tooBig, 413],
        [notJson, 415],
      ] as const) {
        expect(res.status, `${op.operationId} ${status}`).toBe(status);
        expectDocumented(op, status, res.headers['content-type'], res.body);
      }
    }
  });
});
