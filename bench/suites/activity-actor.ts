import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { onServerCores } from '../lib/cpu-sets.js';
import { SERVICE_NODE_FLAGS } from '../lib/node-flags.js';
import { median, round, table } from '../lib/stats.js';

const run = promisify(execFile);

interface Measured {
  actor_ns: number;
  direct_ns: number;
}

/**
 * What the activity actor adds per committed item (docs/explanation/activity-actor.md, "What it costs"): the
 * actor's live path against the plain loop over the readers it replaced, in a process of its own
 * on the servers' cores, median of `rounds`. A difference of a fraction of a microsecond per item
 * is below what the ingestion bench can resolve, whose run-to-run spread is several microseconds.
 */
export async function activityActorSuite(options: {
  items: number;
  rounds: number;
}): Promise<{ markdown: string; addedNs: number }> {
  const measured: Measured[] = [];
  for (let round_ = 0; round_ < options.rounds; round_ += 1) {
    const [command, ...args] = onServerCores([
      process.execPath,
      ...SERVICE_NODE_FLAGS,
      'bench/activity-actor-worker.ts',
      String(options.items),
    ]);
    const { stdout } = await run(command!, args, { maxBuffer: 1024 * 1024 });
    measured.push(JSON.parse(stdout.trim().split('\n').at(-1)!) as Measured);
  }
  const actorNs = median(measured.map((m) => m.actor_ns));
  const directNs = median(measured.map((m) => m.direct_ns));
  const markdown = table(
    ['path', 'ns per item (median)'],
    [
      ['the activity actor, 3 readers', round(actorNs)],
      ['a plain loop over the same 3 readers (before the actor)', round(directNs)],
    ],
  );
  return { markdown, addedNs: actorNs - directNs };
}
