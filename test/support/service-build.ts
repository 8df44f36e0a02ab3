import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The repository this file is in: the one whose service the run builds. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * Where a run's build goes: under node_modules, so the service's packages resolve from it as they
 * do from src/; and on no path with a dot-named folder (`.cache`), which `res.sendFile` refuses
 * to serve from, so the console would not load.
 */
const BUILDS = join(ROOT, 'node_modules', 'kyc-test-service');

/** The environment variable that names the run's build for test/support/service-process.ts. */
export const SERVICE_BUILD_ENV = 'TEST_SERVICE_BUILD';

/** Every file under `dir`. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

/**
 * Vitest global setup: the service and its scripts compiled to JavaScript once per run, for the
 * tests that start them as processes. Under `tsx` each start compiled and resolved every module
 * through its loader again: about 0.8 s of CPU a start, tens of starts a run. The compiler is the
 * one `tsx` itself runs (esbuild), file by file, so each module is the same code; the files that
 * are not TypeScript (the console, the knowledge base) are copied beside them, where the code
 * finds them by its own URL.
 */
export default async function setup(): Promise<() => void> {
  const out = join(BUILDS, String(process.pid));
  rmSync(out, { recursive: true, force: true });
  const files = [...filesUnder(join(ROOT, 'src')), ...filesUnder(join(ROOT, 'scripts'))];
  await build({
    entryPoints: files.filter((file) => file.endsWith('.ts')),
    outdir: out,
    outbase: ROOT,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    logLevel: 'error',
  });
  for (const file of files.filter((file) => !file.endsWith('.ts'))) {
    const copy = join(out, relative(ROOT, file));
    mkdirSync(join(copy, '..'), { recursive: true });
    cpSync(file, copy);
  }
  // Under node_modules the repository's package.json is not read: say again that these are ES modules.
  writeFileSync(join(out, 'package.json'), JSON.stringify({ type: 'module' }));
  process.env[SERVICE_BUILD_ENV] = out;
  return () => rmSync(out, { recursive: true, force: true });
}
