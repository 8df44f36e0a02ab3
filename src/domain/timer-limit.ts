/**
 * The longest wait a timer can be given, in seconds. XState timers go through setTimeout, which
 * cannot wait longer than 2^31-1 ms (~24.8 days): a setting or an SDK config asking for more would
 * fire at once instead.
 */
export const MAX_TIMER_SECONDS = Math.floor(2_147_483_647 / 1000);
