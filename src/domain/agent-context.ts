import type { FlowProgress, SessionFlow } from './flow.js';
import { flowProgress } from './flow.js';
import type { KbSelection, KnowledgeBase } from './kyc-knowledge.js';
import { selectKnowledge } from './kyc-knowledge.js';
import type { RefreshPolicy } from './refresh-policy.js';
import { screenKey } from './screen-schema.js';
import type { ComponentHint, SessionRecord, ValidationFailure } from './session-record.js';
import { retryCounts } from './session-record.js';
import { buildSystemPrompt } from './system-prompt.js';
import { digestOf } from './digest.js';
import type { SdkConsent } from './sdk-config.js';

/** What every context is built from besides the session: shared, loaded once at start-up. */
export interface AgentContextSources {
  knowledgeBase: KnowledgeBase;
  refreshPolicy: RefreshPolicy;
  /** The tenant's consent notice (SDK config); absent, the context carries none. */
  consentNotice?: ((clientId: string | null) => SdkConsent) | undefined;
}

/** The context a voice agent fetches (docs/decisions/0006-the-voice-agents-context.md). Times are epoch milliseconds, as in the session. */
export interface AgentContext {
  session_id: string;
  current_screen: string | null;
  context: {
    screen: string | null;
    latest_event: Record<string, unknown> | null;
    last_validation_failure: ValidationFailure | null;
    component_hints: ComponentHint[];
    /** Validation failures per field (component_id) in this session: each field's retry count. */
    retry_counts: Record<string, number>;
    kyc_kb: KbSelection;
    screen_schema: Record<string, unknown> | null;
    voice_active: boolean;
    refresh_policy: RefreshPolicy;
    /** The flow the app registered and the user's place in it; null when none is registered. */
    flow: { flow_key: string; total_steps: number; progress: FlowProgress | null } | null;
    /** The notice the agent gives first in a call, and its version (docs/explanation/calls.md). */
    consent: SdkConsent | null;
  };
  system_prompt: string;
}

export function buildAgentContext(
  record: SessionRecord & { flow?: SessionFlow | null },
  voiceActive: boolean,
  sources: AgentContextSources,
): AgentContext {
  const { screen } = record;
  const flow = record.flow
    ? {
        flow_key: record.flow.flow_key,
        total_steps: record.flow.steps.length,
        progress: flowProgress(record.flow, screen),
      }
    : null;
  // Own keys only: a screen named `constructor` must not find Object.prototype's.
  const key = screen === null ? undefined : screenKey(screen);
  const schema = key !== undefined && Object.hasOwn(record.schemas, key) ? record.schemas[key] : undefined;
  return {
    session_id: record.session_id,
    current_screen: screen,
    context: {
      screen,
      latest_event: record.latest_event,
      last_validation_failure: record.last_validation_failure,
      component_hints: record.component_hints,
      retry_counts: retryCounts(record),
      kyc_kb: selectKnowledge(sources.knowledgeBase, screen),
      screen_schema: schema?.schema ?? null,
      voice_active: voiceActive,
      refresh_policy: sources.refreshPolicy,
      flow,
      consent: sources.consentNotice?.(record.client_id) ?? null,
    },
    system_prompt: buildSystemPrompt({
      knowledgeBase: sources.knowledgeBase,
      screen,
      failure: record.last_validation_failure,
      hints: record.component_hints,
      retryCounts: retryCounts(record),
      flow,
    }),
  };
}

/** A short name for what a context says: two fetches that read the same have the same version. */
export const contextVersion = (context: AgentContext): string =>
  digestOf(JSON.stringify(context.context), context.system_prompt).slice(0, 16);
