/**
 * `node bench/redaction-worker.ts <mode> <count>`: runs one step of ingestion `count` times in this
 * process and prints `{ns_per_event}`. Run under callgrind at two counts, the difference of the
 * instruction totals over the difference of the counts is the cost per event, start-up cancelled.
 *
 * Modes: `clean` and `dirty` run the redaction pass alone on the bench event (a PAN hint and ids)
 * and on an event with identity values in free text and nested fields; `parse` is JSON parsing
 * and validation of the bench event (what ingestion did before the pass, a yardstick); `ingest`
 * runs what ingestion does in process, validation, the pass and the session update.
 */
import type { SdkEvent } from '../src/domain/sdk-event.js';
import type { IngestResult } from '../src/machines/session/machine-events.js';

// The built service (`npm run bench` builds it first), loaded at run time so this file runs on
// plain node (type stripping) without a loader: under callgrind a loader costs minutes.
const built = (path: string) => new URL(`../dist/src/${path}`, import.meta.url).href;
const { redactForIngest } = (await import(
  built('domain/event-redaction.js')
)) as typeof import('../src/domain/event-redaction.js');
const { EventInSchema } = (await import(built('domain/sdk-event.js'))) as typeof import('../src/domain/sdk-event.js');
const { benchSessionId, eventBody } = (await import(
  new URL('./lib/event-body.ts', import.meta.url).href
)) as typeof import('./lib/event-body.js');
const { inProcessSystem } = (await import(
  new URL('./lib/in-process-system.ts', import.meta.url).href
)) as typeof import('./lib/in-process-system.js');

const [mode = 'clean', countArgument = '10000'] = process.argv.slice(2);
const count = Number(countArgument);

const clean = EventInSchema.parse(JSON.parse(eventBody(benchSessionId(1))));
const dirty = EventInSchema.parse({
  ...clean,
  event: 'voice_conversation_turn',
  hint: undefined,
  properties: {
    role: 'user',
    transcript: 'my PAN is ABCDE1234F',
    text: 'call me on 9876543210 or write to jane.doe@example.com',
    data: { email: 'jane.doe@example.com', dob: '1995-06-15', stages: ['pan_details', 'digilocker_aadhaar'] },
  },
});

async function ingestLoop(): Promise<number> {
  const system = await inProcessSystem();
  const bodies = Array.from({ length: 1000 }, (_, n) => eventBody(benchSessionId(n)));
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i += 1) {
    const received = EventInSchema.parse(JSON.parse(bodies[i % bodies.length]!));
    const { event, matchHint, sizes } = redactForIngest(received);
    await system.sessionHost.ask<IngestResult>(event.session_id, 'create', (reply, at) => ({
      type: 'session.ingest',
      event,
      matchHint,
      sizes,
      at,
      trace: { trace_id: 't', request_id: 'r' },
      reply,
    }));
  }
  const elapsed = Number(process.hrtime.bigint() - started);
  system.stop();
  return elapsed;
}

function passLoop(event: SdkEvent): number {
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i += 1) sink += Object.keys(redactForIngest(event).event).length;
  const elapsed = Number(process.hrtime.bigint() - started);
  if (sink === 0) throw new Error('nothing redacted');
  return elapsed;
}

/** Validation of the bench event, the step ingestion already had before the pass: a yardstick. */
function parseLoop(): number {
  const body = eventBody(benchSessionId(1));
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i += 1) sink += Object.keys(EventInSchema.parse(JSON.parse(body))).length;
  const elapsed = Number(process.hrtime.bigint() - started);
  if (sink === 0) throw new Error('nothing parsed');
  return elapsed;
}

const elapsed =
  mode === 'ingest' ? await ingestLoop() : mode === 'parse' ? parseLoop() : passLoop(mode === 'dirty' ? dirty : clean);
process.stdout.write(`${JSON.stringify({ mode, count, ns_per_event: elapsed / count })}\n`);
