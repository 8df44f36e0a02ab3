import type { llm } from '@livekit/agents';
import { voice } from '@livekit/agents';
import type { Actor, InspectionEvent, Observer } from 'xstate';
import { createActor } from 'xstate';
import type { ContextSource } from '../context-source.js';
import type { DialogEmitted } from './dialog-machine.js';
import { DIALOG_ACTOR_ID, dialogMachine } from './dialog-machine.js';
import type { Intent } from '../local-voice/intents.js';
import { intentOf } from '../local-voice/intents.js';

export interface ScriptedAssistantOptions {
  source: ContextSource;
  /** A user turn, spoken or typed, as heard: the caller reports it to the service. */
  onUserTurn(text: string, channel: 'voice' | 'chat'): void;
  /** The user asked for a person. */
  onPersonRequested(): void;
  /** What a turn asked for (a request's name, never the words), for the log. */
  onRequest?(intent: Intent | undefined): void;
  /** The observer of the dialog's actor, when inspection is on. */
  inspect?: Observer<InspectionEvent>;
}

/**
 * The assistant when no language model is set (LLM_PROVIDER=none): each user turn goes to the
 * scripted dialog (dialog-machine.ts) and what it emits is spoken. With no language model the
 * agents framework does not commit the user's turn itself, so the turn is reported from here;
 * what is spoken is committed (and reported) as any answer is.
 */
export class ScriptedAssistant extends voice.Agent {
  readonly dialog: Actor<typeof dialogMachine>;

  constructor(private readonly options: ScriptedAssistantOptions) {
    // The framework wants instructions; no model reads them.
    super({ instructions: 'Scripted KYC dialog (no language model).' });
    this.dialog = createActor(dialogMachine, {
      id: DIALOG_ACTOR_ID,
      ...(options.inspect ? { inspect: options.inspect } : {}),
    });
    this.dialog.on('say', (event: Extract<DialogEmitted, { type: 'say' }>) => {
      if (event.sentences.length > 0) this.session.say(event.sentences.join(' '));
    });
    this.dialog.on('person.requested', () => options.onPersonRequested());
    this.dialog.start();
  }

  /** Greets the user with their screen and step: call once the context was fetched (or failed) and the session started. */
  greet(): void {
    this.sendContext();
    this.dialog.send({ type: 'start' });
  }

  /**
   * The user spoke and the recogniser heard no request of its grammar: a miss. The framework drops
   * an empty transcript, so the recogniser reports it here.
   */
  hearNothing(): void {
    this.options.onRequest?.(undefined);
    this.dialog.send({ type: 'heard', text: '' });
  }

  /** A typed turn (the room's chat). */
  async hearTyped(text: string): Promise<void> {
    this.options.onUserTurn(text, 'chat');
    await this.answer(text);
  }

  override async onUserTurnCompleted(_chatCtx: llm.ChatContext, newMessage: llm.ChatMessage): Promise<void> {
    const text = newMessage.textContent ?? '';
    if (text.trim() !== '') this.options.onUserTurn(text, 'voice');
    await this.answer(text);
  }

  private async answer(text: string): Promise<void> {
    await this.options.source.beforeReply();
    this.sendContext();
    this.options.onRequest?.(intentOf(text));
    this.dialog.send({ type: 'heard', text });
  }

  private sendContext(): void {
    const context = this.options.source.current;
    if (context) this.dialog.send({ type: 'context', context });
  }

  override async onExit(): Promise<void> {
    this.dialog.send({ type: 'stop' });
    this.dialog.stop();
  }
}
