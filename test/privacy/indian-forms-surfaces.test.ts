import { readFileSync, existsSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { plantedEvent } from '../support/identity-events.js';
import type { IdentityValue } from '../support/identity-values.js';
import { indianForm, leaks } from '../support/identity-values.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { SseTestClient } from '../support/sse-client.js';
import { WsClient } from '../support/ws-client.js';

/**
 * The identity values as Indian users type and say them (spoken numbers in English, Hindi and
 * Hinglish, any script's digits, any dash or space, VID, GSTIN, licences, vehicle numbers, UPI
 * ids, disguised e-mail, dates, addresses), planted in every field a client reaches over HTTP
 * and the WebSocket, and searched for on every surface: the SQLite file's bytes, the session
 * list and record, the agent context and its system prompt, the activity feed, the SSE stream,
 * the WebSocket's answers, the log lines and the metrics.
 */

interface World {
  h: Harness;
  server: RunningServer;
  sse: SseTestClient;
  ws: WsClient;
}

let w: World;
const planted: IdentityValue[] = [];
const sessions: string[] = [];

beforeAll(async () => {
  const h = createHarness({ env: { LOG_LEVEL: 'trace', STORE: 'sqlite', WS_MAX_MESSAGES_PER_SECOND: '1000' } });
  const server = await serve(h);
  const sse = await SseTestClient.open(`${server.url}/api/activity/stream`);
  const ws = await WsClient.open(`${server.url.replace('http', 'ws')}/v1/events/ws`);
  w = { h, server, sse, ws };
});

afterAll(async () => {
  w.ws.close();
  w.sse.close();
  await w.server.close(100);
});

async function text(path: string): Promise<string> {
  const response = await fetch(`${w.server.url}${path}`);
  expect(response.status, path).toBe(200);
  return response.text();
}

async function post(path: string, body: unknown): Promise<number> {
  const response = await fetch(`${w.server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

/** The bytes of the database and its write-ahead log, read as text. */
function sqliteText(): string {
  const file = (w.h.store.sessions as { file?: string }).file;
  expect(file).toBeDefined();
  return ['', '-wal']
    .map((suffix) => `${file}${suffix}`)
    .filter((path) => existsSync(path))
    .map((path) => readFileSync(path).toString('utf8'))
    .join('\n');
}

/** Every surface at once. */
async function everything(): Promise<string> {
  await w.h.store.sessions.commit();
  const parts = [await text('/api/sessions?limit=500'), await text('/api/activity?limit=1000'), await text('/metrics')];
  for (const id of sessions) {
    parts.push(await text(`/api/sessions/${id}`));
    const context = await text(`/v1/assistant/context/${id}`);
    parts.push(context, String((JSON.parse(context) as { system_prompt: unknown }).system_prompt));
  }
  parts.push(
    w.sse.messages.map((message) => message.data).join('\n'),
    JSON.stringify(w.ws.frames),
    w.h.logs.text,
    sqliteText(),
  );
  return parts.join('\n');
}

let n = 0;

/** The answer to the frame whose message id starts with `messageId`; what came last, when none does within 5 s. */
async function answered(messageId: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer to ${messageId}; last frames ${JSON.stringify(w.ws.frames.slice(-3))}`)),
      5000,
    );
  });
  // A message id that is no identifier comes back as its digest (docs/explanation/privacy.md, "What is kept").
  await Promise.race([
    w.ws.next(
      (frame) => String(frame.message_id).startsWith(messageId) || /^h-[0-9a-f]{24}$/.test(String(frame.message_id)),
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}

describe('privacy: identity values in Indian forms, on every surface', () => {
  it('planted in any field of any event over HTTP, none comes back anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(plantedEvent(fc.constant(''), indianForm), async ({ value, body }) => {
        const id = `in-${(n += 1)}`;
        sessions.push(id);
        planted.push(value);
        expect(await post('/v1/events', { ...body, session_id: id }), JSON.stringify(body)).toBe(200);
        const context = await text(`/v1/assistant/context/${id}`);
        const session = await text(`/api/sessions/${id}`);
        expect(leaks(`${context}\n${session}`, value), `${value.kind} ${value.raw}`).toBe(false);
      }),
      { numRuns: 60, seed: 4040 },
    );
  });

  it('sent over the WebSocket (event fields, trigger signals, message ids), none comes back anywhere', async () => {
    const id = `in-ws-${(n += 1)}`;
    sessions.push(id);
    w.ws.send({ type: 'connect', message_id: 'c0', session_id: id, client_id: 'kycis_demo' });
    await w.ws.nextOfType('ack', (frame) => frame.message_id === 'c0');
    const values = fc.sample(indianForm, { numRuns: 24, seed: 4041 });
    for (const [index, value] of values.entries()) {
      planted.push(value);
      const messageId = `m${index}`;
      // The fields a control frame carries into the session, and the message id it echoes.
      w.ws.send({
        type: 'control_state',
        message_id: index % 2 === 0 ? messageId : `${messageId} ${value.raw}`.slice(0, 128),
        event: index % 2 === 0 ? 'validation_failed' : 'screen_state',
        screen: `pan_details ${value.raw}`,
        failure_reason_code: value.raw,
        errors: ['pan_invalid_format', value.raw],
        component_id: index % 3 === 0 ? value.raw : 'pan_field',
        component_type: 'text_input',
        ...(value.raw.length <= 32 ? { signal_strength: value.raw } : {}),
      });
      await answered(messageId);
    }
    const value = values[0]!;
    w.ws.send({ type: 'trigger_evaluate', message_id: value.raw, signals: { screen: value.raw, errors: [value.raw] } });
    await w.ws.nextOfType('trigger_response');
  });

  it('names in name fields and chosen in a list never reach the prompt or any surface', async () => {
    const id = `in-names-${(n += 1)}`;
    sessions.push(id);
    const names = ['Meera Nair', 'Rahul Sharma', 'मीरा नायर'];
    planted.push(...names.map((raw) => ({ kind: 'name', raw })));
    expect(
      await post('/v1/events', {
        session_id: id,
        event: 'identity',
        properties: { name: names[0], customer_name: names[1], nomineeName: names[2] },
      }),
    ).toBe(200);
    for (const [index, [type, hint]] of (
      [
        ['dropdown', names[0]],
        ['radio_button', names[1]],
        ['RADIO_BUTTON', names[2]],
      ] as const
    ).entries()) {
      expect(
        await post('/v1/events', {
          session_id: id,
          event: 'component_input',
          screen: 'nominee',
          component_id: `nominee_${index}`,
          component_type: type,
          hint,
          masked: false,
        }),
      ).toBe(200);
    }
    expect(
      await post('/v1/events', {
        session_id: id,
        event: 'voice_conversation_turn',
        screen: 'nominee',
        properties: { role: 'user', text: `my name is ${names[0]} and mera naam ${names[1]} hai` },
      }),
    ).toBe(200);
    const context = JSON.parse(await text(`/v1/assistant/context/${id}`)) as { system_prompt: string };
    expect(context.system_prompt).not.toMatch(/chose "(?:Meera|Rahul|मीरा)/);
    expect(context.system_prompt).toContain('"nominee_0" ("dropdown"): 10 characters');
  });

  it('at the end, the SQLite file, the lists, the stream, the socket, the logs and the metrics hold none of them', async () => {
    await w.sse.until(
      (client) => client.messages.some((message) => message.data.includes(sessions[sessions.length - 1]!)),
      10_000,
    );
    const all = await everything();
    for (const value of planted) expect(leaks(all, value), `${value.kind} ${value.raw}`).toBe(false);
    // The file was searched, not skipped: it holds the sessions.
    expect(sqliteText()).toContain(sessions[0]);
  });
});
