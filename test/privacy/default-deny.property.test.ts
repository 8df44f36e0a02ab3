// Runs on one store: it sets STORE=sqlite itself, to read the file's bytes and its WAL.
import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import type { AnyForm } from '../support/any-form.js';
import { anyForm, readAs, showsCore } from '../support/any-form.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { WsClient } from '../support/ws-client.js';

/**
 * The default-deny rule (docs/explanation/privacy.md, "The rule") against values it was not written from:
 * generated identity values of every kind, in random scripts, separators, spellings and word
 * forms (test/support/any-form.ts), put in every place a client reaches — body fields,
 * properties at any depth, keys, headers, WebSocket frames, voice turns — and every surface read
 * back: the session, the agent context and its system prompt, the activity feed, the SQLite file
 * and its WAL, the log and /metrics (its label sets; the samples are the service's counts). `npm test` runs a fixed seed in a few seconds;
 * `PRIVACY_RUNS`, `PRIVACY_SEED` and `PRIVACY_TIME_MS` make the long run `.ci/run` makes.
 */

const RUNS = Number(process.env.PRIVACY_RUNS ?? 24);
const SEED = Number(process.env.PRIVACY_SEED ?? 5959);
const TIME_MS = Number(process.env.PRIVACY_TIME_MS ?? 0);
/** At most this many planted values are searched for in the file, the log and /metrics. */
const MAX_SEARCHED = 1000;
/** Room for the run and for reading every surface back after it. */
const TEST_TIMEOUT_MS = TIME_MS > 0 ? TIME_MS + 90_000 : 120_000;

type Place = 'property' | 'deep' | 'key' | 'screen' | 'hint' | 'header' | 'top' | 'voice' | 'frame';
const PLACES: readonly Place[] = ['property', 'deep', 'key', 'screen', 'hint', 'header', 'top', 'voice', 'frame'];

let h: Harness;
let server: RunningServer;
let ws: WsClient;
const planted: AnyForm[] = [];
const sessions: string[] = [];
let n = 0;

beforeAll(async () => {
  h = createHarness({ env: { LOG_LEVEL: 'trace', STORE: 'sqlite', WS_MAX_MESSAGES_PER_SECOND: '1000' } });
  server = await serve(h);
  ws = await WsClient.open(`${server.url.replace('http', 'ws')}/v1/events/ws`);
});

afterAll(async () => {
  ws.close();
  await server.close(100);
});

async function post(body: unknown, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${server.url}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

async function read(path: string): Promise<string> {
  const response = await fetch(`${server.url}${path}`);
  expect(response.status, path).toBe(200);
  return response.text();
}

/** Random-looking ids the service writes (UUIDs, trace ids, digests): their digits are random, not the value's. */
const SERVICE_ID = /^(?:h-)?[0-9a-f-]{16,}$|^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/i;
/**
 * This test's loopback addresses, which log lines give (the listening line's URL, each request's
 * `remoteAddress`): the connections', not anything a client sent, so they are taken out before a
 * search. Searched, their digits held an OTP's by chance: a long run planted `੨ ੭ ੦ ੦` (2700) and found
 * it in `127.0.0.1`, then in `listening on http://127.0.0.1:36469`.
 */
const TEST_ADDRESS = /(?:https?:\/\/)?(?:::ffff:)?127\.0\.0\.1(?::\d{1,5})?/g;

/** An activity item's id is the log's sequence number: its digits count items, not a value's (the 3600th item is `"id":"3600"`). */
const activitySequence = (key: string, value: unknown): boolean =>
  key === 'id' && typeof value === 'string' && /^\d+$/.test(value);
/**
 * A context fetch's `context_version` (and a call's `context_versions`) is the first 16 characters
 * of a SHA-256 digest in base64url (src/domain/agent-context.ts), of a context with the time in it:
 * no client text, and made anew each run. A long run found an OTP's four digits inside one by
 * chance (`LEu66827xxrV6Fhl`, seed 1796317896, not found again on replay).
 */
const CONTEXT_VERSION = /^[A-Za-z0-9_-]{16}$/;
const isVersion = (value: unknown): boolean => typeof value === 'string' && CONTEXT_VERSION.test(value);
const contextVersion = (key: string, value: unknown): boolean =>
  (key === 'context_version' && isVersion(value)) ||
  (key === 'context_versions' && Array.isArray(value) && value.every(isVersion));
/** What the service made itself, out of no client text: not searched. */
const serviceMade = (key: string, value: unknown): boolean =>
  activitySequence(key, value) || contextVersion(key, value);

/** Every string of a JSON text, keys included, or the text itself when it is no JSON. */
function stringsOf(text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [text];
  }
  const out: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') out.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value))
        if (!serviceMade(key, item)) {
          out.push(key);
          walk(item);
        }
    }
  };
  walk(parsed);
  return out;
}

