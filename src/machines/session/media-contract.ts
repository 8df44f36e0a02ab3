/**
 * The voice lifecycle's contract with the media world: the inputs and outputs of the media actors
 * provided at bootstrap, how many voice commands may wait, and what counts as voice running.
 */

/** Inputs and outputs of the media actors provided at bootstrap. */
export interface RoomInput {
  room: string;
  sessionId: string;
}
export interface FindAgentInput {
  room: string;
  preferredId: string | null;
}
/** A dispatch to replace: `staleId` (when known) is deleted, then the agent dispatched anew. */
export interface ReplaceDispatchInput extends RoomInput {
  staleId: string | null;
}
export interface TokenInput {
  room: string;
  identity: string;
  sessionId: string;
  dispatchAgent: boolean;
}
export interface IssuedToken {
  token: string;
  url: string;
  expires_in_sec: number;
}

/**
 * Voice commands that may wait behind the one in progress. Each waiting start can make three
 * media calls, so this bounds both memory and how long a request can wait (see system.ts).
 */
export const MAX_WAITING_VOICE_COMMANDS = 2;

/** Whether a session state value has voice running (starting and stopping count: media is in play). */
export function isVoiceActive(value: unknown): boolean {
  const voice = (value as { voice?: unknown } | null)?.voice;
  return voice !== undefined && voice !== 'inactive';
}
