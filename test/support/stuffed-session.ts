/**
 * Client data of about `bytes`, in strings short enough for the privacy pass to keep (it drops any
 * single string over its scan budget, docs/explanation/privacy.md), so it really reaches the session.
 */
export const stuffing = (bytes: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: Math.ceil(bytes / 2000) }, (_, i) => [`f${i}`, 'x'.repeat(2000)]));

/** About 60 KB of client data. */
export const FILLER = stuffing(60_000);

/** An event that makes a session hold its whole budget: a 60 KB `properties` (a known field, so kept). */
export const stuffed = (sessionId: string) => ({
  session_id: sessionId,
  event: 'identity',
  properties: { blob: FILLER },
});
