import type { AgentSettings } from './settings.js';

/** What the worker needs of itself to measure its load: the jobs it runs now. */
export interface RunningWorker {
  activeJobs: readonly unknown[];
}

export interface WorkerLoad {
  loadFunc?: (worker: RunningWorker) => Promise<number>;
  loadThreshold?: number;
}

/**
 * The worker's load options. The worker is full (the server sends it no job) once its load
 * reaches the threshold. By default the load is its running jobs over AGENT_MAX_JOBS, full at
 * that many: the framework's own measure, the machine's CPU use against 0.7, turns every job away
 * on a busy machine, whatever this worker runs (docs/reference/voice-agent.md, "Load and capacity").
 */
export function workerLoad(worker: AgentSettings['worker']): WorkerLoad {
  if (worker.loadMeasure === 'cpu')
    return worker.loadThreshold === undefined ? {} : { loadThreshold: worker.loadThreshold };
  const { maxJobs } = worker;
  return {
    loadFunc: async (running) => Math.min(1, running.activeJobs.length / maxJobs),
    loadThreshold: worker.loadThreshold ?? 1,
  };
}
