/**
 * Plays realistic KYC journeys against a running service and summarises what happened:
 *
 *   npm run simulate -- --sessions 20 --rate 5 [--url URL]
 *
 * The journeys and their shapes are in scripts/simulator; `runSimulation` there is the
 * programmatic entry point (benchmarks use it as their load source).
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ProgressBar } from './simulator/progress-bar.js';
import type { SimulationOptions } from './simulator/simulation.js';
import { runSimulation } from './simulator/simulation.js';
import { formatSummary } from './simulator/summary-report.js';

const USAGE = `usage: npm run simulate -- [--sessions N] [--rate R] [--duration S] [--url URL] [--key KEY]
                           [--seed N] [--concurrency C] [--think MS] [--timeout MS] [--json]
  --sessions     journeys to run (default 20, unless --duration is given)
  --rate         journeys started per second (default 5)
  --duration     stop after this many seconds, cutting running journeys short
  --url          the service (default http://127.0.0.1:8080)
  --key          X-API-Key (default: the first key in $API_KEY)
  --seed         seed of every choice the journeys make (default: random; the summary shows it)
  --concurrency  journeys in flight at most (default 100)
  --think        mean pause between a user's steps, ms (default 100; 0 for load runs)
  --timeout      budget of one request, ms (default 10000)
  --json         print the summary as JSON
exit code: 0 when every request was answered 2xx, 1 when any failed, 2 on bad arguments`;

const DEFAULT_SESSIONS = 20;

const positiveInt = (name: string) =>
  z.coerce
    .number({ error: `${name}: must be a number` })
    .int(`${name}: must be a whole number`)
    .positive(`${name}: must be at least 1`);
const positive = (name: string) =>
  z.coerce
    .number({ error: `${name}: must be a number` })
    .positive(`${name}: must be above 0`)
    .finite();

const Args = z.object({
  sessions: positiveInt('--sessions').optional(),
  rate: positive('--rate').max(100_000, '--rate: must be at most 100000').default(5),
  duration: positive('--duration').max(86_400, '--duration: must be at most 86400').optional(),
  url: z
    .url({ protocol: /^https?$/, error: '--url: must be an http(s) URL, e.g. http://127.0.0.1:8080' })
    .default('http://127.0.0.1:8080'),
  key: z.string().optional(),
  seed: z.coerce
    .number({ error: '--seed: must be a number' })
    .int('--seed: must be a whole number')
    .min(0, '--seed: must be 0 or more')
    .max(2_147_483_647, '--seed: must be below 2^31')
    .optional(),
  concurrency: positiveInt('--concurrency').default(100),
  think: z.coerce
    .number({ error: '--think: must be a number' })
    .min(0, '--think: must be 0 or more')
    .max(60_000, '--think: must be at most 60000')
    .default(100),
  timeout: positiveInt('--timeout').default(10_000),
  json: z.boolean().default(false),
  help: z.boolean().default(false),
});

class UsageError extends Error {}

function parseOptions(argv: string[]): { options: SimulationOptions; json: boolean } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        sessions: { type: 'string' },
        rate: { type: 'string' },
        duration: { type: 'string' },
        url: { type: 'string' },
        key: { type: 'string' },
        seed: { type: 'string' },
        concurrency: { type: 'string' },
        think: { type: 'string' },
        timeout: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const parsed = Args.safeParse(values);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((issue) => issue.message).join('; '));
  const args = parsed.data;
  if (args.help) throw new UsageError('');
  return {
    json: args.json,
    options: {
      url: args.url,
      sessions: args.sessions ?? (args.duration === undefined ? DEFAULT_SESSIONS : undefined),
      durationSeconds: args.duration,
      rate: args.rate,
      concurrency: args.concurrency,
      seed: args.seed ?? Math.floor(Math.random() * 1_000_000),
      thinkMs: args.think,
      timeoutMs: args.timeout,
      apiKey: args.key ?? process.env.API_KEY?.split(',')[0]?.trim() ?? undefined,
    },
  };
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.message) process.stderr.write(`simulate: ${error.message}\n`);
    process.stderr.write(`${USAGE}\n`);
    process.exit(error.message ? 2 : 0);
  }
  const { options, json } = parsed;
  const bound = options.sessions !== undefined ? `${options.sessions} journeys` : `${options.durationSeconds} s`;
  process.stderr.write(`simulate: ${bound} at ${options.rate}/s against ${options.url} (seed ${options.seed})\n`);

  const interrupt = new AbortController();
  let interrupts = 0;
  process.on('SIGINT', () => {
    interrupts += 1;
    // A second Ctrl-C means now, without waiting for running journeys to stop their voice sessions.
    if (interrupts > 1) process.exit(130);
    interrupt.abort();
  });
  const bar = new ProgressBar(
    options.sessions !== undefined ? { sessions: options.sessions } : { durationSeconds: options.durationSeconds! },
  );
  const summary = await runSimulation(options, {
    onProgress: (progress) => bar.update(progress),
    signal: interrupt.signal,
  });
  bar.stop();
  process.stdout.write(json ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary));
  process.exitCode = summary.requests.failed > 0 ? 1 : 0;
}

await main();
