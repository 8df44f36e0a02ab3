import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServerOptions, cli } from '@livekit/agents';
import { localVoiceProblems } from './local-voice/requirements.js';
import { redactConversationLogs } from './log-redaction.js';
import { describeModels } from './providers.js';
import { AgentSettingsError, loadAgentSettings } from './settings.js';
import { workerLoad } from './worker-load.js';

redactConversationLogs();

/**
 * The voice agent's worker (`npm run agent`, i.e. `start`; `dev` for development logs): it
 * registers with the LiveKit server under VOICE_AGENT_NAME, so it is sent only the rooms the
 * service dispatches it to, and runs each job (agent/job.ts) in a process of its own.
 */
let settings;
try {
  settings = loadAgentSettings();
} catch (error) {
  if (!(error instanceof AgentSettingsError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

const problems = localVoiceProblems(settings);
if (problems.length > 0) {
  process.stderr.write(
    `the local voice cannot run here: ${problems.join('; ')} (docs/reference/voice-agent.md, "Local voice")\n`,
  );
  process.exit(1);
}
// Said before anything else: with no key set, nothing of a call leaves this machine.
const models = describeModels(settings);
process.stdout.write(
  models.local
    ? `voice: local, no provider key needed: speech in by ${models.stt}, speech out by ${models.tts}, answers by the scripted dialog (no language model)\n`
    : `voice: speech in by ${models.stt}, speech out by ${models.tts}, answers by ${models.llm}\n`,
);

cli.runApp(
  new ServerOptions({
    // job.js beside the built main.js (npm run agent), job.ts beside main.ts run through tsx.
    agent: fileURLToPath(new URL(`./job${extname(fileURLToPath(import.meta.url))}`, import.meta.url)),
    agentName: settings.agentName,
    wsURL: settings.liveKit.url,
    apiKey: settings.liveKit.apiKey,
    apiSecret: settings.liveKit.apiSecret,
    host: settings.worker.httpHost,
    port: settings.worker.httpPort,
    logLevel: settings.worker.logLevel,
    numIdleProcesses: settings.worker.idleProcesses,
    ...workerLoad(settings.worker),
  }),
);
