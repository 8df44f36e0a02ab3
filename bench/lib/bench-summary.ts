import type { StoredSession } from '../../src/store/ports.js';

/** The summary columns of a stored bench session: the ingestion bench's user and screen, created at `createdAt`. */
export const benchSummary = (createdAt: number, lastActivityAt: number): StoredSession['summary'] => ({
  user_id: 'user-42',
  screen: 'pan_details',
  voice: 'inactive',
  cooldown_until: null,
  created_at: createdAt,
  last_activity_at: lastActivityAt,
});
