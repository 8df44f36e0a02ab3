import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LOG_BUFFER_BYTES } from '../src/logger.js';

/**
 * The service's stdout log (src/logger.ts `stdoutLog`), each case in a process of its own: ending
 * the log ends the process's stdout, and what is held for a slow reader is the process's memory.
 */
async function run(lines: string[]): Promise<{ code: unknown; stdout: string; stderr: string }> {
  const script = [
    "import { createLogger, stdoutLog } from './src/logger.ts';",
    'const log = stdoutLog();',
    "const logger = createLogger('info', log.destination);",
    ...lines,
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = await once(child, 'exit');
  return { code, stdout, stderr };
}

describe("the service's stdout log", { timeout: 30_000 }, () => {
  it("drops a line that comes once the log is ending (a connection's close noted late), rather than exiting 1", async () => {
    const { code, stdout, stderr } = await run([
      "logger.info('before the end');",
      'const settled = log.settled();',
      "logger.warn('while ending');",
      'await settled;',
      "logger.warn('after the end');",
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('before the end');
    expect(stdout).not.toContain('while ending');
  });

  it('holds at most LOG_BUFFER_BYTES for stdout, drops lines past it, and says how many once stdout has caught up', async () => {
    // Twice the bound in one turn, while nothing can be written: about half of it is dropped.
    const written = Math.ceil((2 * LOG_BUFFER_BYTES) / 1024);
    const { code, stdout, stderr } = await run([
      "log.onDropped((lines) => { logger.warn({ dropped_line_count: lines }, 'log lines dropped'); void log.settled().then(() => process.exit(0)); });",
      "const pad = 'x'.repeat(1000);",
      `for (let line = 0; line < ${written}; line += 1) logger.info({ line, pad }, 'filler');`,
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    const fillers = lines.filter((line) => line.includes('"filler"'));
    const report = JSON.parse(lines.at(-1)!) as { msg: string; dropped_line_count: number };
    expect(report.msg).toBe('log lines dropped');
    // Every line is either written or counted, and what was held never passed the bound.
    expect(fillers.length + report.dropped_line_count).toBe(written);
    expect(fillers.join('\n').length).toBeLessThanOrEqual(LOG_BUFFER_BYTES + 2048);
    expect(report.dropped_line_count).toBeGreaterThan(written / 3);
  });
});
