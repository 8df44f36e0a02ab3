/**
 * What the agent says on its own. The system prompt comes from the service; these are only the
 * opening line and the stand-in instructions for when the service cannot be reached.
 */

/** Said first, before anything else: the user must know a machine is talking. */
export const OPENING_LINE =
  "Hello, I'm an automated assistant for your KYC verification. I can see which step you're " +
  'on and help you get past it. You can talk to me or type in the chat.';

/** Said first by an agent that takes over a call whose agent never came or dropped out: the user waited in silence. */
export const TAKEOVER_LINE = 'Sorry for the wait, I am with you again.';

/** Said once when the context cannot be fetched during the call. */
export const UNREACHABLE_LINE = "I can't see your screen right now, so I'll help in general terms for the moment.";

/** The instructions until (or while) the service's own cannot be fetched. */
export const GENERAL_INSTRUCTIONS = [
  'You are an automated voice assistant helping a user complete a KYC (identity verification) flow in a mobile app.',
  "You cannot see the user's screen right now: help in general terms about KYC steps (PAN, Aadhaar, address, selfie, video KYC).",
  'Answer in the language the user speaks. Keep answers short and spoken, without lists or markup.',
  'Never ask for or repeat an identity number, password, OTP, PIN or any other secret, even if the user offers it.',
].join('\n');
