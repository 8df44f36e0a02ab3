import type { Logger } from 'pino';
import type { AgentNotice } from '../domain/agent-notice.js';
import type { AppClock } from '../integrations/clock.js';
import type { MediaProvider } from '../integrations/media-port.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { MediaCallLog } from './media-call-log.js';

/**
 * One notice a second at most per session: a user typing sends a `component_input` per field
 * (debounced 500 ms by the SDK), and the agent re-reads the whole context on each notice anyway.
 * The first goes at once; any during the second after it are folded into one at its end, so the
 * agent always hears of the last change.
 */
export const AGENT_NOTICE_MIN_GAP_MS = 1000;

interface Pending {
  room: string;
  notice: AgentNotice;
}

/**
 * Sends the voice agent `context_updated` notices over the media server's data channel
 * (docs/decisions/0006-the-voice-agents-context.md), throttled per session. A notice is best effort, like the agent's
 * own refreshes: a failure is logged and noted with the media calls, never retried, since the
 * agent also refreshes on each user turn and every refresh interval.
 */
export class AgentNotices {
  private readonly lastSent = new Map<string, number>();
  /** Sessions with a notice folded into one due at the end of their second: at most one timer each. */
  private readonly waiting = new Map<string, Pending>();

  constructor(
    private readonly media: MediaProvider,
    private readonly clock: AppClock,
    private readonly logger: Logger,
    private readonly observers: { metrics: ServiceMetrics; calls: MediaCallLog },
  ) {}

  notify(room: string, notice: AgentNotice): void {
    const sessionId = notice.session_id;
    const waiting = this.waiting.get(sessionId);
    if (waiting) {
      waiting.room = room;
      waiting.notice = notice;
      return;
    }
    const now = this.clock.now();
    const last = this.lastSent.get(sessionId);
    if (last === undefined || now - last >= AGENT_NOTICE_MIN_GAP_MS) return this.send(sessionId, room, notice, now);
    this.waiting.set(sessionId, { room, notice });
    this.clock.setTimeout(
      () => {
        const due = this.waiting.get(sessionId);
        this.waiting.delete(sessionId);
        if (due) this.send(sessionId, due.room, due.notice, this.clock.now());
      },
      last + AGENT_NOTICE_MIN_GAP_MS - now,
    );
  }

  private send(sessionId: string, room: string, notice: AgentNotice, now: number): void {
    this.lastSent.set(sessionId, now);
    // Only the last second matters: forget sessions whose gap has passed, so the map stays small.
    this.clock.setTimeout(() => {
      if (this.lastSent.get(sessionId) === now && !this.waiting.has(sessionId)) this.lastSent.delete(sessionId);
    }, AGENT_NOTICE_MIN_GAP_MS);
    const done = this.observers.metrics.mediaCallDuration.startTimer({ call: 'notifyAgent' });
    this.media.notifyAgent(room, notice).then(
      () => this.observers.calls.note('notifyAgent', 'ok', done({ outcome: 'ok' })),
      (error: unknown) => {
        this.observers.calls.note('notifyAgent', 'failed', done({ outcome: 'failed' }));
        this.logger.warn({ err: error, room, call: 'notifyAgent' }, 'media call failed');
      },
    );
  }
}
