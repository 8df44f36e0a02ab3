import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadJob, LoadResult } from '../load-worker.js';
import { benchSessionId } from '../lib/event-body.js';
import type { ServerProcess } from '../lib/processes.js';
import { runLoad } from '../lib/processes.js';
import { seedSessions } from '../lib/session-setup.js';
import { median, ratio, round, table } from '../lib/stats.js';
import { startBareExpress, startService } from '../lib/targets.js';

export interface EndpointOptions {
  rounds: number;
  warmupSeconds: number;
  durationSeconds: number;
  connections: number;
  sessions: number;
}

interface Case {
  name: string;
  job: Omit<LoadJob, 'url' | 'connections' | 'durationSeconds'>;
}

const CASES: Case[] = [
  {
    name: 'POST /v1/assistant/trigger/evaluate',
    job: { method: 'POST', path: '/v1/assistant/trigger/evaluate', sessions: 0, body: 'trigger' },
  },
  {
    name: 'GET /v1/assistant/context/{id}',
    job: { method: 'GET', path: '/v1/assistant/context/{session}', sessions: 0, body: 'event' },
  },
];

/**
 * Trigger evaluation (in a session: cooldown, suppression, activity) and context fetch (prompt
 * built per call) on the service vs the same routes on bare express answering the same bytes.
 */
export async function endpointsSuite(
  options: EndpointOptions,
): Promise<{ markdown: string; ratios: Record<string, number> }> {
  // The baseline answers what the service answers: the context body is captured from the
  // service, which is prepared first, before the baseline starts.
  const contextFile = join(mkdtempSync(join(tmpdir(), 'bench-')), 'context.json');
  const targets: { name: string; start: () => Promise<ServerProcess>; prepare: (url: string) => Promise<void> }[] = [
    {
      name: 'service',
      start: () => startService({ LOG_LEVEL: 'warn' }),
      prepare: async (url) => {
        await seedSessions(url, options.sessions);
        writeFileSync(contextFile, await (await fetch(`${url}/v1/assistant/context/${benchSessionId(0)}`)).text());
      },
    },
    {
      name: 'bare express 5',
      start: () => startBareExpress({ CONTEXT_BODY_FILE: contextFile }),
      prepare: async () => undefined,
    },
  ];
  const results = new Map<string, LoadResult[]>();
  // Both stay up for the whole suite, prepared and warmed once; measured runs alternate.
  const servers: ServerProcess[] = [];
  try {
    const [service, baseline] = targets as [(typeof targets)[number], (typeof targets)[number]];
    const serviceServer = await service.start();
    servers.push(serviceServer);
    // The baseline starts while the service is seeded; it reads the captured body only when asked.
    const baselineStarting = baseline.start();
    await service.prepare(serviceServer.url);
    servers.push(await baselineStarting);
    const jobFor = (server: ServerProcess, testCase: Case): LoadJob => ({
      ...testCase.job,
      sessions: options.sessions,
      url: server.url,
      connections: options.connections,
    });
    for (const server of servers)
      for (const testCase of CASES)
        await runLoad({ ...jobFor(server, testCase), durationSeconds: options.warmupSeconds });
    for (let roundIndex = 0; roundIndex < options.rounds; roundIndex += 1) {
      for (const [index, target] of targets.entries()) {
        for (const testCase of CASES) {
          const key = `${testCase.name}|${target.name}`;
          results.set(key, [
            ...(results.get(key) ?? []),
            await runLoad({ ...jobFor(servers[index]!, testCase), durationSeconds: options.durationSeconds }),
          ]);
        }
      }
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
  const rows: (string | number)[][] = [];
  const ratios: Record<string, number> = {};
  for (const testCase of CASES) {
    const summary = targets.map((target) => {
      const runs = results.get(`${testCase.name}|${target.name}`)!;
      return {
        target: target.name,
        rps: median(runs.map((r) => r.requestsPerSecond)),
        p99: median(runs.map((r) => r.latencyP99)),
        failed: runs.reduce((t, r) => t + r.errors + r.non2xx, 0),
      };
    });
    const [service, express] = summary as [(typeof summary)[number], (typeof summary)[number]];
    ratios[testCase.name] = service.rps / express.rps;
    for (const s of summary)
      rows.push([testCase.name, s.target, round(s.rps), s.p99, s.failed, ratio(s.rps, express.rps)]);
  }
  return {
    markdown: table(['route', 'target', 'req/s (median)', 'p99 ms', 'failed requests', 'vs express'], rows),
    ratios,
  };
}
