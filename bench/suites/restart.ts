import type { ServerProcess } from '../lib/processes.js';
import { rssBytes, runLoad } from '../lib/processes.js';
import { benchSessionId } from '../lib/event-body.js';
import { round, table } from '../lib/stats.js';
import { startService } from '../lib/targets.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RestartOptions {
  sessions: number;
}

interface Measured {
  held: number;
  /** From spawning the process to /health answering. */
  startMs: number;
  /** GET /api/sessions/{id} of a session held only in the store, right after start. */
  firstReadMs: number;
  /** An event to a session held only in the store: load, run, commit. */
  firstWriteMs: number;
  rssMiB: number;
}

/**
 * Restart with sessions held (STORE=sqlite): the service is filled with N sessions, killed with
 * SIGKILL, and started again on the same data directory. Start-up loads no session (they are
 * loaded when used), so start time should not grow with N; the first read and write of a session
 * pay for loading it.
 */
export async function restartSuite(options: RestartOptions): Promise<{ markdown: string; rows: Measured[] }> {
  const rows: Measured[] = [];
  for (const held of [0, options.sessions]) {
    const dataDir = mkdtempSync(join(tmpdir(), 'kyc-bench-restart-'));
    const env = {
      LOG_LEVEL: 'warn',
      STORE: 'sqlite',
      DATA_DIR: dataDir,
      MAX_SESSIONS: String(Math.max(100_000, held)),
    };
    try {
      const first = await startService(env);
      if (held > 0)
        await runLoad({
          url: first.url,
          method: 'POST',
          path: '/v1/events',
          connections: 50,
          body: 'event',
          sessions: held,
          sequential: true,
          amount: held,
        });
      await kill(first);
      const spawned = performance.now();
      const second = await startService(env);
      const startMs = performance.now() - spawned;
      const id = benchSessionId(Math.max(0, held - 1));
      let at = performance.now();
      const read = await fetch(`${second.url}/api/sessions/${id}`);
      const firstReadMs = performance.now() - at;
      if (held > 0 && read.status !== 200) throw new Error(`a held session read after restart answered ${read.status}`);
      at = performance.now();
      await fetch(`${second.url}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session_id: id, event: 'identity' }),
      });
      const firstWriteMs = performance.now() - at;
      rows.push({ held, startMs, firstReadMs, firstWriteMs, rssMiB: rssBytes(second.child.pid!) / 2 ** 20 });
      await second.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const markdown = table(
    [
      'sessions held',
      'start to /health answering (ms)',
      'first read of a held session (ms)',
      'first event to it (ms)',
      'RSS after start (MiB)',
    ],
    rows.map((r) => [
      r.held.toLocaleString('en-US'),
      round(r.startMs),
      round(r.firstReadMs, 1),
      round(r.firstWriteMs, 1),
      round(r.rssMiB, 1),
    ]),
  );
  return { markdown, rows };
}

async function kill(server: ServerProcess): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await exited;
}
