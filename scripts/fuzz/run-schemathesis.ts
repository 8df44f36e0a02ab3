import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSchemathesis } from './schemathesis-install.js';
import { startBuiltService } from './service-process.js';
import { unframed } from './closing-banner.js';

/**
 * `npm run test:fuzz` (docs/how-to/fuzzing.md): Schemathesis against the built service's OpenAPI
 * document, every phase, positive and negative data, every check; once with the key and once
 * without. Exits non-zero on any failure. FUZZ_MAX_EXAMPLES and FUZZ_SEED bound and repeat a run.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONFIG = join(ROOT, 'scripts', 'fuzz', 'schemathesis.toml');
const maxExamples = process.env.FUZZ_MAX_EXAMPLES ?? '30';
const seed = process.env.FUZZ_SEED ?? '1';

const log = (line: string) => process.stdout.write(`${line}\n`);

function schemathesisArgs(documentUrl: string, headers: string[]): string[] {
  return [
    '--config-file',
    CONFIG,
    'run',
    documentUrl,
    ...headers.flatMap((header) => ['-H', header]),
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--mode',
    'all',
    '--checks',
    'all',
    '--max-examples',
    maxExamples,
    '--seed',
    seed,
    // One worker: the runs repeat with the seed, and CPython 3.11's parser is not safe across Hypothesis's threads.
    '--workers',
    '1',
    // The request timeout is in schemathesis.toml: an operation there sets its own, which a command-line one would override.
  ];
}

async function schemathesis(st: string, name: string, args: string[], cwd: string): Promise<boolean> {
  const shown = args.map((arg) => (arg.startsWith('X-API-Key:') ? `'X-API-Key: <key>'` : arg));
  log(`\n== Schemathesis ${name}: st ${shown.join(' ')}`);
  const started = performance.now();
  // Unbuffered: piped, Python would hold its output back until the run ends.
  const child = spawn(st, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => log(unframed(line)));
  // Both awaited from the start: the output can end before or after the process does.
  const [[code]] = (await Promise.all([once(child, 'exit'), once(lines, 'close')])) as [[number | null], unknown];
  log(
    `== Schemathesis ${name}: ${code === 0 ? 'passed' : `failed (exit ${code})`} in ${Math.round((performance.now() - started) / 1000)} s`,
  );
  return code === 0;
}

async function main(): Promise<number> {
  const st = ensureSchemathesis(log);
  log('== building the service (npm run build, as npm start does first)');
  const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) return build.status ?? 1;
  const key = randomBytes(16).toString('hex');
  const service = await startBuiltService(ROOT, { API_KEY: key });
  // Schemathesis keeps its example database and cache where it runs: not in the repository.
  const workDir = mkdtempSync(join(tmpdir(), 'kyc-schemathesis-'));
  log(`== service pid ${service.pid} on ${service.url}`);
  try {
    const keyed = await schemathesis(
      st,
      'with X-API-Key',
      schemathesisArgs(`${service.url}/openapi.json`, [`X-API-Key: ${key}`]),
      workDir,
    );
    // Without a key the document is read where the reference page reads it.
    const keyless = await schemathesis(
      st,
      'without a key',
      [...schemathesisArgs(`${service.url}/docs/openapi.json`, []), '--url', service.url],
      workDir,
    );
    return keyed && keyless ? 0 : 1;
  } finally {
    await service.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
