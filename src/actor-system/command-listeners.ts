import type { Logger } from 'pino';
import type { AssistantCommand } from '../machines/session/machine-events.js';

/** Who listens to each session's commands (control-plane sockets), keyed by session id so a session's actor may come and go. */
export class CommandListeners {
  private readonly listeners = new Map<string, Set<(command: AssistantCommand) => void>>();

  constructor(private readonly logger: Logger) {}

  subscribe(sessionId: string, listener: (command: AssistantCommand) => void): () => void {
    let listeners = this.listeners.get(sessionId);
    if (!listeners) this.listeners.set(sessionId, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.listeners.get(sessionId) === listeners) this.listeners.delete(sessionId);
    };
  }

  publish(sessionId: string, command: AssistantCommand): void {
    for (const listener of this.listeners.get(sessionId) ?? []) {
      // A listener's failure is its own: the session and the other listeners carry on.
      try {
        listener(command);
      } catch (error) {
        this.logger.error({ err: error, session_id: sessionId }, 'command listener failed');
      }
    }
  }
}
