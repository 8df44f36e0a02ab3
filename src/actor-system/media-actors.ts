import type { Logger } from 'pino';
import { fromPromise } from 'xstate';
import type { MediaProvider } from '../integrations/media-port.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { MediaCallLog } from './media-call-log.js';
import type { AgentPresence } from '../domain/voice-session.js';
import type {
  FindAgentInput,
  IssuedToken,
  ReplaceDispatchInput,
  RoomInput,
  TokenInput,
} from '../machines/session/media-contract.js';

export interface MediaObservers {
  metrics: ServiceMetrics;
  calls: MediaCallLog;
}

/** Runs one media call as a journaled side effect (a session hosted on Restate): its outcome is recorded once and replayed, never made twice. */
export type MediaJournal = <O>(call: string, run: () => Promise<O>) => Promise<O>;

const unjournaled: MediaJournal = (_call, run) => run();

/**
 * The session machine's media actors over one provider. A failed call is logged here, where
 * the reason is known; the machine only learns that it failed and degrades accordingly. Each
 * call is timed into the metrics and noted in the log of recent calls the health view shows.
 */
/**
 * `tokens: 'caller'`: the participant token is left for the caller to mint (a session hosted on
 * Restate, whose journal and kept answers must hold no credential: docs/decisions/0033-no-credential-kept-with-a-reply.md);
 * the reply carries an empty token and what it is for (`minted_for`).
 */
export function mediaActors(
  media: MediaProvider,
  logger: Logger,
  observers: MediaObservers,
  journal: MediaJournal = unjournaled,
  tokens: 'minted' | 'caller' = 'minted',
) {
  const logged =
    <I extends { room: string }, O>(call: string, run: (input: I) => Promise<O>) =>
    ({ input }: { input: I }): Promise<O> =>
      journal(call, async () => {
        const done = observers.metrics.mediaCallDuration.startTimer({ call });
        try {
          const output = await run(input);
          observers.calls.note(call, 'ok', done({ outcome: 'ok' }));
          return output;
        } catch (error) {
          observers.calls.note(call, 'failed', done({ outcome: 'failed' }));
          logger.warn({ err: error, room: input.room, call }, 'media call failed');
          throw error;
        }
      });

  return {
    createRoom: fromPromise<void, RoomInput>(
      logged('createRoom', (input) => media.createRoom(input.room, input.sessionId)),
    ),
    findAgentDispatch: fromPromise<string | null, FindAgentInput>(
      logged('findAgentDispatch', (input) => media.findAgentDispatch(input.room, input.preferredId)),
    ),
    dispatchAgent: fromPromise<string, RoomInput>(
      logged('dispatchAgent', (input) => media.dispatchAgent(input.room, input.sessionId)),
    ),
    deleteRoom: fromPromise<void, RoomInput>(logged('deleteRoom', (input) => media.deleteRoom(input.room))),
    checkAgent: fromPromise<AgentPresence, RoomInput>(logged('checkAgent', (input) => media.agentPresence(input.room))),
    replaceDispatch: fromPromise<string, ReplaceDispatchInput>(
      logged('replaceDispatch', (input) => media.replaceAgentDispatch(input.room, input.sessionId, input.staleId)),
    ),
    mintToken: fromPromise<IssuedToken, TokenInput>(
      tokens === 'caller'
        ? () => Promise.resolve({ token: '', url: media.url, expires_in_sec: media.tokenTtlSeconds })
        : logged('mintToken', async (input) => ({
            token: await media.mintToken(input),
            url: media.url,
            expires_in_sec: media.tokenTtlSeconds,
          })),
    ),
  };
}
