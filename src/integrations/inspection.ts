import type { StatelyInspectionEvent } from '@statelyai/inspect';
import { createWebSocketInspector } from '@statelyai/inspect';
import type { Logger } from 'pino';
import type { AnyEventObject, InspectionEvent, MachineContext, Observer } from 'xstate';
import { redactForInspection } from '../privacy/inspection-redaction.js';
import type { PiiRules } from '../privacy/rules.js';
import { DEFAULT_PII_RULES } from '../privacy/rules.js';
import type { InspectionRelay } from './inspection-relay.js';
import { startInspectionRelay } from './inspection-relay.js';
import type { InspectSetting } from '../config/inspection-setting.js';

/** Inspection while it is on: the observer session actors are created with, and how to end it. */
export interface Inspection {
  inspect: Observer<InspectionEvent>;
  /** Where inspection events are sent (`ws://…`). */
  url: string;
  /** The page an operator opens, when the relay runs in this process. */
  viewerUrl: string | undefined;
  close(): Promise<void>;
}

/**
 * The results of invoked actors (a minted token is the output of `mintToken`) travel in
 * snapshots the context and event hooks do not cover.
 */
function withoutActorResults(event: StatelyInspectionEvent, rules: PiiRules): StatelyInspectionEvent {
  if (event.type === '@xstate.event' || !event.snapshot) return event;
  const snapshot = event.snapshot as { output?: unknown; error?: unknown };
  if (snapshot.output === undefined && snapshot.error === undefined) return event;
  // A spread keeps a machine snapshot's toJSON, which reads the copy it is called on.
  return {
    ...event,
    snapshot: {
      ...snapshot,
      output: redactForInspection(snapshot.output, rules),
      error: redactForInspection(snapshot.error, rules),
    },
  } as StatelyInspectionEvent;
}

/**
 * Starts the relay when the setting asks for one here, then connects a `@statelyai/inspect`
 * WebSocket inspector to it (or to the remote relay). Only ever called with inspection on:
 * off, no inspector exists and actors are created without an `inspect` option.
 */
export async function openInspection(
  setting: InspectSetting,
  logger: Logger,
  rules: PiiRules = DEFAULT_PII_RULES,
): Promise<Inspection> {
  let relay: InspectionRelay | undefined;
  let url: string;
  if (setting.kind === 'relay') {
    relay = await startInspectionRelay({ host: setting.host, port: setting.port, logger });
    url = relay.url;
  } else {
    url = setting.url;
  }
  const inspector = createWebSocketInspector({
    url,
    sanitizeContext: (context) => redactForInspection(context, rules) as MachineContext,
    sanitizeEvent: (event) => redactForInspection(event, rules) as AnyEventObject,
    serialize: (event) => withoutActorResults(event, rules),
  });
  logger.info(
    { inspect_url: url, viewer_url: relay?.viewerUrl },
    relay ? `inspection on: open ${relay.viewerUrl} in a browser` : `inspection on: sending to ${url}`,
  );
  return {
    inspect: inspector.inspect,
    url,
    viewerUrl: relay?.viewerUrl,
    close: async () => {
      inspector.stop();
      await relay?.close();
    },
  };
}
