import type { AgentContext } from '../context-source.js';
import { HANDOFF_LINES } from '../handoff.js';

/**
 * What the scripted dialog says, made from the session's context alone: the screen and step the
 * service maps it to, the last validation failure it holds, and the knowledge base's section for
 * the step (docs/reference/voice-agent.md, "Local voice"). Pure functions of the context; the sentences are
 * masked by the caller (dialog-machine.ts) before anything is spoken or stored.
 */

type Kb = AgentContext['context']['kyc_kb'];
type Failure = NonNullable<AgentContext['context']['last_validation_failure']>;
type KbFailure = NonNullable<Kb['step']>['failures'][string];

/** Said first, before anything else: the user must know a machine is talking. */
export const MACHINE_NOTICE = "Hello, I'm an automated assistant for your KYC verification.";
export const WHAT_YOU_CAN_ASK =
  'You can ask me what is wrong, which document you need, what to do next, or to talk to a person.';
export const NOT_CAUGHT = "Sorry, I didn't catch that. Could you say it again?";
export const NOT_UNDERSTOOD = `I did not understand. ${WHAT_YOU_CAN_ASK}`;
export const NO_CONTEXT = "I can't see your screen right now, so I can only help in general terms.";

/**
 * The knowledge base speaks to the assistant ("Ask the user to check the number"); the user hears
 * it spoken to them ("Please check the number").
 */
