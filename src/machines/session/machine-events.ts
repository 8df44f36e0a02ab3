import type { AgentNotice } from '../../domain/agent-notice.js';
import type { ConsentDecision } from '../../domain/call-record.js';
import type { ActivityDraft, Trace } from '../../domain/activity.js';
import type { AgentContext, AgentContextSources } from '../../domain/agent-context.js';
import type { FlowProgress, SessionFlow } from '../../domain/flow.js';
import type { KnowledgeBase } from '../../domain/kyc-knowledge.js';
import type { PopupDecision } from '../../domain/popup.js';
import type { SdkConfigOverrides } from '../../domain/sdk-config.js';
import type { IngestChannel } from '../../domain/error-window.js';
import type { EventSizes, RedactedEvent } from '../../domain/event-redaction.js';
import type { HintMatcher } from '../../domain/session-schemas.js';
import type { TriggerDecision, TriggerSignals } from '../../domain/trigger-policy.js';
import type { TokenInput } from './media-contract.js';

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
      /** Redacted before it is sent: a session never holds a raw identity value. */
      event: RedactedEvent;
      /** From `hintMatcher`; a function, so no log, snapshot or inspection carries the raw hint. */
      matchHint?: HintMatcher | undefined;
      /** The event's JSON sizes, counted by the redaction pass; measured in the session when absent. */
      sizes?: EventSizes | undefined;
      /** How it arrived; absent means `POST /v1/events`. */
      channel?: IngestChannel | undefined;
      at: number;
      trace: Trace;
      reply: Reply<IngestResult>;
    }
  | ContextFetchCommand
  | TriggerEvaluateCommand
  | VoiceStartCommand
  | VoiceStopCommand
  | PopupEvaluateCommand
  | AssistantEvaluateCommand
  | FlowSetCommand
  | DropoffRegisterCommand
  | DropoffCancelCommand
  | ConsentRecordCommand
  | AgentCheckCommand;

/** The session was busy starting or stopping with too many commands already waiting: retry. */
export interface VoiceBusy {
  busy: true;
}

export interface VoiceStarted {
  session_id: string;
  room: string;
  token: string;
  /** What the token was minted for: a copy of a named start is answered with a token minted anew from it (src/use-cases/voice-call.ts). */
  minted_for: TokenInput;
  media_url: string;
  expires_in_sec: number;
  warnings: string[];
  resumed: boolean;
  assistant_invocation_id: string;
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
  /** A fresh id, used when this start begins an engagement (a resume keeps the one running). */
  invocation_id: string;
  reply: Reply<VoiceStarted | VoiceBusy>;
}

export interface VoiceStopCommand {
  type: 'voice.stop';
  at: number;
  trace: Trace;
  /** The tenant's min_trigger_interval_seconds starts again from the stop, as from a fired trigger. */
  sdk_overrides: SdkConfigOverrides;
  header_client_id: string | null;
  reply: Reply<VoiceStopped | VoiceBusy>;
}

export type VoiceCommand = VoiceStartCommand | VoiceStopCommand;

/** The voice agent's context fetch: answered with the context, recorded as `voice_agent_context_fetch`. */
export type ContextFetchCommand = {
  type: 'context.fetch';
  at: number;
  trace: Trace;
  /** The dispatch the fetching agent came by, when it says (agent/job.ts does); null when it does not. */
  dispatch_id: string | null;
  /** Shared by every session and passed by reference, so no session keeps a copy of the knowledge base. */
  sources: AgentContextSources;
  reply: Reply<AgentContext>;
};

/** docs/decisions/0005-trigger-policy.md: evaluate the trigger policy in the session, with its cooldown and suppressions. */
export type TriggerEvaluateCommand = {
  type: 'trigger.evaluate';
  signals: TriggerSignals;
  /** From the body; they fill the session's identity when it has none, as an event's would. */
  user_id: string | null;
  client_id: string | null;
  /** X-Client-ID: the tenant when neither the session nor the body names one. */
  header_client_id: string | null;
  /** The override file in force; config arrives on the command as time does, and the machine merges its tenant's. */
  sdk_overrides: SdkConfigOverrides;
  at: number;
  trace: Trace;
  reply: Reply<TriggerDecision>;
};

