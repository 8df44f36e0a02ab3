/**
 * Erasing a user (DELETE /api/users/{user_id}, docs/calls.md): the host lets go of the user's
 * sessions, then the store removes them with everything that hangs off them, and keeps the
 * erasure's own record (its id, time and counts, nothing of the user).
 */
import { randomUUID } from 'node:crypto';
import type { ActorSystem } from '../actors/system.js';
import type { SessionHost } from '../actors/session-host.js';
import type { ErasedCounts } from '../store/call-book.js';

export interface Erasure {
  erasure_id: string;
  erased_at_ms: number;
  removed: ErasedCounts;
}

/** undefined where the host or the store cannot erase (cluster mode, a shared activity log). */
export function eraseUser(system: ActorSystem<SessionHost>, userId: string): Erasure | undefined {
  const { erasure } = system;
  const letGo = system.supervisor.eraseUser;
  if (!erasure || !letGo) return undefined;
  const sessionIds = letGo.call(system.supervisor, userId);
  let named: { erasureId: string; at: number } | undefined;
  const removed = erasure.eraseUser(userId, sessionIds, () => (named = { erasureId: `era_${randomUUID().replaceAll('-', '')}`, at: system.clock.now() }));
  system.callUpkeep?.nudge();
  return { erasure_id: named!.erasureId, erased_at_ms: named!.at, removed };
}
