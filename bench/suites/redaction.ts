import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { median, round, table } from '../lib/stats.js';

const run = promisify(execFile);

export interface RedactionOptions {
  /** Events per timed run (the first runs warm the JIT and are part of the figure). */
  count: number;
  rounds: number;
  /** Also count instructions under valgrind callgrind (minutes; immune to a loaded machine). */
  callgrind: boolean;
}

const MODES = [
  { mode: 'clean', what: 'redaction pass, bench event (a PAN hint, ids)' },
  { mode: 'dirty', what: 'redaction pass, identity values in free text and nested fields' },
  { mode: 'parse', what: 'JSON parse and schema validation of the bench event (yardstick)' },
  { mode: 'ingest', what: 'in-process ingest: validation, pass, session update, activity' },
] as const;

const WORKER = 'bench/redaction-worker.ts';

async function nsPerEvent(mode: string, count: number): Promise<number> {
  const { stdout } = await run(process.execPath, [WORKER, mode, String(count)]);
  return (JSON.parse(stdout.trim().split('\n').at(-1)!) as { ns_per_event: number }).ns_per_event;
}

/** Instructions of a whole run under callgrind; two counts apart, start-up cancels out. */
async function instructions(mode: string, count: number): Promise<number> {
  const { stderr } = await run(
    'valgrind',
    ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, WORKER, mode, String(count)],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const collected = /Collected : (\d+)/.exec(stderr);
  if (!collected) throw new Error(`callgrind gave no count for ${mode}`);
  return Number(collected[1]);
}

/**
 * What the redaction pass costs per event, alone and next to the rest of ingestion, in wall time
 * (median of interleaved rounds, noisy on a shared machine) and optionally in instructions.
 */
export async function redactionSuite(
  options: RedactionOptions,
): Promise<{ markdown: string; passShareOfIngest: number }> {
  const times = new Map<string, number[]>(MODES.map(({ mode }) => [mode, []]));
  for (let index = 0; index < options.rounds; index += 1) {
    for (const { mode } of MODES) times.get(mode)!.push(await nsPerEvent(mode, options.count));
  }
  const counts = new Map<string, number>();
  if (options.callgrind) {
    const [low, high] = [2_000, 7_000];
    for (const { mode } of MODES)
      counts.set(mode, ((await instructions(mode, high)) - (await instructions(mode, low))) / (high - low));
  }
  const ns = (mode: string) => median(times.get(mode)!);
  const ir = (mode: string) => counts.get(mode);
  const ingestIr = ir('ingest');
  const rows = MODES.map(({ mode, what }) => {
    const count = ir(mode);
    return [
      what,
      round(ns(mode) / 1000, 1),
      count === undefined ? 'not run' : round(count).toLocaleString('en-US'),
      count === undefined || ingestIr === undefined ? 'n/a' : `${round((100 * count) / ingestIr)}%`,
    ];
  });
  const passShareOfIngest = (ir('clean') ?? ns('clean')) / (ingestIr ?? ns('ingest'));
  return {
    markdown: table(['step, per event', 'µs (median wall)', 'instructions (callgrind)', 'of in-process ingest'], rows),
    passShareOfIngest,
  };
}
