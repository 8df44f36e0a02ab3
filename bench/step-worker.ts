/**
 * `node --expose-gc bench/step-worker.ts <sessions> <count> [memory|sqlite] [active] [--field]`: the
 * session actor's ingest step alone, in this process, no HTTP: `supervisor.ask` of `session.ingest`
 * for `count` events spread round-robin over `active` sessions (all of them unless given), asked 50
 * to an event-loop turn, after one event to each of `sessions` and the JIT warmed on as many events
 * as are measured. With `--field` each session is first given a deployed SDK's 14 schemas and 12
 * typed fields (`fieldSessionEvents`). Prints `{ns_per_event, bytes_per_event, heap_per_session}`:
 * the last is what the sessions added to the heap once made, their activity items included.
 *
 * With `active` below `sessions` the rest are held as the service holds a day's idle sessions:
 * hibernated (SESSION_HIBERNATE_SECONDS passes on the simulated clock before the load), so the
 * figure is the step's cost with that many sessions held, not with that many touched in turn.
 *
 * Bytes allocated are read from V8's GC profiler: what the used heap grew by between
 * collections, summed over the run. Unlike time, this hardly moves with the load on the machine,
 * so it serves as the step's regression count (bench/suites/step.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import type { SimulatedClock } from 'xstate';
import type { RedactedEvent } from '../src/domain/event-redaction.js';
import type { AskResult } from '../src/actor-system/session-host.js';
import type { IngestResult } from '../src/machines/session/machine-events.js';

const built = (path: string) => new URL(`../dist/src/${path}`, import.meta.url).href;
const { redactForIngest } = (await import(
  built('domain/event-redaction.js')
)) as typeof import('../src/domain/event-redaction.js');
const { EventInSchema } = (await import(built('domain/sdk-event.js'))) as typeof import('../src/domain/sdk-event.js');
const { benchSessionId, eventBody, fieldSessionEvents } = (await import(
  new URL('./lib/event-body.ts', import.meta.url).href
)) as typeof import('./lib/event-body.js');
const { inProcessSystem } = (await import(
  new URL('./lib/in-process-system.ts', import.meta.url).href
)) as typeof import('./lib/in-process-system.js');

const field = process.argv.includes('--field');
const [sessionsArgument = '1000', countArgument = '20000', store = 'memory', activeArgument] = process.argv
  .slice(2)
  .filter((arg) => arg !== '--field');
const sessions = Number(sessionsArgument);
const active = Math.min(sessions, Number(activeArgument ?? sessions));
const HIBERNATE_SECONDS = 5;
const count = Number(countArgument);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const dataDir = store === 'sqlite' ? mkdtempSync(join(tmpdir(), 'step-bench-')) : undefined;
let clock: SimulatedClock | undefined;
const holdsIdle = active < sessions;
const system = await inProcessSystem(
  store === 'sqlite' ? 'sqlite' : 'memory',
  dataDir,
  holdsIdle ? { hibernateSeconds: HIBERNATE_SECONDS, onClock: (c) => (clock = c) } : {},
);
// Each session's event as the HTTP route hands it over: redacted, with the sizes the pass counted.
const inputs = Array.from({ length: sessions }, (_, n) =>
  redactForIngest(EventInSchema.parse(JSON.parse(eventBody(benchSessionId(n))))),
);
const trace = { trace_id: 't', request_id: 'r' };

/**
 * Asked in turns of TURN, as the ingestion suite's 50 connections deliver them: each turn's asks
 * reach their sessions together (command-batch.ts). Each event is a fresh object, as each request's
 * is; the copy of the event is part of the figure.
 */
const TURN = 50;
async function ingest(from: number, to: number, over: number): Promise<void> {
  for (let start = from; start < to; start += TURN) {
    const asks: Promise<AskResult<IngestResult>>[] = [];
    for (let i = start; i < Math.min(to, start + TURN); i += 1) {
      const { event: template, matchHint, sizes } = inputs[i % over]!;
      const event: RedactedEvent = { ...template };
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

/** Each session's field state, its events in the order a session sends them, 50 sessions to a turn. */
async function seedFieldState(): Promise<void> {
  const seeding = Array.from({ length: sessions }, (_, n) => fieldSessionEvents(benchSessionId(n)));
  for (let step = 0; step < seeding[0]!.length; step += 1) {
    for (let start = 0; start < sessions; start += TURN) {
      const asks: Promise<AskResult<IngestResult>>[] = [];
      for (let n = start; n < Math.min(sessions, start + TURN); n += 1) {
        const { event, matchHint, sizes } = redactForIngest(EventInSchema.parse(seeding[n]![step]));
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
      for (const result of await Promise.all(asks)) if (!result.ok) throw new Error(`seeding failed: ${result.reason}`);
    }
  }
}

gc();
const heapBefore = v8.getHeapStatistics().used_heap_size;
if (field) await seedFieldState();
await ingest(0, sessions, sessions);
gc();
const heapPerSession = (v8.getHeapStatistics().used_heap_size - heapBefore) / sessions;
if (holdsIdle) {
  // Every session goes idle long enough to hibernate; the load's sessions wake as the warm-up touches them.
  clock!.increment((HIBERNATE_SECONDS + 2) * 1000);
  await new Promise((resolve) => setImmediate(resolve));
  const { running, hibernated } = system.sessionHost.counts;
  if (running !== 0 || hibernated !== sessions)
    throw new Error(`expected ${sessions} hibernated sessions, found ${running} running and ${hibernated} hibernated`);
}
await ingest(0, Math.max(count, 5_000), active);

gc();
const profiler = new v8.GCProfiler();
profiler.start();
const usedBefore = v8.getHeapStatistics().used_heap_size;
const started = process.hrtime.bigint();
await ingest(0, count, active);
const elapsed = Number(process.hrtime.bigint() - started);
const usedAfter = v8.getHeapStatistics().used_heap_size;
const { statistics } = profiler.stop();
let allocated = 0;
let used = usedBefore;
for (const collection of statistics) {
  allocated += collection.beforeGC.heapStatistics.usedHeapSize - used;
  used = collection.afterGC.heapStatistics.usedHeapSize;
}
allocated += usedAfter - used;

system.stop();
if (dataDir) rmSync(dataDir, { recursive: true, force: true });
process.stdout.write(
  `${JSON.stringify({
    sessions,
    active,
    count,
    store,
    field,
    ns_per_event: elapsed / count,
    bytes_per_event: allocated / count,
    heap_per_session: heapPerSession,
    collections: statistics.length,
  })}\n`,
);
