/**
 * `node --expose-gc <npm start's flags> bench/session-memory-worker.ts <shape> <sessions> [memory|sqlite]`:
 * what `sessions` running sessions of one shape add to V8's heap, measured after a full collection,
 * beside what the memory budget counts them at (src/actor-system/memory-budget.ts). Shapes:
 *
 * - `one-event`: a session made by one `component_input` (the flood of new sessions);
 * - `pan`: a user stuck on the PAN screen (a schema, two hints, a failure);
 * - `field`: a deployed SDK's session after its start (14 schemas, 12 typed fields, about 17 KB);
 * - `stuffed`: a session sent 30 KB unknown fields and 900-byte notes, as much as it will hold;
 * - `nested`: one event of 15,000 empty arrays and objects (45 KB of JSON, a hostile client's);
 * - `wide`: one event whose properties are one object of 4,000 keys;
 * - `strings`: one event of 4,000 distinct five-letter strings and 3,000 values, half numbers V8 boxes;
 * - `shapes`: one event of 3,000 objects, each with a key of its own (a V8 object shape each).
 *
 * Prints `{shape, sessions, store, heap_per_session, estimate_per_session, ratio}`: the estimate
 * must not be below the heap (ratio ≥ 1), or a flood reaches V8's heap limit before the budget
 * refuses anyone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import type { AskResult } from '../src/actor-system/session-host.js';
import type { IngestResult } from '../src/machines/session/machine-events.js';
import type { SessionShape } from './suites/session-memory.js';

const built = (path: string) => new URL(`../dist/src/${path}`, import.meta.url).href;
const { redactForIngest } = (await import(
  built('domain/event-redaction.js')
)) as typeof import('../src/domain/event-redaction.js');
const { EventInSchema } = (await import(built('domain/sdk-event.js'))) as typeof import('../src/domain/sdk-event.js');
const { benchSessionId, eventBody, fieldSessionEvents, stuffedEventBody } = (await import(
  new URL('./lib/event-body.ts', import.meta.url).href
)) as typeof import('./lib/event-body.js');
const { inProcessSystem } = (await import(
  new URL('./lib/in-process-system.ts', import.meta.url).href
)) as typeof import('./lib/in-process-system.js');

const [shape = 'one-event', sessionsArgument = '10000', store = 'sqlite'] = process.argv.slice(2) as [
  SessionShape?,
  string?,
  string?,
];
const sessions = Number(sessionsArgument);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

/** The events, in order, that give session `n` its shape. */
function eventsOf(n: number): object[] {
  const session_id = benchSessionId(n);
  switch (shape) {
    case 'one-event':
      return [JSON.parse(eventBody(session_id)) as object];
    case 'pan':
      return [
        {
          session_id,
          user_id: `user-${n}`,
          event: 'screen_schema',
          screen: 'pan_details',
          properties: {
            screen_id: 'pan_details',
            components: [
              {
                id: 'pan_field',
                type: 'text_input',
                validations: [
                  { rule_id: 'pan_format_v1', pattern: '[A-Z]{5}[0-9]{4}[A-Z]', error_codes: ['pan_invalid_format'] },
                ],
              },
            ],
          },
        },
        {
          session_id,
          event: 'component_input',
          screen: 'pan_details',
          component_id: 'pan_field',
          component_type: 'text_input',
          hint: 'ABCDE1234F',
          masked: false,
        },
        {
          session_id,
          event: 'component_input',
          screen: 'pan_details',
          component_id: 'terms_checkbox',
          component_type: 'checkbox',
          hint: 'checked',
          masked: false,
        },
        {
          session_id,
          event: 'validation_failed',
          screen: 'pan_details',
          component_id: 'pan_field',
          component_type: 'text_input',
          errors: ['pan_invalid_format'],
          failure_reason_code: 'pan_invalid_format',
          hint: 'INVALIDPAN',
          masked: false,
        },
      ];
    case 'field':
      return fieldSessionEvents(session_id);
    case 'stuffed':
      return Array.from({ length: 8 }, () => JSON.parse(stuffedEventBody(session_id)) as object);
    case 'nested':
      return [
        {
          session_id,
          event: 'component_input',
          properties: { a: Array.from({ length: 7_500 }, () => []), o: Array.from({ length: 7_500 }, () => ({})) },
        },
      ];
    case 'strings':
      return [
        {
          session_id,
          event: 'component_input',
          properties: {
            s: Array.from({ length: 4_000 }, (_, i) => `${n}:${i}`.padStart(5, 'q').slice(-5)),
            f: Array.from({ length: 3_000 }, (_, i) => (i % 2 ? n + i + 0.5 : '')),
          },
        },
      ];
    case 'shapes':
      return [
        {
          session_id,
          event: 'component_input',
          properties: { o: Array.from({ length: 3_000 }, (_, i) => ({ [`k${n}_${i}`]: 1 })) },
        },
      ];
    case 'wide':
      return [
        {
          session_id,
          event: 'component_input',
          properties: { o: Object.fromEntries(Array.from({ length: 4_000 }, (_, i) => [`k${i}_${n}`, i])) },
        },
      ];
    default:
      throw new Error(`unknown shape ${String(shape)}`);
  }
}

const dataDir = store === 'sqlite' ? mkdtempSync(join(tmpdir(), 'session-memory-')) : undefined;
const system = await inProcessSystem(store === 'sqlite' ? 'sqlite' : 'memory', dataDir);
const trace = { trace_id: 't', request_id: 'r' };
const TURN = 64;

/** Each session's events in order, TURN sessions to an event-loop turn, as 64 clients at once would send them. */
async function make(from: number, count: number): Promise<void> {
  for (let start = from; start < from + count; start += TURN) {
    const lanes = Array.from({ length: Math.min(TURN, from + count - start) }, (_, i) => eventsOf(start + i));
    for (let step = 0; step < lanes[0]!.length; step += 1) {
      const asks: Promise<AskResult<IngestResult>>[] = [];
      for (const lane of lanes) {
        const { event, matchHint, sizes } = redactForIngest(EventInSchema.parse(lane[step]));
        asks.push(
          system.sessionHost.ask<IngestResult>(event.session_id, 'create', (reply, at) => ({
            type: 'session.ingest',
            event,
            matchHint,
            sizes,
            at,
            trace,
            reply,
          })),
        );
      }
      for (const result of await Promise.all(asks)) if (!result.ok) throw new Error(`ingest failed: ${result.reason}`);
    }
  }
  // What the store queued is written, as it is between a flood's turns.
  await system.sessionHost.commitOutcome();
}

// Warm-up: the code paths and the store's tables exist before the measured sessions do; these stay running.
await make(sessions, Math.min(sessions, 2_000));
gc();
const heapBefore = v8.getHeapStatistics().used_heap_size;
const countedBefore = system.memoryBudget.use().used_bytes;
await make(0, sessions);
await new Promise((resolve) => setImmediate(resolve));
gc();
const heapPerSession = (v8.getHeapStatistics().used_heap_size - heapBefore) / sessions;
const estimatePerSession = (system.memoryBudget.use().used_bytes - countedBefore) / sessions;
system.stop();
if (dataDir) rmSync(dataDir, { recursive: true, force: true });
process.stdout.write(
  `${JSON.stringify({
    shape,
    sessions,
    store,
    heap_per_session: Math.round(heapPerSession),
    estimate_per_session: Math.round(estimatePerSession),
    ratio: Number((estimatePerSession / heapPerSession).toFixed(2)),
  })}\n`,
);
