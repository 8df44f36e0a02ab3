import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { RAW_PAN } from '../fixtures/client-events.js';
import type { Harness } from '../support/harness.js';
import { activityId, createHarness, serve } from '../support/harness.js';
import { built } from '../support/service-process.js';

// Runs on one store: `npm run tail` is a client of the activity stream; its resume across a restart is in durability/; vitest.config.ts.

const KEY = 'tail-key';
const running: RunningServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close(100)));
});

/** The tail client as a user runs it, in its own process (from the run's build); stdout and stderr kept as lines. */
function startTail(args: string[]) {
  const child = spawn(process.execPath, [built('scripts/tail.ts'), ...args], {
    env: { ...process.env, ACTIVITY_API_KEY: KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: string[] = [];
  const err: string[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => out.push(line));
  createInterface({ input: child.stderr }).on('line', (line) => err.push(line));
  return { child, out, err };
}

async function post(url: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${url}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

const idsOf = (lines: string[]) => lines.map((line) => /#(\d+)/.exec(line)?.[1]);
const streamsOpen = (h: Harness) => h.app.activityStreams.stats().streams;
// Each test starts the client as its own tsx process: on a loaded 2-core machine start-up alone
// can take seconds, so the waits are generous; a passing run still takes a second or two.
const slow = { timeout: 20_000 };

describe('npm run tail', { timeout: 60_000 }, () => {
  it('prints one line per matching item, resumes after a dropped connection without loss or repeats, and exits 0 on SIGINT', async () => {
    const h = createHarness({ env: { API_KEY: KEY } });
    const server = await serve(h);
    running.push(server);
    const tail = startTail(['--url', server.url, '--session', 's1']);
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(1), slow);

    await post(server.url, {
      session_id: 's1',
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'pan_field',
      component_type: 'text_input',
      hint: RAW_PAN,
      masked: false,
    });
    await post(server.url, { session_id: 's2', event: 'identity' });
    await post(server.url, { session_id: 's1', event: 'validation_failed', errors: ['pan_invalid_format'] });
    await vi.waitFor(() => expect(tail.out).toHaveLength(2), slow);
    expect(tail.out[0]).toMatch(
      new RegExp(
        `^2026-11-20T12:00:00\\.000Z {2}event {10}s1 {2}#${activityId(h, 1)} {2}event=component_input screen=pan_details component_id=pan_field hint=\\*{10} masked=true$`,
      ),
    );
    expect(tail.out[1]).toMatch(
      new RegExp(` s1 {2}#${activityId(h, 3)} {2}event=validation_failed .*errors=\\["pan_invalid_format"\\]`),
    );

    server.server.closeAllConnections();
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(0), slow);
    await post(server.url, { session_id: 's1', event: 'identity' });
    await post(server.url, { session_id: 's1', event: 'screen_schema_lazy', screen: 'selfie_capture' });
    await vi.waitFor(() => expect(tail.out).toHaveLength(4), slow);
    await post(server.url, { session_id: 's1', event: 'identity' });
    await vi.waitFor(() => expect(tail.out).toHaveLength(5), slow);

    expect(idsOf(tail.out)).toEqual([1, 3, 4, 5, 6].map((n) => activityId(h, n)));
    expect(tail.err.some((line) => line.includes(`resuming after id ${activityId(h, 3)}`))).toBe(true);
    expect(tail.out.join('\n')).not.toContain(RAW_PAN);

    const exited = once(tail.child, 'close');
    tail.child.kill('SIGINT');
    expect(await exited).toEqual([0, null]);
  });

  it('reports a reset and prints what the server still holds', async () => {
    const h = createHarness({ env: { API_KEY: KEY, ACTIVITY_BUFFER_SIZE: '3' } });
    const server = await serve(h);
    running.push(server);
    const tail = startTail(['--url', server.url]);
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(1), slow);
    await post(server.url, { session_id: 's1', event: 'identity' });
    await vi.waitFor(() => expect(tail.out).toHaveLength(1), slow);

    server.server.closeAllConnections();
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(0), slow);
    for (let i = 0; i < 5; i += 1) await post(server.url, { session_id: 's1', event: 'identity' });
    await vi.waitFor(() => expect(tail.out).toHaveLength(4), slow);

    expect(idsOf(tail.out)).toEqual([1, 4, 5, 6].map((n) => activityId(h, n)));
    expect(
      tail.err.some((line) =>
        line.includes(`items after id ${activityId(h, 1)} and before id ${activityId(h, 4)} were dropped`),
      ),
    ).toBe(true);
    tail.child.kill('SIGINT');
    expect((await once(tail.child, 'close'))[0]).toBe(0);
  });

  it('stops with exit 2 and the server detail when retrying cannot help', async () => {
    const h = createHarness({ env: { API_KEY: KEY } });
    const server = await serve(h);
    running.push(server);
    const tail = startTail(['--url', server.url, '--kind', 'nonsense']);
    const [code] = await once(tail.child, 'close');
    expect(code).toBe(2);
    expect(tail.err.join('\n')).toMatch(/422 Unprocessable Entity: kind: must be one of event/);
    expect(streamsOpen(h)).toBe(0);
  });
});
