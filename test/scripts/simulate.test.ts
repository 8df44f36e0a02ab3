import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import type { SimulationOptions, SimulationSummary } from '../../scripts/simulator/simulation.js';
import { runSimulation, simulatedSessionId } from '../../scripts/simulator/simulation.js';
import { formatSummary } from '../../scripts/simulator/summary-report.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { built } from '../support/service-process.js';

// Runs on one store: the simulator is a client of the HTTP API, which answers the same over either; vitest.config.ts.

const running: RunningServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close(100)));
});

async function service(env: Record<string, string> = {}): Promise<{ h: Harness; url: string }> {
  // A line per request would be most of the work here, and nothing reads it.
  const h = createHarness({ env: { LOG_LEVEL: 'warn', ...env } });
  const server = await serve(h);
  running.push(server);
  return { h, url: server.url };
}

const SEED = 7;
const fast = (url: string, overrides: Partial<SimulationOptions> = {}): SimulationOptions => ({
  url,
  sessions: 4,
  rate: 500,
  concurrency: 4,
  seed: SEED,
  thinkMs: 0,
  timeoutMs: 5000,
  ...overrides,
});

interface Item {
  kind: string;
  payload: Record<string, unknown>;
}

async function activityOf(h: Harness, sessionId: string): Promise<Item[]> {
  return (await h.http.get('/api/activity').query({ session_id: sessionId, limit: 1000 }).expect(200)).body
    .items as Item[];
}

/** Spec 6.3's steps as letters; what 6.3 does not list (screen_state, analytics, schema_push, …) is left out. */
const STEP: Record<string, string> = {
  identity: 'I',
  screen_schema: 'S',
  screen_schema_lazy: 'S',
  component_input: 'C',
  validation_failed: 'F',
  trigger: 'T',
  session_start: 'B',
  voice_conversation_turn: 'V',
  voice_agent_context_fetch: 'X',
  session_stop: 'E',
  reengagement: 'R',
};
const steps = (items: Item[]) =>
  items.map((item) => STEP[item.kind === 'event' ? String(item.payload.event) : item.kind] ?? '').join('');

/**
 * Spec 6.3 for a whole journey: identity first; then, screen after screen, the screen's schema
 * (or its lazy beacon), inputs, and each validation failure followed at once by a trigger
 * evaluation (6.4's error-driven flow); a voice session is start, turns, context fetch, stop,
 * reengagement, and follows a trigger evaluation or the screen's inputs (a manual start).
 */
const VOICE = '(?:BV+XER)';
const SPEC_6_3 = new RegExp(`^I(?:SC*(?:FT${VOICE}?C*)*${VOICE}?(?:T${VOICE}?)?)+$`);

const count = (items: Item[], step: string) =>
  items.filter((item) => STEP[item.kind === 'event' ? String(item.payload.event) : item.kind] === step).length;

