/** The voice agent's side of a call: what it knows, how often it refreshes that, and when a silent call ends. */
import { z } from 'zod';
import type { RefreshPolicy } from '../domain/refresh-policy.js';
import { MAX_TIMER_SECONDS } from '../domain/timer-limit.js';
import {
  DEFAULT_VOICE_AGENT_DISPATCH_ATTEMPTS,
  DEFAULT_VOICE_AGENT_JOIN_SECONDS,
  DEFAULT_VOICE_ROOM_CHECK_SECONDS,
  DEFAULT_VOICE_SILENCE_TIMEOUT_SECONDS,
} from '../domain/voice-session.js';
import { invalidConfiguration } from './config-error.js';
import { booleanFlag, nonNegativeInt, optionalText, positiveInt } from './env-values.js';

// The voice agent's context: docs/decisions/0006-the-voice-agents-context.md.
export const voiceEnv = z.object({
  KYC_KB_FILE: optionalText,
  VOICE_CONTEXT_REFRESH_SECONDS: positiveInt(60).pipe(z.number().max(MAX_TIMER_SECONDS)),
  VOICE_CONTEXT_REFRESH_ON_USER_TURN: booleanFlag(true),
  VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: nonNegativeInt(5).pipe(z.number().max(MAX_TIMER_SECONDS)),
  VOICE_SILENCE_TIMEOUT_SECONDS: positiveInt(DEFAULT_VOICE_SILENCE_TIMEOUT_SECONDS).pipe(
    z.number().max(MAX_TIMER_SECONDS),
  ),
  // An agent joins or the call ends: docs/decisions/0032-an-agent-joins-or-the-call-ends.md.
  VOICE_AGENT_JOIN_SECONDS: positiveInt(DEFAULT_VOICE_AGENT_JOIN_SECONDS).pipe(z.number().max(MAX_TIMER_SECONDS)),
  VOICE_AGENT_DISPATCH_ATTEMPTS: positiveInt(DEFAULT_VOICE_AGENT_DISPATCH_ATTEMPTS).pipe(z.number().max(10)),
  VOICE_ROOM_CHECK_SECONDS: positiveInt(DEFAULT_VOICE_ROOM_CHECK_SECONDS).pipe(z.number().max(MAX_TIMER_SECONDS)),
});

export interface VoiceSection {
  /** KYC_KB_FILE: JSON knowledge base for the voice agent; unset = the bundled one. */
  knowledgeBaseFile: string | undefined;
  contextRefresh: RefreshPolicy;
  /** VOICE_SILENCE_TIMEOUT_SECONDS: an active voice session not heard from this long ends on its own. */
  silenceTimeoutSeconds: number;
  /** VOICE_AGENT_JOIN_SECONDS: how long a dispatched agent has to join before the call dispatches again. */
  agentJoinSeconds: number;
  /** VOICE_AGENT_DISPATCH_ATTEMPTS: dispatches per call, the first included, before it ends with `no_agent`. */
  agentDispatchAttempts: number;
  /** VOICE_ROOM_CHECK_SECONDS: how often a call with its agent checks its room and agent are still there. */
  roomCheckSeconds: number;
}

export function voiceSection(e: z.infer<typeof voiceEnv>): VoiceSection {
  if (e.VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS > e.VOICE_CONTEXT_REFRESH_SECONDS) {
    throw invalidConfiguration(
      'VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: must not exceed VOICE_CONTEXT_REFRESH_SECONDS',
    );
  }
  // A running call's agent fetches its context at least every refresh interval: a timeout within
  // two of them would end calls that are only between refreshes.
  if (e.VOICE_SILENCE_TIMEOUT_SECONDS < 2 * e.VOICE_CONTEXT_REFRESH_SECONDS) {
    throw invalidConfiguration(
      `VOICE_SILENCE_TIMEOUT_SECONDS (${e.VOICE_SILENCE_TIMEOUT_SECONDS}) must be at least twice VOICE_CONTEXT_REFRESH_SECONDS (${e.VOICE_CONTEXT_REFRESH_SECONDS}): a running call's agent is only heard from once per refresh`,
    );
  }
  return {
    knowledgeBaseFile: e.KYC_KB_FILE,
    contextRefresh: {
      interval_seconds: e.VOICE_CONTEXT_REFRESH_SECONDS,
      on_user_turn: e.VOICE_CONTEXT_REFRESH_ON_USER_TURN,
      min_interval_seconds: e.VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS,
    },
    silenceTimeoutSeconds: e.VOICE_SILENCE_TIMEOUT_SECONDS,
    agentJoinSeconds: e.VOICE_AGENT_JOIN_SECONDS,
    agentDispatchAttempts: e.VOICE_AGENT_DISPATCH_ATTEMPTS,
    roomCheckSeconds: e.VOICE_ROOM_CHECK_SECONDS,
  };
}
