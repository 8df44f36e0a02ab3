import { heapGrowth, heapSummary, totalBytes } from '../lib/heap-snapshot.js';
import { collectGarbage } from '../lib/inspector.js';
import { freePort, runLoad, rssBytes, sleep } from '../lib/processes.js';
import { round, table } from '../lib/stats.js';
import { startService } from '../lib/targets.js';

interface MemoryUse {
  used_bytes: number;
  sessions: number;
}

async function memoryUse(url: string): Promise<MemoryUse> {
  return ((await (await fetch(`${url}/health`)).json()) as { memory: MemoryUse }).memory;
}

export interface SoakOptions {
  minutes: number;
  sessions: number;
  requestsPerSecond: number;
  /** RSS and heap are sampled after each slice of this many seconds. */
  sliceSeconds: number;
}

/**
 * A long run at a steady rate over many sessions, half of the events stuffed with 30 KB of unknown
 * fields: does anything grow that should not? Every session gets its first events before the start
 * snapshot, so what follows is churn on a population already in place: with nothing leaking, RSS and
 * the live heap level off, and the heap snapshot diff between start and end is small and names
 * nothing that grows with requests.
 */
export async function soakSuite(options: SoakOptions): Promise<{ markdown: string }> {
  const inspector = `127.0.0.1:${await freePort()}`;
  const server = await startService({ LOG_LEVEL: 'warn', SESSION_HIBERNATE_SECONDS: '30' }, [`--inspect=${inspector}`]);
  const pid = server.child.pid!;
  const settledRss = async () => {
    await collectGarbage(inspector);
    await sleep(200);
    return rssBytes(pid);
  };
  try {
    const load = {
      url: server.url,
      method: 'POST' as const,
      path: '/v1/events',
      connections: 20,
      sessions: options.sessions,
    };
    // Every session in place, each with a stuffed and a plain event.
    await runLoad({ ...load, body: 'stuffed', sequential: true, amount: options.sessions });
    await runLoad({ ...load, body: 'event', sequential: true, amount: options.sessions });
    const rssStart = await settledRss();
    const heapStart = await heapSummary(inspector);
    const heldStart = await memoryUse(server.url);
    const samples: (string | number)[][] = [
      ['0', round(rssStart / 2 ** 20), round(totalBytes(heapStart) / 2 ** 20, 1), 0, 0],
    ];
    const slices = Math.ceil((options.minutes * 60) / options.sliceSeconds);
    let failed = 0;
    for (let slice = 1; slice <= slices; slice += 1) {
      const half = { ...load, durationSeconds: options.sliceSeconds / 2, overallRate: options.requestsPerSecond };
      const stuffed = await runLoad({ ...half, body: 'stuffed' });
      const plain = await runLoad({ ...half, body: 'event' });
      failed += stuffed.errors + stuffed.non2xx + plain.errors + plain.non2xx;
      const rss = await settledRss();
      samples.push([
        String(round((slice * options.sliceSeconds) / 60, 1)),
        round(rss / 2 ** 20),
        '',
        round((stuffed.requestsPerSecond + plain.requestsPerSecond) / 2),
        stuffed.non2xx + plain.non2xx,
      ]);
    }
    const rssEnd = await settledRss();
    const heapEnd = await heapSummary(inspector);
    const heldEnd = await memoryUse(server.url);
    const liveGrowth = totalBytes(heapEnd) - totalBytes(heapStart);
    samples.push(['end', round(rssEnd / 2 ** 20), round(totalBytes(heapEnd) / 2 ** 20, 1), '', '']);
    const growth = heapGrowth(heapStart, heapEnd, 12);
    const markdown =
      `${table(['minute', 'RSS MiB (after GC)', 'live heap MiB (snapshot)', 'req/s', 'non-2xx'], samples)}\n\n` +
      `Requests that failed or were refused: ${failed}.\n\n` +
      `What the sessions hold by the service's own estimate (/health \`memory.used_bytes\`, ${heldEnd.sessions.toLocaleString('en-US')} sessions): ` +
      `${round(heldStart.used_bytes / 2 ** 20, 1)} MiB at the start, ${round(heldEnd.used_bytes / 2 ** 20, 1)} MiB at the end (+${round((heldEnd.used_bytes - heldStart.used_bytes) / 2 ** 20, 1)} MiB); ` +
      `the live heap grew ${round(liveGrowth / 2 ** 20, 1)} MiB. A leak would show as live growth beyond what the sessions are estimated to hold.\n\n` +
      `Heap snapshot diff, end minus start, largest growth first:\n\n` +
      table(
        ['node type:name', 'Δ count', 'Δ KiB'],
        growth.map((g) => [g.key.replace(/\|/g, '/'), g.count, round(g.bytes / 1024, 1)]),
      );
    return { markdown };
  } finally {
    await server.stop();
  }
}
