/**
 * One run of the activity actor's live path against the loop it replaced, on the built code
 * (bench/suites/activity-actor.ts). Prints one JSON line: nanoseconds per item through the actor
 * (`ActivityActor`, three readers that keep nothing, as the metrics, the flow-graph recorder and
 * one SSE hub are attached in a running service) and through a plain loop over the same three
 * readers, which is what the log's listener did before the actor.
 */
import type { ActivityItem } from '../src/domain/activity.js';
import type { ActivityLog } from '../src/store/ports.js';

const built = (path: string) => new URL(`../dist/src/${path}`, import.meta.url).href;
const { ActivityActor } = (await import(
  built('actor-system/activity-actor.js')
)) as typeof import('../src/actor-system/activity-actor.js');
const { default: pino } = await import('pino');

const count = Number(process.argv[2] ?? 1_000_000);
const items = Array.from(
  { length: count },
  (_, index) =>
    ({
      id: String(index + 1),
      kind: 'sdk_event',
      ts: '2026-11-27T00:00:00.000Z',
      session_id: 'bench',
      data: {},
    }) as unknown as ActivityItem,
);

let taken = 0;
const readers: ((item: ActivityItem) => void)[] = [
  () => void (taken += 1),
  () => void (taken += 1),
  () => void (taken += 1),
];

let listener: ((item: ActivityItem) => void) | undefined;
// The actor reads only these two of the log: where the log ends, and its committed items.
const log = {
  bounds: () => ({ firstId: 0, lastId: 0 }),
  onRecorded: (take: (item: ActivityItem) => void) => {
    listener = take;
    return { unsubscribe: () => undefined };
  },
} as unknown as ActivityLog;
const actor = new ActivityActor({ log, logger: pino({ level: 'silent' }) });
readers.forEach((reader, index) => actor.subscribe(`reader-${index}`, reader));
const throughActor = listener!;

const directly = (item: ActivityItem): void => {
  for (let index = 0; index < readers.length; index += 1) {
    try {
      readers[index]!(item);
    } catch {
      // The loop before the actor logged and went on; nothing here throws.
    }
  }
};

function timed(take: (item: ActivityItem) => void, from: number, to: number): number {
  const started = process.hrtime.bigint();
  for (let index = from; index < to; index += 1) take(items[index]!);
  return Number(process.hrtime.bigint() - started) / (to - from);
}

// Warm both paths on the first tenth, then time each on the rest (the actor only delivers ids above the newest it took).
const warm = Math.floor(count / 10);
timed(throughActor, 0, warm);
timed(directly, 0, warm);
const actorNs = timed(throughActor, warm, count);
const directNs = timed(directly, warm, count);
if (taken !== 3 * count * 2) throw new Error(`readers took ${taken} items, expected ${3 * count * 2}`);
process.stdout.write(`${JSON.stringify({ actor_ns: actorNs, direct_ns: directNs })}\n`);
