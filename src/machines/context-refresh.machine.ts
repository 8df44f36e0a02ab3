import type { DoneActorEvent, ErrorActorEvent } from 'xstate';
import { assign, emit, fromPromise, setup } from 'xstate';
import type { RefreshPolicy } from '../domain/refresh-policy.js';
import { DEFAULT_REFRESH_POLICY, servedRefreshPolicy } from '../domain/refresh-policy.js';

/**
 * The refresh policy a voice agent follows, as a machine for agent implementations to run:
 * fetch the context on start, again `interval_seconds` after each fetch, and after a user turn
 * when `on_user_turn` is set, never starting a fetch less than `min_interval_seconds` after the
 * previous one ended. A turn inside that gap is not dropped: one fetch follows when the gap ends,
 * however many turns came. A failed fetch is retried on the next periodic tick.
 *
 * Pure: the fetch is the `fetchContext` promise actor the agent provides, and every wait is an
 * `after` delay, so the actor's clock (xstate's SimulatedClock in tests) drives all of it.
 * The policy in each fetched context replaces the current one: the service is its source.
 */
export interface ContextRefreshInput {
  sessionId: string;
  /** Until the first fetch brings the served policy. */
  policy?: RefreshPolicy;
}

export interface ContextRefreshContext {
  sessionId: string;
  policy: RefreshPolicy;
  /** The last context fetched, as `fetchContext` resolved it; null before the first success. */
  latest: unknown;
  fetches: number;
  consecutiveFailures: number;
  lastError: unknown;
  /** A user turn arrived while a fetch ran or inside the minimum interval. */
  turnPending: boolean;
}

export type ContextRefreshEvent = { type: 'user.turn' };

export type ContextRefreshEmitted =
  | { type: 'context.updated'; response: unknown }
  | { type: 'context.failed'; error: unknown; consecutiveFailures: number };

export interface FetchContextInput {
  sessionId: string;
}

export const contextRefreshMachine = setup({
  types: {
    context: {} as ContextRefreshContext,
    events: {} as ContextRefreshEvent,
    emitted: {} as ContextRefreshEmitted,
    input: {} as ContextRefreshInput,
  },
  actors: {
    // Replaced by the agent: GET /v1/assistant/context/{session_id}, resolving to the response body.
    fetchContext: fromPromise<unknown, FetchContextInput>(() =>
      Promise.reject(
        new Error('fetchContext is not provided: contextRefreshMachine.provide({ actors: { fetchContext } })'),
      ),
    ),
  },
  delays: {
    // Never shorter than the minimum interval, whatever the policy says.
    refreshInterval: ({ context }) =>
      Math.max(context.policy.interval_seconds, context.policy.min_interval_seconds) * 1000,
    minInterval: ({ context }) => context.policy.min_interval_seconds * 1000,
  },
  guards: {
    refreshesOnUserTurn: ({ context }) => context.policy.on_user_turn,
    turnPending: ({ context }) => context.turnPending,
  },
  actions: {
    clearPendingTurn: assign({ turnPending: false }),
    markTurnPending: assign({ turnPending: true }),
    keepContext: assign(({ context }, response: unknown) => ({
      latest: response,
      policy: servedRefreshPolicy(response) ?? context.policy,
      fetches: context.fetches + 1,
      consecutiveFailures: 0,
      lastError: null,
    })),
    announceContext: emit((_, response: unknown) => ({ type: 'context.updated' as const, response })),
    recordFailure: assign(({ context }, error: unknown) => ({
      consecutiveFailures: context.consecutiveFailures + 1,
      lastError: error,
    })),
    announceFailure: emit(({ context }) => ({
      type: 'context.failed' as const,
      error: context.lastError,
      consecutiveFailures: context.consecutiveFailures,
    })),
  },
}).createMachine({
  id: 'contextRefresh',
  initial: 'fetching',
  context: ({ input }) => ({
    sessionId: input.sessionId,
    policy: input.policy ?? DEFAULT_REFRESH_POLICY,
    latest: null,
    fetches: 0,
    consecutiveFailures: 0,
    lastError: null,
    turnPending: false,
  }),
  states: {
    fetching: {
      entry: 'clearPendingTurn',
      invoke: {
        src: 'fetchContext',
        input: ({ context }) => ({ sessionId: context.sessionId }),
        onDone: {
          target: 'settled',
          actions: [
            { type: 'keepContext', params: ({ event }: { event: DoneActorEvent<unknown> }) => event.output },
            { type: 'announceContext', params: ({ event }: { event: DoneActorEvent<unknown> }) => event.output },
          ],
        },
        onError: {
          target: 'settled',
          actions: [
            { type: 'recordFailure', params: ({ event }: { event: ErrorActorEvent }) => event.error },
            'announceFailure',
          ],
        },
      },
      on: { 'user.turn': { guard: 'refreshesOnUserTurn', actions: 'markTurnPending' } },
    },
    settled: {
      initial: 'cooling',
      // The periodic tick, counted from the end of the last fetch, successful or not.
      after: { refreshInterval: 'fetching' },
      states: {
        cooling: {
          on: { 'user.turn': { guard: 'refreshesOnUserTurn', actions: 'markTurnPending' } },
          after: { minInterval: [{ guard: 'turnPending', target: '#contextRefresh.fetching' }, { target: 'ready' }] },
        },
        ready: {
          on: { 'user.turn': { guard: 'refreshesOnUserTurn', target: '#contextRefresh.fetching' } },
        },
      },
    },
  },
});

export type ContextRefreshMachine = typeof contextRefreshMachine;
