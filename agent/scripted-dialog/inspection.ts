import { createWebSocketInspector } from '@statelyai/inspect';
import type { AnyEventObject, InspectionEvent, MachineContext, Observer } from 'xstate';
import { redactForInspection } from '../../src/privacy/inspection-redaction.js';

export interface DialogInspection {
  inspect: Observer<InspectionEvent>;
  stop(): void;
}

/**
 * The scripted dialog in the Stately inspector beside the sessions (`AGENT_INSPECT`, the `ws://`
 * address of the service's inspection relay: docs/reference/console.md, "Inspecting live
 * sessions"). Its context and events are redacted as the sessions' are, so no identity value
 * the context or the user's words hold leaves the job.
 */
export function inspectDialogs(url: string): DialogInspection {
  const inspector = createWebSocketInspector({
    url,
    sanitizeContext: (context) => redactForInspection(context) as MachineContext,
    sanitizeEvent: (event) => redactForInspection(event) as AnyEventObject,
  });
  return { inspect: inspector.inspect, stop: () => inspector.stop() };
}
