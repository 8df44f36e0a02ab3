import type { Schemas } from '../../src/client/index.js';
import { createServiceClient } from '../../src/client/index.js';
import { startService } from '../../test/support/service-process.js';
import type { LiveKitServer } from './livekit-server.js';

export const SERVICE_API_KEY = 'media-test-key';
export const VOICE_AGENT_NAME = 'kyc-voice-agent-test';

export interface ActivityItem {
  id: string;
  kind: string;
  timestamp: string;
  session_id: string;
  payload: Record<string, unknown>;
}

export type MediaService = Awaited<ReturnType<typeof startMediaService>>;

/**
 * The real service (its entry point in a child process) pointed at a real LiveKit server, with
 * an API key, so the agent has to send one, and with the given settings on top (short refresh
 * and silence timers for the fault tests).
 */
export async function startMediaService(liveKit: LiveKitServer, env: Record<string, string> = {}) {
  const process = startService({ ...liveKit.env(), API_KEY: SERVICE_API_KEY, VOICE_AGENT_NAME, ...env });
  const url = await process.url;
  const client = createServiceClient({ baseUrl: url, apiKey: SERVICE_API_KEY });

  async function startVoice(sessionId: string, screen = 'pan_entry'): Promise<Schemas['AssistantStartOut']> {
    const { data, error, response } = await client.POST('/v1/assistant/session/start', {
      body: { session_id: sessionId, user_id: `user-${sessionId}`, screen },
    });
    if (!data) throw new Error(`start ${sessionId}: ${response.status} ${JSON.stringify(error)}`);
    return data;
  }

  async function stopVoice(sessionId: string) {
    const { data, error, response } = await client.POST('/v1/assistant/session/stop', {
      body: { session_id: sessionId },
    });
    if (!data) throw new Error(`stop ${sessionId}: ${response.status} ${JSON.stringify(error)}`);
    return data;
  }

  async function postEvent(body: Schemas['EventIn']) {
    const { data, error, response } = await client.POST('/v1/events', { body });
    if (!data) throw new Error(`event ${body.event}: ${response.status} ${JSON.stringify(error)}`);
    return data;
  }

  async function activity(sessionId: string, kind?: string): Promise<ActivityItem[]> {
    const query = new URLSearchParams({ session_id: sessionId, limit: '1000', ...(kind ? { kind } : {}) });
    const response = await fetch(`${url}/api/activity?${query.toString()}`, {
      headers: { 'x-api-key': SERVICE_API_KEY },
    });
    if (!response.ok) throw new Error(`activity: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { items: ActivityItem[] }).items;
  }

  async function session(
    sessionId: string,
  ): Promise<{ active: boolean; latest_event: Record<string, unknown> | null }> {
    const response = await fetch(`${url}/api/sessions/${encodeURIComponent(sessionId)}`, {
      headers: { 'x-api-key': SERVICE_API_KEY },
    });
    if (!response.ok) throw new Error(`session: ${response.status} ${await response.text()}`);
    return (await response.json()) as { active: boolean; latest_event: Record<string, unknown> | null };
  }

  /**
   * The voice_conversation_turn events as the service recorded them, read from the session's
   * activity every 50 ms until stopped, keyed by activity id, each as `{ event, properties: { role,
   * channel, text } }` (an event item's payload carries a turn's fields at its top level). The
   * activity log keeps every event: sampling the session's latest event, as this did before, missed a
   * user's turn whose answer followed it within one poll (in a fresh-clone CI run, a spoken request
   * the agent had answered was missing from the turns).
   */
  function watchTurns(sessionId: string) {
    const turns = new Map<string, { event: string; properties: Record<string, unknown> }>();
    let watching = true;
    const read = async () => {
      for (const item of await activity(sessionId, 'event').catch(() => [])) {
        const { event, role, channel, text } = item.payload;
        if (event === 'voice_conversation_turn') turns.set(item.id, { event, properties: { role, channel, text } });
      }
    };
    const loop = (async () => {
      while (watching) {
        await read();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    return {
      turns,
      async stop() {
        watching = false;
        await loop;
        // What was recorded up to the stop, the last poll's gap included.
        await read();
      },
    };
  }

  return {
    url,
    apiKey: SERVICE_API_KEY,
    agentName: VOICE_AGENT_NAME,
    client,
    startVoice,
    stopVoice,
    postEvent,
    activity,
    session,
    watchTurns,
    logs: process.logs,
    async stop() {
      if (process.child.exitCode === null) process.child.kill('SIGTERM');
      await new Promise<void>((resolve) =>
        process.child.exitCode !== null ? resolve() : process.child.once('exit', () => resolve()),
      );
    },
  };
}
