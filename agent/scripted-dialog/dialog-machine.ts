import { assign, emit, setup } from 'xstate';
import { scrubText } from '../../src/privacy/scrub.js';
import type { AgentContext } from '../context-source.js';
import type { Intent } from '../local-voice/intents.js';
import { intentOf } from '../local-voice/intents.js';
import { NOT_CAUGHT, NOT_UNDERSTOOD, documents, explanation, greeting, nextStep, person, thanks } from './answers.js';

/**
 * The conversation without a language model (docs/reference/voice-agent.md, "Local voice"): it greets the
 * user with their screen and step, answers the requests the recogniser's grammar knows from the
 * session's context, asks once to say again what it did not catch and says it did not understand
 * after a second miss in a row. Pure: the agent sends it the context and what the user said, and
 * speaks what it emits. Every sentence it emits has passed the service's masking of identity
 * values (src/privacy/scrub.ts), so nothing it says or the service stores can carry one.
 */
export interface DialogContext {
  agentContext: AgentContext | undefined;
  /** The last answer, for "repeat". */
  lastAnswer: string[];
  /** Requests answered, misses included: counts, never words. */
  turns: number;
}

export type DialogEvent =
  | { type: 'context'; context: AgentContext }
  | { type: 'start' }
  /** What the user said (recognised or typed). */
  | { type: 'heard'; text: string }
  /** The call ended. */
  | { type: 'stop' };

/** `say`: speak these sentences; `person.requested`: the user asked for a person (the agent asks the service for one). */
export type DialogEmitted = { type: 'say'; sentences: string[] } | { type: 'person.requested' };

/** The dialog actor's name in the inspector. */
export const DIALOG_ACTOR_ID = 'scripted-dialog';

/** The request in what was heard, as the machine's guards read it. */
const intentIn = (event: DialogEvent): Intent | undefined =>
  event.type === 'heard' ? intentOf(event.text) : undefined;

const masked = (sentences: string[]): string[] => sentences.map((sentence) => scrubText(sentence).text);

export const dialogMachine = setup({
  types: {
    context: {} as DialogContext,
    events: {} as DialogEvent,
    emitted: {} as DialogEmitted,
  },
  actions: {
    /** Says the sentences (masked) and keeps them for "repeat". */
    answer: assign(({ context }, params: { sentences: string[] }) => ({
      lastAnswer: masked(params.sentences),
      turns: context.turns + 1,
    })),
    speak: emit(({ context }) => ({ type: 'say' as const, sentences: context.lastAnswer })),
    repeat: emit(({ context }) => ({ type: 'say' as const, sentences: context.lastAnswer })),
    notCaught: emit({ type: 'say' as const, sentences: [NOT_CAUGHT] }),
    notUnderstood: emit({ type: 'say' as const, sentences: [NOT_UNDERSTOOD] }),
    personRequested: emit({ type: 'person.requested' as const }),
    keepContext: assign(({ event }) => (event.type === 'context' ? { agentContext: event.context } : {})),
  },
}).createMachine({
  id: 'scripted-dialog',
  context: { agentContext: undefined, lastAnswer: [], turns: 0 },
  initial: 'waiting',
  on: {
    context: { actions: 'keepContext' },
    stop: '.ended',
  },
  states: {
    waiting: {
      on: {
        start: {
          target: 'listening',
          actions: [
            { type: 'answer', params: ({ context }) => ({ sentences: greeting(context.agentContext) }) },
            'speak',
          ],
        },
      },
    },
    // Understood the last thing said (or nothing said yet).
    listening: {
      on: { heard: answers('unsure', 'notCaught') },
    },
    // Missed once: a second miss in a row says so and lists what can be asked.
    unsure: {
      on: { heard: answers('listening', 'notUnderstood') },
    },
    ended: { type: 'final' },
  },
});

/** The transitions of a heard sentence: one per request, then the miss, which goes to `missTarget`. */
function answers(missTarget: 'unsure' | 'listening', missAction: 'notCaught' | 'notUnderstood') {
  const reply = (intent: Intent, build: (context: DialogContext) => string[], extra: 'personRequested'[] = []) => ({
    guard: ({ event }: { event: DialogEvent }) => intentIn(event) === intent,
    target: 'listening' as const,
    actions: [
      { type: 'answer' as const, params: ({ context }: { context: DialogContext }) => ({ sentences: build(context) }) },
      'speak' as const,
      ...extra,
    ],
  });
  return [
    reply('explain', (c) => explanation(c.agentContext)),
    reply('document', (c) => documents(c.agentContext)),
    reply('next', (c) => nextStep(c.agentContext)),
    reply('person', () => person(), ['personRequested']),
    reply('greeting', (c) => greeting(c.agentContext)),
    reply('thanks', () => thanks()),
    {
      guard: ({ event }: { event: DialogEvent }) => intentIn(event) === 'repeat',
      target: 'listening' as const,
      actions: ['repeat' as const],
    },
    { target: missTarget, actions: [missAction] },
  ];
}
