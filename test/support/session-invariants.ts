import type { StandInDispatch } from './livekit-stand-in.js';

/**
 * The session invariants, stated on what the service shows from outside: its activity list, its
 * session view and the media server's record. Each returns what it found wrong, so a test can
 * show every violation of a path at once.
 */
export interface ActivityView {
  kind: string;
  timestamp: string;
  payload: Record<string, unknown>;
}

export interface ActivityRules {
  /** The tenant's `min_trigger_interval_seconds`, in ms. */
  cooldownMs: number;
  /** `REENGAGEMENT_INACTIVITY_SECONDS`, in ms. */
  reengagementMs: number;
  /** The tenant's `assistant_prompt_cooldown_seconds`, in ms: at most one popup shown per this. */
  popupCooldownMs?: number;
}

/** One activity item as the model and the checks compare it: its kind and what distinguishes it. */
export function activitySignature(kind: string, payload: Record<string, unknown>): string {
  switch (kind) {
    case 'event':
      return `event:${String(payload.event)}`;
    case 'trigger': {
      const decision = payload.decision as { trigger: boolean; reason: string };
      return `trigger:${decision.trigger ? 'fired' : decision.reason}`;
    }
    case 'session_start':
      return `session_start:${payload.resumed ? 'resumed' : 'new'}`;
    case 'session_stop':
      return `session_stop:${payload.was_active ? 'active' : 'inactive'}${payload.ended_by === 'silence' ? ':silence' : ''}`;
    case 'reengagement':
      return `reengagement:${String(payload.source)}`;
    case 'popup_evaluate': {
      const decision = payload.decision as { show: boolean; popup_reason_code: string };
      return `popup:${decision.show ? 'shown' : decision.popup_reason_code}`;
    }
    default:
      return kind;
  }
}

const AGENT_TELEMETRY = new Set(['voice_conversation_turn']);

/**
 * The activity of one session follows the order of docs/reference/events.md for each voice engagement: a fired trigger comes
 * before the session_start, never inside a running engagement nor within the cooldown of the last
 * one or of the last engagement's end; a start either begins an engagement or resumes the running one; conversation turns and
 * context fetches happen inside it; a stop of an active session ends it and is followed at once by
 * its reengagement; a later reengagement comes from the timer, at most once per stop, exactly the
 * inactivity period after the user's last event, and never once a new start has cancelled it.
 */
export function activityViolations(items: readonly ActivityView[], rules: ActivityRules): string[] {
  const problems: string[] = [];
  let engaged = false;
  let stoppedAt: number | null = null;
  let lastUserEventAt: number | null = null;
  let timerFired = false;
  /** The last fired trigger, or the end of the last engagement: the cooldown runs from either. */
  let lastOffer: number | null = null;
  let lastPopupAt: number | null = null;

  items.forEach((item, i) => {
    const at = Date.parse(item.timestamp);
    const where = `#${i} ${item.kind}`;
    const { payload } = item;
    switch (item.kind) {
      case 'session_start':
        if (Boolean(payload.resumed) !== engaged)
          problems.push(`${where}: resumed=${String(payload.resumed)} while ${engaged ? 'engaged' : 'not engaged'}`);
        engaged = true;
        stoppedAt = null;
        break;
      case 'session_stop':
        if (Boolean(payload.was_active) !== engaged)
          problems.push(
            `${where}: was_active=${String(payload.was_active)} while ${engaged ? 'engaged' : 'not engaged'}`,
          );
        if (payload.was_active) {
          engaged = false;
          stoppedAt = at;
          // A call that went silent ended long before the check ended it: no cooldown from that.
          if (payload.ended_by !== 'silence') lastOffer = at;
          lastUserEventAt = null;
          timerFired = false;
          const next = items[i + 1];
          if (next && !(next.kind === 'reengagement' && next.payload.source === 'session_stop'))
            problems.push(`${where}: not followed by its reengagement`);
        }
        break;
      case 'reengagement': {
        if (payload.source === 'session_stop') {
          const previous = items[i - 1];
          if (!(previous?.kind === 'session_stop' && previous.payload.was_active))
            problems.push(`${where}: from a stop, but not right after a stop of an active session`);
          break;
        }
        if (engaged || stoppedAt === null) {
          problems.push(`${where}: from the timer, but no stop of an active session since the last start`);
          break;
        }
        if (timerFired) problems.push(`${where}: the timer fired twice after one stop`);
        timerFired = true;
        const due = Math.max(stoppedAt, lastUserEventAt ?? stoppedAt) + rules.reengagementMs;
        if (at !== due) problems.push(`${where}: fired at ${item.timestamp}, due ${new Date(due).toISOString()}`);
        break;
      }
      case 'event':
        if (AGENT_TELEMETRY.has(String(payload.event))) {
          if (!engaged) problems.push(`${where}: ${String(payload.event)} outside a voice engagement`);
        } else if (stoppedAt !== null) {
          lastUserEventAt = at;
        }
        break;
      case 'voice_agent_context_fetch':
        if (!engaged) problems.push(`${where}: outside a voice engagement`);
        break;
      case 'popup_evaluate': {
        const decision = payload.decision as { show: boolean };
        if (decision.show && engaged) problems.push(`${where}: a popup shown inside a voice engagement`);
        if (decision.show && lastPopupAt !== null && at - lastPopupAt < (rules.popupCooldownMs ?? 0))
          problems.push(`${where}: a popup ${at - lastPopupAt} ms after the last`);
        if (decision.show) lastPopupAt = at;
        break;
      }
      case 'trigger': {
        const decision = payload.decision as { trigger: boolean; reason: string };
        const sinceFired = lastOffer === null ? Infinity : at - lastOffer;
        if (decision.trigger) {
          if (engaged) problems.push(`${where}: fired inside a voice engagement`);
          if (sinceFired < rules.cooldownMs)
            problems.push(`${where}: fired ${sinceFired} ms after the last, within the cooldown`);
          lastOffer = at;
        } else if (decision.reason === 'cooldown' && sinceFired >= rules.cooldownMs) {
          problems.push(`${where}: held back for a cooldown that ended ${sinceFired - rules.cooldownMs} ms ago`);
        }
        break;
      }
    }
  });
  return problems;
}

/** Never two agents in one room: the media server's own record, not the service's belief. */
export function dispatchViolations(dispatches: readonly StandInDispatch[]): string[] {
  const perRoom = new Map<string, number>();
  for (const dispatch of dispatches) perRoom.set(dispatch.room, (perRoom.get(dispatch.room) ?? 0) + 1);
  return [...perRoom]
    .filter(([, count]) => count > 1)
    .map(([room, count]) => `${count} agents dispatched into ${room}`);
}

/** Where the last voice engagement stands according to the activity list: started and not stopped. */
export function engagedByActivity(items: readonly ActivityView[]): boolean {
  for (let i = items.length - 1; i >= 0; i -= 1) {
    const item = items[i]!;
    if (item.kind === 'session_start') return true;
    if (item.kind === 'session_stop' && item.payload.was_active) return false;
  }
  return false;
}
