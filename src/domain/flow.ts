import type { KnowledgeBase } from './kyc-knowledge.js';
import { stepIdFor } from './kyc-knowledge.js';
import { normaliseStepId } from './step-id.js';

/** The flow an SDK registered with `POST /v1/flows/set`: plain data, bounded, kept in the session. */
export interface SessionFlow {
  flow_key: string;
  /** Normalised step ids in order; empty when the client named the flow but not its steps. */
  steps: string[];
}

export interface FlowProgress {
  /** 1-based place of the current screen in the flow. */
  position: number;
  total: number;
  percent: number;
}

/** A KYC flow has a dozen steps; the bound only stops a client from sending thousands. */
export const MAX_FLOW_STEPS = 64;

export const flowSteps = (sequence: readonly string[]): string[] =>
  sequence.slice(0, MAX_FLOW_STEPS).map((step) => normaliseStepId(step));

/** Where `screen` is in the flow, or null when there is no flow or the screen is not one of its steps. */
export function flowProgress(flow: SessionFlow | null, screen: string | null | undefined): FlowProgress | null {
  if (!flow || !screen || flow.steps.length === 0) return null;
  const index = flow.steps.indexOf(normaliseStepId(screen, (id) => flow.steps.includes(id)));
  if (index < 0) return null;
  const total = flow.steps.length;
  return { position: index + 1, total, percent: Math.round(((index + 1) / total) * 100) };
}

/** What the knowledge base says of the step a screen stands for; nulls when it does not know the step. */
export function stepFacts(
  kb: KnowledgeBase,
  screen: string | null | undefined,
): { business_step: string | null; validation_intent: string | null } {
  const stepId = stepIdFor(kb, screen);
  const step = stepId ? kb.steps[stepId] : undefined;
  return { business_step: step?.business_step ?? null, validation_intent: step?.validation_intent ?? null };
}