export function toUser(sentence: string): string {
  return (
    sentence
      .replace(/^Ask the user to /i, 'Please ')
      .replace(/^Suggest /i, 'Try ')
      .replace(/^Explain (the [^:]+):/i, (_all, what: string) => `${what[0]!.toUpperCase()}${what.slice(1)} is:`)
      .replace(/\bthe user has\b/gi, 'you have')
      .replace(/\bthe user does\b/gi, 'you do')
      .replace(
        /\bthe user (can|must|may|should|will|is)\b/gi,
        (_all, verb: string) => `you ${verb === 'is' ? 'are' : verb}`,
      )
      // "The user enters ..." → "you enter ...".
      .replace(/\bthe user ([a-z]+)s\b/gi, 'you $1')
      .replace(/\bthe user's\b/gi, 'your')
      .replace(/\bthe user\b/gi, 'you')
      .replace(/\btheir\b/gi, 'your')
      .replace(/\bthey\b/gi, 'you')
      .replace(/^you\b/, 'You')
  );
}

/** The sentences of a text, each ending with its full stop. */
function sentences(text: string): string[] {
  return (text.match(/[^.!?]+[.!?]*/g) ?? []).map((s) => s.trim()).filter(Boolean);
}

/** The failure code of the last validation failure, as the knowledge base keys it. */
function failureCode(failure: Failure): string | undefined {
  return [failure.failure_reason_code, ...failure.errors]
    .map((code) => code?.trim().toLowerCase())
    .find((code) => code !== undefined && code !== '');
}

/** What the knowledge base says of a failure: the step's own entry first, then the codes any step may report. */
function failureGuidance(kb: Kb, failure: Failure): KbFailure | undefined {
  const code = failureCode(failure);
  if (code === undefined) return undefined;
  const own = kb.step?.failures;
  if (own && Object.hasOwn(own, code)) return own[code];
  if (Object.hasOwn(kb.general.common_failures, code)) return kb.general.common_failures[code];
  return undefined;
}

/** The failure the user is stuck on: the last one, when it happened on the screen they are on. */
function heldFailure(context: AgentContext): Failure | undefined {
  const failure = context.context.last_validation_failure;
  if (!failure) return undefined;
  if (failure.screen !== null && context.context.screen !== null && failure.screen !== context.context.screen)
    return undefined;
  return failure;
}

function stepTitle(context: AgentContext): string | undefined {
  return context.context.kyc_kb.step?.title;
}

/** The greeting: who is talking, where the user is, and what they can ask. */
export function greeting(context: AgentContext | undefined): string[] {
  if (!context) return [MACHINE_NOTICE, NO_CONTEXT, WHAT_YOU_CAN_ASK];
  const title = stepTitle(context);
  const progress = context.context.flow?.progress;
  const where = title
    ? `You are on the ${title} screen${progress ? `, step ${progress.position} of ${progress.total}` : ''}.`
    : context.context.screen
      ? `I can see you are on the ${context.context.screen.replace(/[_-]+/g, ' ')} screen.`
      : "I can't tell which screen you are on yet.";
  const failure = heldFailure(context);
  const guidance = failure ? failureGuidance(context.context.kyc_kb, failure) : undefined;
  const problem = failure
    ? guidance
      ? `Your last entry was not accepted: ${lowerFirst(guidance.meaning)}`
      : 'Your last entry was not accepted.'
    : undefined;
  return [MACHINE_NOTICE, where, ...(problem ? [problem] : []), WHAT_YOU_CAN_ASK];
}

/** Why the entry was refused and how to fix it; with no failure, the rule of the step. */
export function explanation(context: AgentContext | undefined): string[] {
  if (!context) return [NO_CONTEXT, 'Check that each field is filled in as the app asks, then try again.'];
  const step = context.context.kyc_kb.step;
  const failure = heldFailure(context);
  if (failure) {
    const guidance = failureGuidance(context.context.kyc_kb, failure);
    if (guidance) return [...sentences(guidance.meaning), ...sentences(guidance.recovery).map(toUser)];
    const rule = step?.guidance[0];
    return ['Your last entry was not accepted.', ...(rule ? [toUser(rule)] : []), 'Check it and try again.'];
  }
  if (step) return [`Nothing on this screen has been rejected so far.`, ...step.guidance.slice(0, 2).map(toUser)];
  return ['Nothing has been rejected so far.', toUser(context.context.kyc_kb.general.when_stuck)];
}

/** How the knowledge base names the documents a step reads from. */
const DOCUMENT = /\b(?:PAN card|Aadhaar card|e-Aadhaar)\b/gi;

/** Which document the step needs: the ones its section names, and a sentence of guidance about them. */
export function documents(context: AgentContext | undefined): string[] {
  if (!context) return [NO_CONTEXT, 'The KYC journey usually needs your PAN card and your Aadhaar card.'];
  const step = context.context.kyc_kb.step;
  if (!step)
    return [
      'I do not know this screen, so I cannot say which document it needs.',
      'The KYC journey usually needs your PAN card and your Aadhaar card.',
    ];
  const said = [
    ...sentences(step.purpose),
    ...step.guidance.flatMap(sentences),
    ...Object.values(step.failures).flatMap((f) => sentences(f.recovery)),
  ];
  const named = [
    ...new Set(
      said.flatMap((sentence) =>
        (sentence.match(DOCUMENT) ?? []).map((name) => name.replace(/^pan/i, 'PAN').replace(/^aadhaar/i, 'Aadhaar')),
      ),
    ),
  ];
  if (named.length === 0)
    return [`The ${step.title} step needs no document.`, ...sentences(step.purpose).slice(0, 1).map(toUser)];
  // A sentence that stands on its own (not "It is printed on ..."), about one of the documents.
  const mentions = new RegExp(DOCUMENT.source, 'i');
  const about = said.find((sentence) => mentions.test(sentence) && !/^(it|this|they)\b/i.test(sentence));
  return [`For the ${step.title} step you need your ${named.join(' and your ')}.`, ...(about ? [toUser(about)] : [])];
}

/** What to do now, and what comes after this step. */
export function nextStep(context: AgentContext | undefined): string[] {
  if (!context) return [NO_CONTEXT, 'Fill in the screen in front of you and tap Continue.'];
  const kb = context.context.kyc_kb;
  const failure = heldFailure(context);
  const guidance = failure ? failureGuidance(kb, failure) : undefined;
  const now = guidance
    ? sentences(guidance.recovery).slice(0, 1).map(toUser)
    : kb.step
      ? [toUser(kb.step.guidance[0] ?? kb.step.purpose)]
      : [];
  const journey = kb.general.journey;
  const at = kb.step_id === null ? -1 : journey.indexOf(kb.step_id);
  let after: string | undefined;
  if (at >= 0 && at + 1 < journey.length) after = `After this step comes ${journeyTitle(journey[at + 1]!)}.`;
  else if (at >= 0) after = 'This is the last step.';
  return [
    ...now,
    ...(after ? [after] : []),
    ...(now.length === 0 && !after ? ['Fill in the screen in front of you and tap Continue.'] : []),
  ];
}

function journeyTitle(stepId: string): string {
  // The context holds only the current step's section; the next one is named by its id.
  return stepId.replace(/_/g, ' ');
}

/**
 * A person: the agent asks the service for one (agent/handoff.ts, docs/explanation/handoff.md) as this is
 * said; should that fail, it says so and points to the app's help.
 */
export function person(): string[] {
  return [HANDOFF_LINES.requested, 'I can stay and help with this screen in the meantime.'];
}

export function thanks(): string[] {
  return ["You're welcome. I'm here if you need anything else on this screen."];
}

function lowerFirst(text: string): string {
  return text.length > 0 ? `${text[0]!.toLowerCase()}${text.slice(1)}` : text;
}
