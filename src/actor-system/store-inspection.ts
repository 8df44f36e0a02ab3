import type { StoreInspectionEvent } from '@xstate/store';
import type { ActorRefLike, AnyEventObject, InspectionEvent, Observer } from 'xstate';

/** What of an `@xstate/store` store inspection needs. */
export interface InspectableStore {
  readonly sessionId: string;
  inspect(observer: (event: StoreInspectionEvent) => void): { unsubscribe(): void };
}

export interface StoreInspectionOptions {
  /** The name the inspector shows the store under (session actors show under their session id). */
  name: string;
  inspect: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** The store's context as plain data, read when each transition is reported. */
  context: () => unknown;
  /** An event as the inspector should see it. */
  event: (event: AnyEventObject) => AnyEventObject;
}

/**
 * Shows an `@xstate/store` store in the same inspector as the session actors. A store reports
 * each transition as one `@xstate.transition`, which the Stately inspector's client drops; an
 * actor shows there through `@xstate.actor` (its registration), `@xstate.event` and
 * `@xstate.snapshot`, so each transition is reported as those. The inspector serializes later
 * than it is told: the context given is a copy taken at the transition. Returns the unsubscribe.
 */
export function inspectStore(store: InspectableStore, options: StoreInspectionOptions): () => void {
  const { inspect } = options;
  const next = typeof inspect === 'function' ? inspect : (event: InspectionEvent) => inspect.next?.(event);
  const snapshotNow = () => ({
    status: 'active' as const,
    output: undefined,
    error: undefined,
    context: options.context(),
  });
  const actorRef: ActorRefLike & { id: string } = {
    id: options.name,
    sessionId: store.sessionId,
    // The inspector only watches: what the store takes comes from its owner, never from a viewer.
    send: () => {},
    getSnapshot: snapshotNow,
  };
  const rootId = store.sessionId;
  const subscription = store.inspect((reported) => {
    if (reported.event.type === '@xstate.init') {
      next({ type: '@xstate.actor', actorRef, rootId });
      return;
    }
    const event = options.event(reported.event);
    next({ type: '@xstate.event', actorRef, rootId, sourceRef: undefined, event });
    next({ type: '@xstate.snapshot', actorRef, rootId, event, snapshot: snapshotNow() });
  });
  return () => subscription.unsubscribe();
}
