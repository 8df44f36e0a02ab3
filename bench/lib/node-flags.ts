/**
 * The V8 flags `npm start` gives the service (package.json's `start`, beside the heap limit, which
 * follows MEMORY_BUDGET_MB): the bench runs the service, and its step in process, as `npm start`
 * does. Allocation-site pretenuring is off because a burst of new sessions taught V8 to allocate
 * the objects of every later event in the old generation (docs/decisions/0016-pretenuring-off-and-memory-accounts.md).
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring'];
