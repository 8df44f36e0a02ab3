import type { ServiceClient } from '../src/client/index.js';
import { holdsDigits, withoutDigits } from './split-values.js';
import { scrubText } from '../src/privacy/scrub.js';

export type TurnRole = 'user' | 'agent';
/** How the turn reached the room: spoken, or typed in the room's chat. */
export type TurnChannel = 'voice' | 'chat';

export interface TurnReporterOptions {
  client: ServiceClient;
  sessionId: string;
  timeoutMs: number;
  log(message: string, fields?: Record<string, unknown>): void;
}

const ATTEMPTS = 3;

/**
 * Posts each turn to the service as a `voice_conversation_turn` event. The text goes to the
 * service, which masks identity values before it stores or shows anything; the agent logs only
 * the turn's role, channel and length, never its words.
 */
export class TurnReporter {
  private index = 0;
  private queue: Promise<void> = Promise.resolve();
  /** Whether the user's last turn said a digit: the agent's answer to it may echo one. */
  private userSaidDigits = false;

  constructor(private readonly options: TurnReporterOptions) {}

  /** Turns are posted one after another, so the service records them in the order they were spoken. */
  report(role: TurnRole, channel: TurnChannel, text: string): Promise<void> {
    const turn = (this.index += 1);
    // A turn is posted before the next is said, so a value said in pieces over any number of
    // turns cannot be judged whole here: every digit a user says goes with its digits hidden, and
    // so does the agent's answer to it, which may echo them (split-values.ts). Other text is masked
    // by the rule before it leaves the agent, as the service would mask it.
    let sent: string;
    if (role === 'user') {
      this.userSaidDigits = holdsDigits(text);
      sent = this.userSaidDigits ? withoutDigits(text) : scrubText(text).text;
    } else sent = this.userSaidDigits && holdsDigits(text) ? withoutDigits(text) : scrubText(text).text;
    this.queue = this.queue.then(() => this.post(turn, role, channel, sent));
    return this.queue;
  }

  /** Resolves when every turn reported so far was posted (or given up on). */
  flush(): Promise<void> {
    return this.queue;
  }

  private async post(turn: number, role: TurnRole, channel: TurnChannel, text: string): Promise<void> {
    const body = {
      session_id: this.options.sessionId,
      event: 'voice_conversation_turn',
      properties: { role, channel, turn_index: turn, text, text_chars: text.length },
    };
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      try {
        const { response } = await this.options.client.POST('/v1/events', {
          body,
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
        if (response.ok) return;
        // A refusal (4xx) will not change on a retry.
        if (response.status < 500 && response.status !== 429) {
          this.options.log('turn refused by the service', { turn, role, status: response.status });
          return;
        }
        this.options.log('turn not recorded', { turn, role, status: response.status, attempt });
      } catch (error) {
        this.options.log('turn not recorded', {
          turn,
          role,
          cause: error instanceof Error ? error.name : 'error',
          attempt,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
    }
  }
}
