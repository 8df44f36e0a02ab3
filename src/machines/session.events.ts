import type { ActivityDraft, Trace } from '../domain/activity.js';
import type { AgentContext, AgentContextSources } from '../domain/agent-context.js';
import type { SdkEvent } from '../domain/sdk-event.js';

/**
 * The session actor's catalogue of commands and emissions. Commands that HTTP waits on carry
 * a `reply` callback, resolved by the machine in an action once the state holds the change:
 * the one ask pattern every route uses.
 */
export type Reply<T> = (result: T) => void;

export interface IngestResult {
  ingested_at_ms: number;
  warnings: string[];
}

export type SessionCommand =
  | {
      type: 'session.ingest';
      event: SdkEvent;
      at: number;
      trace: Trace;
      reply: Reply<IngestResult>;
    }
  | ContextFetchCommand
  | VoiceStartCommand
  | VoiceStopCommand;

/** The session was busy starting or stopping with too many commands already waiting: retry. */
export interface VoiceBusy {
  busy: true;
}

export interface VoiceStarted {
  session_id: string;
  room: string;
  token: string;
  media_url: string;
  expires_in_sec: number;
  warnings: string[];
  resumed: boolean;
}

export interface VoiceStopped {
  session_id: string;
  active: false;
  was_active: boolean;
  warnings: string[];
}

export interface VoiceStartCommand {
  type: 'voice.start';
  at: number;
  trace: Trace;
  user_id: string | null;
  screen: string | null;
  reply: Reply<VoiceStarted | VoiceBusy>;
}

export interface VoiceStopCommand {
  type: 'voice.stop';
  at: number;
  trace: Trace;
  reply: Reply<VoiceStopped | VoiceBusy>;
}

export type VoiceCommand = VoiceStartCommand | VoiceStopCommand;

/** The voice agent's context fetch: answered with the context, recorded as `voice_agent_context_fetch`. */
export type ContextFetchCommand = {
  type: 'context.fetch';
  at: number;
  trace: Trace;
  /** Shared by every session and passed by reference, so no session keeps a copy of the knowledge base. */
  sources: AgentContextSources;
  reply: Reply<AgentContext>;
};

export type SessionEmitted = { type: 'activity'; draft: ActivityDraft } | { type: 'session.expired'; sessionId: string };
