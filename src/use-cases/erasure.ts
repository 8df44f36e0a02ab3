/**
 * Erasing a user (DELETE /api/users/{user_id}, docs/explanation/calls.md): wherever the calls are kept
 * (src/actor-system/call-records.ts), every session of the user goes with everything that hangs off it,
 * and the erasure keeps its own record (its id, time and counts, nothing of the user).
 */
import type { CallRecords, Erasure } from '../actor-system/call-records.js';

export type { Erasure };

/** `userId` as the service keeps it (masked where it reads as an identity value). */
export function eraseUser(records: CallRecords, userId: string): Promise<Erasure> {
  return records.eraseUser(userId);
}
