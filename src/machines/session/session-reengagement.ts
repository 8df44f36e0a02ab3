/**
 * Reengagement in the session: the rule applied to this session (whether to reach out to a user
 * who went quiet), and the region that runs its timer: armed when the user drops off or a voice
 * session ends, restarted by the user's activity, cancelled by a voice start; when it fires, the
 * decision is recorded.
 */
import { enqueueActions } from 'xstate';
import type { Reengagement } from '../../domain/reengagement.js';
import { evaluateReengagement } from '../../domain/reengagement.js';
import type { SessionContext } from './session-context.js';
import { activity, reengagementDeadline } from './session-context.js';
import { sessionSetup } from './setup.js';

/** The reengagement rule (docs/decisions/0003-reengagement.md) applied to this session at `now`. */
export function sessionReengagement(context: SessionContext, voiceActive: boolean, now: number): Reengagement {
  return evaluateReengagement({
    now,
    lastUserActivityAt: context.last_user_activity_at ?? context.created_at,
    voiceActive,
    hadVoiceSession: context.voice.started_at !== null,
    inactivityThresholdSeconds: context.settings.reengagementInactivitySeconds,
    dropoff: context.dropoff,
    callbackOwedAt: context.callback_owed_at,
  });
}

export const reengagementSetup = sessionSetup.extend({
  actions: {
    armReengagement: enqueueActions(({ event, enqueue }) => {
      if (event.type === 'reengagement.arm')
        enqueue.assign({ reengagement: { armed_at: event.at, trace: event.trace } });
    }),
    rearmReengagement: enqueueActions(({ context, event, enqueue }) => {
      if (event.type === 'user.activity' && context.reengagement)
        enqueue.assign({ reengagement: { ...context.reengagement, armed_at: event.at } });
    }),
    recordReengagement: enqueueActions(({ context, enqueue }) => {
      const timer = context.reengagement;
      if (!timer) return;
      // Due the full inactivity period after it was last armed: the decision is taken as of then. The
      // item is stamped when recorded, which is later when the timer fired late (a wake after a
      // restart), and says when it was due.
      const dueAt = reengagementDeadline(context, timer);
      enqueue.emit(
        activity(
          context,
          'reengagement',
          dueAt,
          timer.trace,
          { ...sessionReengagement(context, false, dueAt), source: 'timer' },
          dueAt,
        ),
      );
    }),
    clearReengagement: enqueueActions(({ enqueue }) => enqueue.assign({ reengagement: null })),
  },
});

export const reengagementRegion = reengagementSetup.createStateConfig({
  initial: 'idle',
  states: {
    idle: {
      on: {
        'reengagement.arm': { target: 'armed', actions: 'armReengagement' },
        'session.restore': { guard: 'restoredReengagement', target: 'armed' },
      },
    },
    armed: {
      on: {
        'reengagement.arm': { target: 'armed', reenter: true, actions: 'armReengagement' },
        'user.activity': { target: 'armed', reenter: true, actions: 'rearmReengagement' },
        'reengagement.cancel': { target: 'idle', actions: 'clearReengagement' },
      },
      after: {
        reengagementInactivity: { target: 'idle', actions: ['recordReengagement', 'clearReengagement'] },
      },
    },
  },
});