/** A letter or digit at a value's edge with another beside it: the value is inside a longer word. */
const WORDY = /[\p{L}\p{N}]/u;
const against = (edge: string, beside: string) => WORDY.test(edge) && WORDY.test(beside);

/**
 * Whether `raw` stands in `bytes` as a value of its own, with no letter or digit against either
 * end. The file holds hundreds of thousands of timestamps and hex trace and request ids, so in a
 * long run a four-digit code sits inside one of them by chance (`…e54a23f5395d39b3`); a value the
 * service wrote is bounded by a quote, a space or a mark.
 */
function standsInBytes(bytes: string, raw: string): boolean {
  for (let at = bytes.indexOf(raw); at >= 0; at = bytes.indexOf(raw, at + 1)) {
    if (
      !against(raw.charAt(0), bytes.charAt(at - 1)) &&
      !against(raw.charAt(raw.length - 1), bytes.charAt(at + raw.length))
    )
      return true;
  }
  return false;
}

/**
 * The SQLite file and its WAL as text, less the activity items' sequence numbers, then the quoted
 * strings in it, unescaped: the JSON the store keeps.
 */
function sqliteStrings(): string[] {
  const file = (h.store.sessions as { file?: string }).file;
  expect(file).toBeDefined();
  const bytes = ['', '-wal']
    .map((suffix) => `${file}${suffix}`)
    .filter((path) => existsSync(path))
    .map((path) => readFileSync(path).toString('utf8'))
    .join('\n');
  // Quoted strings one by one, less the activity items' sequence numbers and the context versions (serviceMade).
  // A string is one a JSON structure holds (after `{`, `[`, `,` or `:`, before one): what lies between
  // two strings (`":1795176000},"`) is not one.
  const text = bytes
    .replace(/"id":"\d+"/g, '')
    .replace(/"context_version":"[A-Za-z0-9_-]{16}"/g, '')
    .replace(/"context_versions":\[(?:"[A-Za-z0-9_-]{16}",?)*\]/g, '');
  const string = /"(?:[^"\\\n]|\\.){1,4000}"/y;
  const quoted: string[] = [];
  for (let at = text.indexOf('"'); at >= 0; at = text.indexOf('"', at + 1)) {
    if (!'{,:['.includes(text.charAt(at - 1))) continue;
    string.lastIndex = at;
    const found = string.exec(text)?.[0];
    if (found === undefined || !':,}]'.includes(text.charAt(at + found.length))) continue;
    quoted.push(found);
    at += found.length - 1;
  }
  // A run of the file's binary pages between two quote bytes (cell pointers read as `6�6�6`) is no string the service wrote.
  const binary = /[\ufffd\u0000-\u0008\u000e-\u001f]/;
  return [text, ...quoted.filter((text) => !binary.test(text)).flatMap((text) => stringsOf(text))];
}

/** Strings to search, each with how the rule reads it (worked out once: the SQLite file is large). */
interface Surface {
  text: string;
  read: string;
}
/**
 * The last four digits a mask keeps of a phone or an Aadhaar (`*** / *** / 4746`, docs/explanation/privacy.md)
 * are allowed: read as gone, or another value whose digits happen to be those four is a leak.
 */
const withoutKeptLastFour = (text: string): string => text.replace(/\*[^\p{L}\p{N}*]{0,3}\p{Nd}{4}(?!\p{Nd})/gu, '*');
const surfaces = (strings: string[]): Surface[] =>
  strings
    .filter((text) => !SERVICE_ID.test(text))
    .map((text) => text.replace(TEST_ADDRESS, ''))
    .map((text) => ({ text, read: readAs(withoutKeptLastFour(text)) }));
/** The first string that shows the value, as sent or its core once read; undefined when none does. */
const leakIn = (found: Surface[], value: AnyForm): string | undefined =>
  found
    .find(({ text, read }) => text.includes(value.raw) || showsCore(withoutKeptLastFour(text), read, value.core))
    ?.text.slice(0, 300);

/** A count in letters (`b`, `bc`): a session id in digits would hold a generated value's core by chance (`dd-2277`). */
const lettersOf = (count: number): string =>
  [...count.toString(26)].map((digit) => String.fromCharCode(97 + Number.parseInt(digit, 26))).join('');

