import * as restate from '@restatedev/restate-sdk';

export const CEILING_OBJECT = 'Ceiling';

const BUSY_WORK_MS = Number(process.env.BUSY_WORK_MS ?? 2.5);

/**
 * Restate's own ceiling: a virtual object whose one handler reads one state value and writes one,
 * the least an object that keeps anything does. Its retention matches the session object's
 * one-way handler, so the two differ by what the handler does only.
 */
export const ceilingObject = restate.object({
  name: CEILING_OBJECT,
  options: { journalRetention: 0 },
  handlers: {
    step: async (ctx: restate.ObjectContext, _input: unknown): Promise<{ n: number }> => {
      const n = ((await ctx.get<number>('n')) ?? 0) + 1;
      ctx.set('n', n);
      return { n };
    },
    // The same step with one more journal entry of each kind the session handler makes: what each costs.
    stepAndRun: async (ctx: restate.ObjectContext, _input: unknown): Promise<{ n: number }> => {
      const n = ((await ctx.get<number>('n')) ?? 0) + 1;
      await ctx.run('a side effect', () => n);
      ctx.set('n', n);
      return { n };
    },
    // The session object's state work without its logic: a 1.9 KB value read and written back, a
    // summary written, a third key read (what `ingest` keeps); and the bare step with a wait between
    // its read and its write (as the Redis write makes): whether Restate's cost is in either.
    stepLargeState: async (ctx: restate.ObjectContext, input: unknown): Promise<{ n: number }> => {
      const kept = (await ctx.get<string>('kept')) ?? 'x'.repeat(1880);
      await ctx.get<number[]>('wakes');
      ctx.set('kept', kept);
      ctx.set('summary', { input, note: 'y'.repeat(150) });
      return { n: kept.length };
    },
    stepAfterAWait: async (ctx: restate.ObjectContext, _input: unknown): Promise<{ n: number }> => {
      const n = ((await ctx.get<number>('n')) ?? 0) + 1;
      await new Promise((resolve) => setTimeout(resolve, 1));
      ctx.set('n', n);
      return { n };
    },
    // The bare step whose endpoint also spends what the service process spends on an event (about
    // 2.5 ms of CPU, on the cores Restate shares): whether Restate's extra cost on ingestion is its
    // own work or the contention of a busy neighbour.
    stepAfterBusyWork: async (ctx: restate.ObjectContext, _input: unknown): Promise<{ n: number }> => {
      const n = ((await ctx.get<number>('n')) ?? 0) + 1;
      const until = performance.now() + BUSY_WORK_MS;
      while (performance.now() < until);
      ctx.set('n', n);
      return { n };
    },
    stepAndTwoWrites: async (ctx: restate.ObjectContext, input: unknown): Promise<{ n: number }> => {
      const n = ((await ctx.get<number>('n')) ?? 0) + 1;
      ctx.set('n', n);
      ctx.set('copy', input);
      ctx.set('summary', { n });
      return { n };
    },
  },
});
