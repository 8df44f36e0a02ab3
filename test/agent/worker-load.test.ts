import { describe, expect, it } from 'vitest';
import { DEFAULT_AGENT_MAX_JOBS, loadAgentSettings } from '../../agent/settings.js';
import { workerLoad } from '../../agent/worker-load.js';

const BASE = { LIVEKIT_URL: 'ws://127.0.0.1:7880', LIVEKIT_API_KEY: 'devkey', LIVEKIT_API_SECRET: 'secret' };
const running = (jobs: number) => ({ activeJobs: Array.from({ length: jobs }, (_, i) => i) });

/** Whether the worker would tell the server it is full with `jobs` running (the framework's rule: load >= threshold). */
async function full(env: Record<string, string>, jobs: number): Promise<boolean> {
  const load = workerLoad(loadAgentSettings({ ...BASE, ...env }).worker);
  return (await load.loadFunc!(running(jobs))) >= load.loadThreshold!;
}

describe("the worker's load (docs/reference/voice-agent.md, Load and capacity)", () => {
  it('by default counts its jobs, not the machine: it takes jobs on a busy machine until AGENT_MAX_JOBS run', async () => {
    const settings = loadAgentSettings(BASE).worker;
    expect(settings).toMatchObject({ loadMeasure: 'jobs', maxJobs: DEFAULT_AGENT_MAX_JOBS });
    expect(await full({}, 0)).toBe(false);
    expect(await full({}, DEFAULT_AGENT_MAX_JOBS - 1)).toBe(false);
    expect(await full({}, DEFAULT_AGENT_MAX_JOBS)).toBe(true);
  });

  it('AGENT_MAX_JOBS sets the capacity, and AGENT_LOAD_THRESHOLD still applies to the job measure', async () => {
    expect(await full({ AGENT_MAX_JOBS: '2' }, 1)).toBe(false);
    expect(await full({ AGENT_MAX_JOBS: '2' }, 2)).toBe(true);
    expect(await full({ AGENT_MAX_JOBS: '4', AGENT_LOAD_THRESHOLD: '0.5' }, 2)).toBe(true);
    expect(await full({ AGENT_MAX_JOBS: '4', AGENT_LOAD_THRESHOLD: '0.5' }, 1)).toBe(false);
  });

  it("AGENT_LOAD_MEASURE=cpu leaves the framework's CPU measure and threshold in place", () => {
    expect(workerLoad(loadAgentSettings({ ...BASE, AGENT_LOAD_MEASURE: 'cpu' }).worker)).toEqual({});
    expect(
      workerLoad(loadAgentSettings({ ...BASE, AGENT_LOAD_MEASURE: 'cpu', AGENT_LOAD_THRESHOLD: '0.9' }).worker),
    ).toEqual({ loadThreshold: 0.9 });
    expect(() => loadAgentSettings({ ...BASE, AGENT_LOAD_MEASURE: 'gpu' })).toThrow(/AGENT_LOAD_MEASURE/);
  });

  it('keeps a warm job process for each job it takes unless AGENT_IDLE_PROCESSES says otherwise, at least one', () => {
    expect(loadAgentSettings(BASE).worker.idleProcesses).toBe(DEFAULT_AGENT_MAX_JOBS);
    expect(loadAgentSettings({ ...BASE, AGENT_MAX_JOBS: '3' }).worker.idleProcesses).toBe(3);
    expect(loadAgentSettings({ ...BASE, AGENT_MAX_JOBS: '3', AGENT_IDLE_PROCESSES: '1' }).worker.idleProcesses).toBe(1);
    // The framework reads 0 as "its own default", so 0 is refused rather than silently ignored.
    expect(() => loadAgentSettings({ ...BASE, AGENT_IDLE_PROCESSES: '0' })).toThrow(/AGENT_IDLE_PROCESSES/);
  });
});
