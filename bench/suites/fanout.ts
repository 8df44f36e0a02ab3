import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { benchSessionId, eventBody } from '../lib/event-body.js';
import { cpuSeconds, sleep } from '../lib/processes.js';
import { percentile, round, table } from '../lib/stats.js';
import { startService } from '../lib/targets.js';

export interface FanoutOptions {
  clients: number;
  workers: number;
  eventsPerSecond: number;
  seconds: number;
}

interface WorkerReport {
  latencies: number[];
  connected: number;
  failures: number;
}

function startWorker(
  url: string,
  clients: number,
  seconds: number,
): { child: ChildProcess; ready: Promise<void>; report: Promise<WorkerReport> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/sse-worker.ts', JSON.stringify({ url, clients, seconds: seconds + 60 })],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout });
  let markReady: () => void = () => undefined;
  let failReady: (error: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  const report = new Promise<WorkerReport>((resolve, reject) => {
    lines.on('line', (line) => {
      let message: { ready?: boolean } & Partial<WorkerReport>;
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        reject(new Error('sse worker wrote a line that is not JSON'));
        return;
      }
      if (message.ready) markReady();
      else resolve(message as WorkerReport);
    });
    child.once('exit', (code) => {
      if (code === 0) return;
      // A worker that dies before its streams are open must end the suite, not leave it waiting.
      const error = new Error(`sse worker exited ${code}`);
      failReady(error);
      reject(error);
    });
  });
  return { child, ready, report };
}

/**
 * 1,000 stream readers in worker processes while events are posted at a fixed rate: how long from
 * an item's recording to its receipt by every reader, and what the service's CPU pays for it.
 */
export async function fanoutSuite(options: FanoutOptions): Promise<{ markdown: string; p99: number }> {
  // Every stream comes from this one address, before any shows a key: the per-client cap must let them in
  // (an older checkout measured with BENCH_CHECKOUT has a lower default).
  const server = await startService({
    LOG_LEVEL: 'warn',
    SSE_MAX_STREAMS: String(options.clients + 100),
    MAX_UNAUTHENTICATED_PER_CLIENT: String(options.clients + 100),
  });
  try {
    const perWorker = Math.ceil(options.clients / options.workers);
    const workers = Array.from({ length: options.workers }, () => startWorker(server.url, perWorker, options.seconds));
    await Promise.all(workers.map((w) => w.ready));
    await sleep(500);

    const pid = server.child.pid!;
    const cpuBefore = cpuSeconds(pid);
    const started = Date.now();
    const intervalMs = 1000 / options.eventsPerSecond;
    let sent = 0;
    let postFailures = 0;
    const posts: Promise<void>[] = [];
    while (Date.now() - started < options.seconds * 1000) {
      const due = started + sent * intervalMs;
      if (due > Date.now()) await sleep(due - Date.now());
      const body = eventBody(benchSessionId(sent % 100));
      posts.push(
        fetch(`${server.url}/v1/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }).then(
          (res) => {
            if (!res.ok) postFailures += 1;
            return res.body?.cancel();
          },
          () => {
            postFailures += 1;
          },
        ),
      );
      sent += 1;
    }
    await Promise.all(posts);
    await sleep(1000);
    const wall = (Date.now() - started) / 1000;
    const cpu = (cpuSeconds(pid) - cpuBefore) / wall;

    for (const worker of workers) worker.child.kill('SIGTERM');
    const reports = await Promise.all(workers.map((w) => w.report));
    await Promise.all(workers.map((w) => (w.child.exitCode === null ? once(w.child, 'exit') : Promise.resolve())));
    const latencies = reports.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const connected = reports.reduce((total, r) => total + r.connected, 0);
    const expected = (sent - postFailures) * connected;
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const markdown = table(
      [
        'stream clients',
        'events/s posted',
        'failed posts',
        'delivered / expected',
        'p50 ms',
        'p99 ms',
        'max ms',
        'service CPU',
      ],
      [
        [
          connected,
          options.eventsPerSecond,
          postFailures,
          `${latencies.length} / ${expected}`,
          p50,
          p99,
          latencies.at(-1) ?? 0,
          `${round(cpu * 100)}%`,
        ],
      ],
    );
    return { markdown, p99 };
  } finally {
    await server.stop();
  }
}