/** The value put where `place` says, in a body of a session of its own. */
async function plant(value: AnyForm, place: Place, depth: number): Promise<string> {
  const id = `dd-${lettersOf((n += 1))}`;
  sessions.push(id);
  const base = {
    session_id: id,
    event: 'component_input',
    screen: 'kyc_details',
    component_id: 'note_field',
    component_type: 'text_input',
  };
  let nested: unknown = value.raw;
  for (let level = 0; level < depth; level += 1) nested = level % 2 === 0 ? { detail: nested } : [nested];
  const bodies: Record<Place, () => Promise<number>> = {
    property: () => post({ ...base, properties: { note: value.raw } }),
    deep: () => post({ ...base, properties: { info: nested } }),
    key: () => post({ ...base, properties: { [value.raw]: 'x', extra: { [`${value.raw}`]: 1 } } }),
    screen: () => post({ ...base, screen: value.raw }),
    hint: () => post({ ...base, hint: value.raw, masked: false }),
    // A header carries a request id's characters only (docs/tutorial/api-walkthrough.md); any other value goes in a property.
    header: () =>
      /^[A-Za-z0-9._:@/+=-]{1,128}$/.test(value.raw)
        ? post(base, { 'x-request-id': value.raw })
        : post({ ...base, properties: { note: value.raw } }),
    top: () => post({ ...base, remark: value.raw, user_id: value.raw }),
    voice: () =>
      post({
        session_id: id,
        event: 'voice_conversation_turn',
        properties: { role: 'user', channel: 'voice', turn_index: 1, text: `the number is ${value.raw}` },
      }),
    frame: async () => {
      ws.send({ type: 'connect', message_id: `c-${id}`, session_id: id, client_id: 'kycis_demo' });
      await ws.nextOfType('ack', (frame) => frame.message_id === `c-${id}`);
      ws.send({
        type: 'control_state',
        message_id: value.raw.slice(0, 128),
        event: 'validation_failed',
        screen: value.raw,
        failure_reason_code: value.raw,
        errors: [value.raw],
        component_id: 'pan_field',
        component_type: 'text_input',
      });
      await ws.next((frame) => frame.type !== 'ack' || frame.message_id !== `c-${id}`);
      return 200;
    },
  };
  expect(await bodies[place](), `${place} ${JSON.stringify(value.raw)}`).toBe(200);
  return id;
}

describe('privacy: generated identity values in every place, read back from every surface', () => {
  it('no session, agent context, system prompt or activity item shows one', { timeout: TEST_TIMEOUT_MS }, async () => {
    await fc.assert(
      fc.asyncProperty(
        anyForm,
        fc.constantFrom(...PLACES),
        fc.integer({ min: 0, max: 5 }),
        async (value, place, depth) => {
          planted.push(value);
          const id = await plant(value, place, depth);
          const context = await read(`/v1/assistant/context/${id}`);
          const strings = surfaces([
            ...stringsOf(context),
            ...stringsOf(await read(`/api/sessions/${id}`)),
            ...stringsOf(await read(`/api/activity?session_id=${id}&limit=50`)),
          ]);
          expect(leakIn(strings, value), `${value.kind} ${JSON.stringify(value.raw)} in ${place}`).toBeUndefined();
        },
      ),
      {
        numRuns: RUNS,
        seed: SEED,
        ...(TIME_MS > 0 ? { interruptAfterTimeLimit: TIME_MS, markInterruptAsFailure: false } : {}),
      },
    );
  });

  it('nor do the SQLite file and its WAL, the log lines and /metrics', { timeout: TEST_TIMEOUT_MS }, async () => {
    await h.store.sessions.commit();
    const file = sqliteStrings();
    // The file was searched, not skipped: it holds the sessions.
    expect(file[0]).toContain(sessions[0]);
    const found = surfaces([
      ...file.slice(1),
      ...h.logs.text.split('\n').flatMap(stringsOf),
      ...(await read('/metrics')).split('\n').map((line) => line.replace(/ [^ ]+$/, '')),
      ...stringsOf(await read('/api/activity?limit=1000')),
    ]);
    // A long run plants tens of thousands of values in a file of hundreds of megabytes: an evenly
    // spaced sample of them is searched for (every kind and place goes through the same store).
    const step = Math.max(1, Math.ceil(planted.length / MAX_SEARCHED));
    const checked = planted.filter((_, index) => index % step === 0);
    // Searched joined first, string by string only on a hit: thousands of values over every string the file holds.
    const allText = found.map(({ text }) => text).join('\u0000');
    const allRead = found.map(({ read }) => read).join('\u0000');
    const hit = (value: AnyForm) =>
      allText.includes(value.raw) || (value.core.length >= 4 && allRead.includes(value.core.toUpperCase()));
    for (const value of checked)
      if (hit(value)) expect(leakIn(found, value), `${value.kind} ${JSON.stringify(value.raw)}`).toBeUndefined();
    // The file's bytes as a whole: no value as sent, whatever the JSON around it.
    for (const value of checked)
      expect(standsInBytes(file[0]!, value.raw), `${value.kind} ${JSON.stringify(value.raw)} in the file`).toBe(false);
  });
});
