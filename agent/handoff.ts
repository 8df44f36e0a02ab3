/**
 * The agent's side of a person taking over (docs/explanation/handoff.md): the user asks for a person (the
 * model's `request_human` tool, or the scripted dialog's "talk to a person"), the agent posts
 * `handoff_requested` to the service, and the call waits in the console's queue. When an operator
 * joins the room (an identity starting `operator-`, as the service mints them), the agent says a
 * colleague is joining and steps back: silent, or gone (AGENT_ON_OPERATOR). When nobody joins
 * within HANDOFF_TIMEOUT_SECONDS, it says so and offers that someone will call back.
 */
import { llm } from '@livekit/agents';
import { z } from 'zod';
import type { ServiceClient } from '../src/client/index.js';
import { HANDOFF_UNANSWERED } from '../src/domain/sdk-event.js';
import { OPERATOR_IDENTITY_PREFIX } from '../src/domain/voice-session.js';

/** An operator, by the identity the service mints their token with (src/use-cases/handoff.ts). */
export const isOperator = (identity: string): boolean => identity.startsWith(OPERATOR_IDENTITY_PREFIX);

export const HANDOFF_LINES = {
  requested: 'I have asked a colleague from our team to join this call. Please stay on the line.',
  joining: 'A colleague from our team is joining you now. I will let them take it from here.',
  timedOut:
    'No one from our team is free right now. Someone from our team will call you back, and I can keep helping with this screen meanwhile.',
  failed:
    'I could not reach our team just now. I can keep helping with this screen, or you can use the help section of the app.',
} as const;

export interface HandoffOptions {
  client: ServiceClient;
  sessionId: string;
  /** HANDOFF_TIMEOUT_SECONDS, in ms. */
  timeoutMs: number;
  /** The service's request timeout. */
  requestTimeoutMs: number;
  /** Speaks a line to the user; resolves once it has been played out. */
  say(text: string): Promise<void>;
  /** The agent steps back as it says an operator is joining (`said`: that line played out): silent, or leaving the room. */
  stepBack(said: Promise<void>): void;
  log(message: string, fields?: Record<string, unknown>): void;
  /** The injected timer, so the wait runs on a simulated clock in tests. */
  setTimer?: (run: () => void, ms: number) => { clear(): void };
}

const realTimer = (run: () => void, ms: number) => {
  const timer = setTimeout(run, ms);
  return { clear: () => clearTimeout(timer) };
};

export class Handoff {
  private waiting: { clear(): void } | undefined;
  private joined = false;

  constructor(private readonly options: HandoffOptions) {}

  /** Whether an operator has joined: the agent has stepped back and answers nothing more. */
  get steppedBack(): boolean {
    return this.joined;
  }

  /**
   * The user asked for a person: posted to the service (the call enters the queue), and the wait
   * for an operator begins. Answers whether the service took it. A second request while one
   * waits is the same request.
   */
  async request(reason: string): Promise<boolean> {
    if (this.joined) return true;
    if (this.waiting) return true;
    if (!(await this.post('handoff_requested', { reason: reason.slice(0, 200) }))) return false;
    const setTimer = this.options.setTimer ?? realTimer;
    this.waiting = setTimer(() => {
      this.waiting = undefined;
      if (this.joined) return;
      this.options.log('no operator joined in time', { timeout_ms: this.options.timeoutMs });
      // Told to the service first: the call back the user is promised is owed from then on (docs/explanation/handoff.md, "A call back").
      void this.post(HANDOFF_UNANSWERED, { waited_seconds: Math.round(this.options.timeoutMs / 1000) }).finally(() =>
        this.options.say(HANDOFF_LINES.timedOut),
      );
    }, this.options.timeoutMs);
    return true;
  }

  /** Posts one of the handoff's events to the service; whether it took it (a failure is logged, by status or error name). */
  private async post(
    event: 'handoff_requested' | typeof HANDOFF_UNANSWERED,
    properties: Record<string, unknown>,
  ): Promise<boolean> {
    const { client, sessionId } = this.options;
    try {
      const { response } = await client.POST('/v1/events', {
        body: { session_id: sessionId, event, properties },
        signal: AbortSignal.timeout(this.options.requestTimeoutMs),
      });
      if (response.ok) return true;
      this.options.log(`${event} not posted`, { status: response.status });
    } catch (error) {
      this.options.log(`${event} not posted`, { cause: error instanceof Error ? error.name : 'error' });
    }
    return false;
  }

  /** A participant joined the room: an operator takes over (once), whether or not one was asked for. */
  participantJoined(identity: string): void {
    if (!isOperator(identity) || this.joined) return;
    this.joined = true;
    this.waiting?.clear();
    this.waiting = undefined;
    this.options.log('operator joined: stepping back', { operator: identity });
    this.options.stepBack(this.options.say(HANDOFF_LINES.joining));
  }

  /** The model's way to ask for a person, when the user asks for one or cannot be helped. */
  tool() {
    return llm.tool({
      description:
        'Ask for a person from the support team to join this call: when the user asks to talk to a person, or you cannot help them. ' +
        'Tell the user what it answers.',
      parameters: z.object({ reason: z.string().describe('why, in a few words, without any identity number') }),
      execute: async ({ reason }) => ((await this.request(reason)) ? HANDOFF_LINES.requested : HANDOFF_LINES.failed),
    });
  }

  close(): void {
    this.waiting?.clear();
    this.waiting = undefined;
  }
}
