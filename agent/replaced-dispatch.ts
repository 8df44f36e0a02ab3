import { AgentDispatchClient } from 'livekit-server-sdk';

/**
 * Whether this job's dispatch has been taken back: the room no longer holds it.
 *
 * The media server does not count agents against a room's participant limit
 * (docs/decisions/0009-voice-sessions-degrade-never-fail.md), so it keeps no second agent out. A
 * dispatch the service deletes to replace it ends its running job (the server does that), but a
 * media server that restarted forgets every dispatch: a job from before it that reconnects lands
 * in the room the service made anew for the user's next call, beside that call's own agent, and
 * nothing on the server's side ends it. So a job asks when it joins, after each reconnect and
 * whenever another agent joins, and the one whose dispatch the room does not hold leaves: the
 * newest stays.
 */
export type DispatchReplaced = () => Promise<boolean>;

export interface ReplacedDispatchOptions {
  liveKit: { url: string; apiKey: string; apiSecret: string };
  room: string;
  /** The job's dispatch; empty when the framework gave none (then nothing is asked). */
  dispatchId: string;
  log: (message: string, fields?: Record<string, unknown>) => void;
}

export function replacedDispatch({ liveKit, room, dispatchId, log }: ReplacedDispatchOptions): DispatchReplaced {
  const dispatches = new AgentDispatchClient(liveKit.url, liveKit.apiKey, liveKit.apiSecret);
  return async () => {
    if (!dispatchId) return false;
    try {
      const held = await dispatches.listDispatch(room);
      return !held.some((dispatch) => dispatch.id === dispatchId);
    } catch (error) {
      // Unanswered, the agent stays: leaving on a check that failed could leave the call with no
      // agent at all.
      log('could not list the room dispatches: staying', {
        cause: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      return false;
    }
  };
}
