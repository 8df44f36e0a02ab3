import { execFile, spawn } from 'node:child_process';
import { freePort } from '../../scripts/cluster/redis-server.js';
import type { LiveKitServer } from './livekit-server.js';
import type { MediaService } from './media-service.js';

let built: Promise<void> | undefined;

/** The agent compiled as `npm run agent` runs it (agent/tsconfig.json), once per test process. */
function buildAgent(): Promise<void> {
  built ??= new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '-p', 'agent/tsconfig.json'],
      (error, stdout, stderr) => (error ? reject(new Error(`agent build failed: ${stdout}${stderr}`)) : resolve()),
    );
  });
  return built;
}

/**
 * The real voice agent, built (`dist/agent-build/agent/main.js start`, what `npm run agent` runs) as a child process in a
 * process group of its own, so that stopping or killing it takes its job processes too. Its
 * output is kept: tests read it for what it logged, and print it when something fails.
 */
/** One JSON line of the worker's log. */
export interface WorkerLogLine {
  msg: string;
  cause?: string;
  [field: string]: unknown;
}

export async function startAgentWorker(
  liveKit: LiveKitServer,
  service: MediaService,
  modelsBaseUrl: string,
  env: Record<string, string> = {},
) {
  // The port for its HTTP server was free when picked; another test process may take it before the
  // worker listens. Started again on another, as a supervisor would restart it.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startAgentWorkerOnce(liveKit, service, modelsBaseUrl, env);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error) || !error.message.includes('EADDRINUSE')) throw error;
    }
  }
}

async function startAgentWorkerOnce(
  liveKit: LiveKitServer,
  service: MediaService,
  modelsBaseUrl: string,
  env: Record<string, string>,
) {
  await buildAgent();
  const child = spawn(process.execPath, ['dist/agent-build/agent/main.js', 'start'], {
    env: {
      ...process.env,
      LIVEKIT_URL: liveKit.wsUrl,
      LIVEKIT_API_KEY: liveKit.apiKey,
      LIVEKIT_API_SECRET: liveKit.apiSecret,
      VOICE_AGENT_NAME: service.agentName,
      SERVICE_URL: service.url,
      SERVICE_API_KEY: service.apiKey,
      MODEL_BASE_URL: modelsBaseUrl,
      MODEL_API_KEY: 'stand-in-key',
      AGENT_HTTP_PORT: String(await freePort()),
      // Capacity by jobs, not CPU: a shared two-core test machine is often fully busy, and the
      // server sends no job to a worker that reports a full load.
      AGENT_MAX_JOBS: '40',
      // Two warm processes, not one per job (the default, 40 here): a test starts a call or two at a time.
      AGENT_IDLE_PROCESSES: '2',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const registered = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/registered worker/i.test(output)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`agent worker exited with ${code} before registering:\n${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const timeout = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 60_000);
  await registered.finally(() => clearTimeout(timeout));

  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Already gone.
    }
  };
  return {
    pid: child.pid!,
    output: () => output,
    /** What the worker and its jobs logged of one session: its JSON lines, parsed. */
    logOf: (sessionId: string) =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{') && line.includes(`"session_id":"${sessionId}"`))
        .map((line) => JSON.parse(line) as WorkerLogLine),
    /** Job processes that have loaded the agent and its VAD and wait for a job. */
    readyProcesses: () => output.split('\n').filter((line) => line.includes('"job process ready"')).length,
    /** The worker and its jobs, killed at once: what a crash or an OOM kill looks like to the room. */
    async kill() {
      signalGroup('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalGroup('SIGTERM');
      const killer = setTimeout(() => signalGroup('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
      // Job processes that outlived their worker.
      signalGroup('SIGKILL');
    },
  };
}

export type AgentWorker = Awaited<ReturnType<typeof startAgentWorkerOnce>>;
