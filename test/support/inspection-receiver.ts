import type { StatelyActorEvent, StatelyInspectionEvent, StatelySnapshotEvent } from '@statelyai/inspect';
import { createWebSocketReceiver } from '@statelyai/inspect';
import { vi } from 'vitest';

/**
 * What a Stately viewer receives from a relay, through the library's own receiver over a real
 * WebSocket. Its socket has no close of its own: closing the relay ends it.
 */
export class InspectionReceiver {
  readonly events: StatelyInspectionEvent[] = [];

  constructor(relayUrl: string) {
    createWebSocketReceiver({ server: relayUrl }).subscribe((event) => this.events.push(event));
  }

  /** The registration of the actor named `name` (session actors are named by their session id). */
  actor(name: string): StatelyActorEvent | undefined {
    return this.events.find(
      (event): event is StatelyActorEvent => event.type === '@xstate.actor' && event.name === name,
    );
  }

  /** Snapshots of the actor registered as `name`, in arrival order. */
  snapshotsOf(name: string): StatelySnapshotEvent[] {
    const actor = this.actor(name);
    if (!actor) return [];
    return this.events.filter(
      (event): event is StatelySnapshotEvent =>
        event.type === '@xstate.snapshot' && event.sessionId === actor.sessionId,
    );
  }

  /** Everything received, as the text a viewer would hold. */
  get text(): string {
    return JSON.stringify(this.events);
  }

  /** What arrived, one word per event, so that a failed wait says how far the stream got. */
  summary(): string {
    return this.events
      .map((event) =>
        event.type === '@xstate.actor' ? `actor:${event.name}` : `${event.type.slice(7)}:${event.event.type}`,
      )
      .join(' ');
  }

  /** Waits for what a relay on this machine delivers in milliseconds; the bound only outlasts a loaded two-core machine. */
  async until(condition: (receiver: this) => boolean, timeout = 10_000): Promise<void> {
    await vi.waitFor(
      () => {
        if (!condition(this))
          throw new Error(`inspection condition not met; ${this.events.length} events received: ${this.summary()}`);
      },
      { timeout, interval: 10 },
    );
  }
}