describe('the traffic simulator', () => {
  it(
    'plays whole journeys against a listening service; its summary matches what the service ' +
      'recorded, in the activity order of docs/reference/events.md per session',
    async () => {
      const { h, url } = await service();
      const summary = await runSimulation(fast(url));

      expect(summary.journeys).toEqual({ started: 4, completed: 4, refused: 0, cut: 0 });
      expect(summary.requests.failed).toBe(0);
      expect(summary.errorsByStatus).toEqual({});
      expect(Object.values(summary.endpoints).reduce((sum, entry) => sum + entry.requests, 0)).toBe(
        summary.requests.total,
      );
      const { p50, p90, p99, max } = summary.latency;
      expect(0 < p50 && p50 <= p90 && p90 <= p99 && p99 <= max).toBe(true);
      // The seed makes these journeys cover the whole flow, voice included.
      expect(summary.flow.validationFailures).toBeGreaterThan(0);
      expect(summary.flow.voiceSessions).toBeGreaterThan(0);

      const sessions = await Promise.all(
        Array.from({ length: 4 }, (_, index) => activityOf(h, simulatedSessionId(SEED, index))),
      );
      for (const [index, items] of sessions.entries())
        expect(steps(items), simulatedSessionId(SEED, index)).toMatch(SPEC_6_3);
      const all = sessions.flat();
      expect(all.filter((item) => item.kind === 'event')).toHaveLength(summary.flow.events);
      expect(summary.endpoints['POST /v1/events']!.requests).toBe(summary.flow.events);
      expect(count(all, 'T')).toBe(summary.flow.triggerEvaluations);
      expect(count(all, 'F')).toBe(summary.flow.validationFailures);
      expect(count(all, 'B')).toBe(summary.flow.voiceSessions);
      expect(count(all, 'V')).toBe(summary.flow.conversationTurns);
      expect(count(all, 'X')).toBe(summary.flow.contextFetches);
      expect(
        all.filter((item) => item.kind === 'trigger' && (item.payload.decision as { trigger: boolean }).trigger),
      ).toHaveLength(summary.flow.triggersFired);
    },
  );

  it('plays the same journeys for the same seed', async () => {
    const first = await service();
    const second = await service();
    const [a, b] = [
      await runSimulation(fast(first.url, { sessions: 2 })),
      await runSimulation(fast(second.url, { sessions: 2 })),
    ];
    expect(b.flow).toEqual(a.flow);
    for (let index = 0; index < 2; index += 1) {
      const id = simulatedSessionId(SEED, index);
      const shape = (items: Item[]) =>
        items.map((item) => `${item.kind}:${String(item.payload.event ?? '')}:${String(item.payload.screen ?? '')}`);
      expect(shape(await activityOf(second.h, id))).toEqual(shape(await activityOf(first.h, id)));
    }
  });

  it('counts refused requests by status, and the summary says what to do about them', async () => {
    const { url } = await service({ API_KEY: 'sim-key' });
    const summary = await runSimulation(fast(url, { sessions: 1 }));
    expect(summary.requests.failed).toBe(summary.requests.total);
    expect(summary.errorsByStatus).toEqual({ '401': summary.requests.total });
    // Played to the end, but not counted as completed: the service said no all the way.
    expect(summary.journeys).toEqual({ started: 1, completed: 0, refused: 1, cut: 0 });
    const text = formatSummary(summary);
    expect(text).toMatch(/^ {2}journeys {2}0 completed, 1 met refusals, 0 cut short by the end of the run$/m);
    expect(text).toMatch(
      new RegExp(
        `^ {2}NOT a clean run: ${summary.requests.total} of ${summary.requests.total} requests were refused or unanswered \\(exit code 1\\)$`,
        'm',
      ),
    );
    expect(text).toMatch(/^ {4}401 +\d+ {2}the service wants an API key: pass --key or set API_KEY$/m);
    expect(text).toMatch(new RegExp(`^ {2}all +${summary.requests.total} +${summary.requests.total} `, 'm'));
    expect((await runSimulation(fast(url, { sessions: 1, apiKey: 'sim-key' }))).requests.failed).toBe(0);
  });

  it('stops by itself at --duration, cutting running journeys short', async () => {
    const { url } = await service();
    const started = performance.now();
    const summary = await runSimulation(
      fast(url, { sessions: undefined, durationSeconds: 0.4, rate: 40, concurrency: 40, thinkMs: 15 }),
    );
    expect(performance.now() - started).toBeLessThan(3000);
    expect(summary.journeys.cut).toBeGreaterThan(0);
    expect(summary.journeys.started).toBe(summary.journeys.completed + summary.journeys.refused + summary.journeys.cut);
    expect(summary.requests.failed).toBe(0);
  });

  it('a journey cut short in a voice session stops it, as the app would (Ctrl-C, or the end of --duration)', async () => {
    const { h, url } = await service();
    const interrupt = new AbortController();
    let voiceSession: string | undefined;
    h.system.activity.onRecorded((item) => {
      if (item.kind !== 'session_start' || voiceSession !== undefined) return;
      voiceSession = item.session_id ?? 'none';
      interrupt.abort();
    });
    const summary = await runSimulation(fast(url, { sessions: 20, rate: 40, concurrency: 20, thinkMs: 10 }), {
      signal: interrupt.signal,
    });
    expect(voiceSession).toBeDefined();
    expect(summary.journeys.cut).toBeGreaterThan(0);
    const kinds = (await activityOf(h, voiceSession!)).map((item) => item.kind);
    expect(kinds.slice(kinds.indexOf('session_start'))).toEqual(['session_start', 'session_stop', 'reengagement']);
    expect((await h.http.get(`/api/sessions/${voiceSession}`)).body.state.voice).toBe('inactive');
  });
});

/** The CLI as a user runs it (`npm run simulate -- …`), from the run's build. */
async function simulate(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [built('scripts/simulate.ts'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number];
  return { code, stdout, stderr };
}

// Runs the CLI as its own process: start-up under load takes seconds.
describe('npm run simulate', { timeout: 60_000 }, () => {
  it('prints the summary (JSON with --json) and exits 0 when every request succeeded, sending the API key', async () => {
    const { url } = await service({ API_KEY: 'sim-key' });
    const run = await simulate(
      ['--sessions', '3', '--rate', '50', '--think', '0', '--seed', '11', '--url', url, '--json'],
      { API_KEY: 'sim-key,old-key' },
    );
    expect(run.stderr).toContain(`simulate: 3 journeys at 50/s against ${url} (seed 11)`);
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as SimulationSummary;
    expect(summary).toMatchObject({
      seed: 11,
      journeys: { started: 3, completed: 3, refused: 0, cut: 0 },
      requests: { failed: 0 },
    });
    expect(Object.keys(summary.endpoints)).toEqual(
      expect.arrayContaining(['POST /v1/events', 'POST /v1/assistant/trigger/evaluate', 'GET /v1/sdk/config']),
    );
  });

  it('exits 1 when requests failed, with the failures by status and what to do about them', async () => {
    // Hangs up on every connection: no answer, and (unlike a closed port) no other test's server can take its place.
    const hangUp = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => hangUp.listen(0, '127.0.0.1', resolve));
    const { port } = hangUp.address() as AddressInfo;
    const run = await simulate([
      '--sessions',
      '2',
      '--rate',
      '50',
      '--think',
      '0',
      '--timeout',
      '1000',
      '--url',
      `http://127.0.0.1:${port}`,
    ]).finally(() => hangUp.close());
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^Simulated 2 KYC journeys against http:\/\/127\.0\.0\.1:\d+ in [\d.]+ s \(seed \d+, 50 journeys\/s\)$/m,
    );
    expect(run.stdout).toMatch(/^ {2}requests {2}(\d+) in all, [\d.]+\/s, \1 failed$/m);
    expect(run.stdout).toMatch(/^ {4}network +\d+ {2}no answer: is the service running at the --url\?$/m);
  });

  it('refuses bad arguments with exit 2, naming the option', async () => {
    const run = await simulate(['--sessions', '0', '--rate', 'fast']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^simulate: --sessions: must be at least 1; --rate: must be a number\nusage: npm run simulate/,
    );
    expect(run.stdout).toBe('');
  });
});
