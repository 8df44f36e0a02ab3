import type { AgentContext } from '../../domain/agent-context.js';
import type { ContextView } from '../schemas/context.schema.js';
import { failureView, hintView } from './session-view.js';

/** The agent context as the API shows it: ISO times, like the session view. */
export function contextView(agentContext: AgentContext): ContextView {
  const { context } = agentContext;
  return {
    ...agentContext,
    context: {
      ...context,
      last_validation_failure: failureView(context.last_validation_failure),
      component_hints: context.component_hints.map(hintView),
      // A plain copy: the session's own is a null-prototype object.
      retry_counts: { ...context.retry_counts },
    },
  };
}