/** What to evaluate besides the trigger signals: popups need the flag and the knowledge base. */
export interface PopupInputs {
  /** Feature flag `ui.dynamic_popups`. */
  popups_enabled: boolean;
  /** Shared and passed by reference, as the context fetch's sources are. */
  knowledge_base: KnowledgeBase;
}

/** POST /v1/assistant/popup/evaluate: the signals are the trigger's (the screen and idling matter). */
export type PopupEvaluateCommand = Omit<TriggerEvaluateCommand, 'type' | 'reply'> &
  PopupInputs & { type: 'popup.evaluate'; reply: Reply<PopupDecision> };

export interface SurfacesDecision {
  trigger: TriggerDecision;
  popup: PopupDecision;
}

/** POST /v1/assistant/evaluate and the WebSocket after a control_state: trigger first, then the popup. */
export type AssistantEvaluateCommand = Omit<TriggerEvaluateCommand, 'type' | 'reply'> &
  PopupInputs & { type: 'assistant.evaluate'; reply: Reply<SurfacesDecision> };

export interface FlowSetResult {
  flow: SessionFlow | null;
  business_step: string | null;
  validation_intent: string | null;
  progress: FlowProgress | null;
}

/** POST /v1/flows/set; an empty step_sequence forgets the flow (clearFlow). */
export interface FlowSetCommand {
  type: 'flow.set';
  flow_key: string;
  step_sequence: string[] | null;
  current_step: string | null;
  user_id: string | null;
  client_id: string | null;
  knowledge_base: KnowledgeBase;
  at: number;
  trace: Trace;
  reply: Reply<FlowSetResult>;
}

/** POST /api/dropoff/register: the route has already reduced the phone number to these facts. */
export interface DropoffRegisterCommand {
  type: 'dropoff.register';
  user_id: string | null;
  has_dialable_phone: boolean;
  phone_last4: string | null;
  reason: string | null;
  at: number;
  trace: Trace;
  reply: Reply<{ registered: true; has_dialable_phone: boolean }>;
}

export interface DropoffCancelCommand {
  type: 'dropoff.cancel';
  at: number;
  trace: Trace;
  reply: Reply<{ cancelled: boolean }>;
}

/** POST /v1/assistant/consent: an entry of the session's consent record (docs/explanation/calls.md). */
export interface ConsentRecordCommand {
  type: 'consent.record';
  decision: ConsentDecision;
  notice_version: string;
  language: string;
  at: number;
  trace: Trace;
  reply: Reply<ConsentRecorded>;
}

/**
 * The media server said a call's agent left, or its room finished (POST /v1/livekit/webhook): the
 * agent watch checks the room now, not at its next VOICE_ROOM_CHECK_SECONDS (docs/explanation/voice.md).
 * Not the user's doing: it touches nothing the session keeps.
 */
export interface AgentCheckCommand {
  type: 'agent.check';
  at: number;
  reply: Reply<{ checking: boolean }>;
}

export interface ConsentRecorded {
  session_id: string;
  decision: ConsentDecision;
  notice_version: string;
  language: string;
  recorded_at_ms: number;
}

/** What the session decided to tell its client without being asked (pushed on the WebSocket). */
export type AssistantCommand =
  | {
      command: 'suggest_start_voice_agent';
      session_id: string;
      payload: { reason: string; intervention_mode: 'offer' };
    }
  | { command: 'show_popup'; session_id: string; payload: { message: string; delay_ms: number; reason: string } };

export type SessionEmitted =
  | { type: 'activity'; draft: ActivityDraft }
  /** For the voice agent in `room`, once what caused it is committed (agent-notices.ts). */
  | { type: 'agent.notice'; room: string; notice: AgentNotice }
  | { type: 'session.expired'; sessionId: string }
  /** The call's agent joined; `joinMs` from its dispatch when its first context fetch said when (agent-watch.ts). */
  | { type: 'agent.joined'; joinMs: number | null }
  | { type: 'command'; command: AssistantCommand };
