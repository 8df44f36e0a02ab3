/**
 * The agent acts on the user's app (docs/reference/voice-agent.md, "Acting on the app"): it highlights a
 * field, opens a screen or shows a hint, by LiveKit RPC to the user's participant in the room.
 * The app registers the methods; the console's voice demo does, so they can be seen. Each action
 * is recorded with the service as an `agent_action` event, with what came of it. A hint's text
 * passes the service's masking before it leaves.
 */
import { llm } from '@livekit/agents';
import { z } from 'zod';
import type { ServiceClient } from '../src/client/index.js';
import { scrubText } from '../src/privacy/scrub.js';

/** The RPC methods an app registers, and what each is sent (JSON). */
export const APP_METHODS = {
  highlight_field: 'kyc.highlight_field',
  open_screen: 'kyc.open_screen',
  show_hint: 'kyc.show_hint',
} as const;

export type AppAction = keyof typeof APP_METHODS;

/** What came of an action: the app did it, answered an error, or there was no app in the room to ask. */
export type ActionOutcome = 'done' | 'failed' | 'no_app';

/** The longest hint sent: a sentence or two, as an app's hint line shows one. */
const MAX_HINT_CHARS = 200;
/** What the model is told when the app did not act, so it says it in words instead. */
const NOT_DONE: Record<Exclude<ActionOutcome, 'done'>, string> = {
  no_app: 'The app is not in the call: describe it in words instead.',
  failed: 'The app could not do it: describe it in words instead.',
};
/** How long the app has to answer; an app that does not is `failed`. */
const RPC_TIMEOUT_MS = 5_000;

export interface AppActionsOptions {
  client: ServiceClient;
  sessionId: string;
  requestTimeoutMs: number;
  /** The user's app in the room: the participant asked; none when nobody is there. */
  app(): string | undefined;
  /** The LiveKit RPC to a participant (the room's `performRpc`). */
  rpc(call: { destinationIdentity: string; method: string; payload: string; responseTimeout: number }): Promise<string>;
  log(message: string, fields?: Record<string, unknown>): void;
}

export class AppActions {
  constructor(private readonly options: AppActionsOptions) {}

  /** Asks the app to act and records it; answers what came of it. */
  async perform(action: AppAction, target: string): Promise<ActionOutcome> {
    const value = action === 'show_hint' ? scrubText(target.slice(0, MAX_HINT_CHARS)).text : target.slice(0, 256);
    const payload = JSON.stringify(
      action === 'show_hint' ? { text: value } : action === 'open_screen' ? { screen: value } : { component_id: value },
    );
    const app = this.options.app();
    let outcome: ActionOutcome = 'no_app';
    if (app !== undefined) {
      try {
        await this.options.rpc({
          destinationIdentity: app,
          method: APP_METHODS[action],
          payload,
          responseTimeout: RPC_TIMEOUT_MS,
        });
        outcome = 'done';
      } catch (error) {
        outcome = 'failed';
        this.options.log('the app did not do what it was asked', {
          action,
          cause: error instanceof Error ? error.message.slice(0, 100) : 'error',
        });
      }
    }
    await this.record(action, value, outcome);
    return outcome;
  }

  /** The model's tools: one per action, each telling the model what came of it. */
  tools() {
    const said = (outcome: ActionOutcome, done: string) => (outcome === 'done' ? done : NOT_DONE[outcome]);
    return {
      highlight_field: llm.tool({
        description:
          'Highlight a field on the screen the user is on, by its component_id from the context, when you talk about it.',
        parameters: z.object({
          component_id: z.string().describe('the component_id of the field, as the context names it'),
        }),
        execute: async ({ component_id }) =>
          said(await this.perform('highlight_field', component_id), 'The field is highlighted in the app.'),
      }),
      open_screen: llm.tool({
        description:
          'Open a screen of the KYC flow in the app, by its screen id from the context, when the user needs to go back or on.',
        parameters: z.object({ screen: z.string().describe('the screen id, as the context names it') }),
        execute: async ({ screen }) => said(await this.perform('open_screen', screen), 'The app opened the screen.'),
      }),
      show_hint: llm.tool({
        description:
          'Show a short written hint in the app, under the field the user is on. Never put an identity number in it.',
        parameters: z.object({ text: z.string().describe('one short sentence') }),
        execute: async ({ text }) => said(await this.perform('show_hint', text), 'The hint is shown in the app.'),
      }),
    };
  }

  private async record(action: AppAction, target: string, outcome: ActionOutcome): Promise<void> {
    try {
      const { response } = await this.options.client.POST('/v1/events', {
        body: { session_id: this.options.sessionId, event: 'agent_action', properties: { action, target, outcome } },
        signal: AbortSignal.timeout(this.options.requestTimeoutMs),
      });
      if (!response.ok) this.options.log('agent action not recorded', { status: response.status });
    } catch (error) {
      this.options.log('agent action not recorded', { cause: error instanceof Error ? error.name : 'error' });
    }
  }
}
