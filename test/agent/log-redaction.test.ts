import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { redactLogText } from '../../agent/log-redaction.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/framework-log.ts', import.meta.url));
const RAW = ['ABCDE1234F', '9876543210', 'meera@example.com', 'my pan is', 'mail meera'];

/** What the framework's logger wrote on stdout, in a process of its own. */
function logged(mode: 'pretty' | 'json'): string {
  const run = spawnSync(process.execPath, ['--import', 'tsx', FIXTURE, mode], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout + run.stderr;
}

describe("the agent's logs carry no word of the conversation", () => {
  it.each(['json', 'pretty'] as const)('in %s logs (start and dev), whoever writes them', (mode) => {
    const output = logged(mode);
    for (const raw of RAW) expect(output).not.toContain(raw);
    expect(output).toContain('[redacted]');
    // The rest of each record is still there to read.
    expect(output).toContain('sp_1');
    expect(output).toContain('nothing said here');
  });

  it('a pretty record: the field says [redacted] and the lines of its value are dropped, the next field kept', () => {
    const record = [
      '[12:00:00.000] INFO (7): playout completed',
      '    lk.pii.chat: {',
      '      "text": "mail meera@example.com"',
      '    }',
      '    speech_id: "sp_2"',
      '',
    ].join('\n');
    expect(redactLogText(record)).toBe(
      ['[12:00:00.000] INFO (7): playout completed', '    lk.pii.chat: [redacted]', '    speech_id: "sp_2"', ''].join(
        '\n',
      ),
    );
  });
});
