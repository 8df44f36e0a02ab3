import { dispose } from '@livekit/rtc-node';
import { DataPacket_Kind } from 'livekit-server-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_NOTICE_TOPIC } from '../src/domain/agent-notice.js';
import { eventually } from './support/eventually.js';
import type { MediaStack } from './support/media-stack.js';
import { startMediaStack } from './support/media-stack.js';
import type { ChatRequest, ModelScript } from './support/model-stand-in.js';
import { startServiceProxy } from './support/service-proxy.js';
import type { SimulatedUser } from './support/simulated-user.js';
import { heardOpening, requestsFrom, startCall } from './support/voice-call.js';

/** Said once when the context cannot be fetched (agent/prompts.ts). */
const UNREACHABLE = "I can't see your screen right now";
const ANSWER = 'Please check the highlighted field.';

let stack: MediaStack;
let proxy: Awaited<ReturnType<typeof startServiceProxy>>;
const users: SimulatedUser[] = [];
/** How the language model stand-in answers from now on. */
let modelMode: 'answer' | 'hang' | 'garbage' = 'answer';

const systemPromptOf = (request: ChatRequest) => request.messages.find((message) => message.role === 'system')?.content;
const reply: ModelScript['reply'] = () => {
  if (modelMode === 'hang') return 'hang';
  // An event stream whose events are not JSON: what a broken gateway or a truncated answer sends.
  if (modelMode === 'garbage')
    return {
      malformed:
        'data: {"id": "chatcmpl-x", "choices": [{"delta": {"content": "Plea\n\ndata: <html>502 Bad Gateway</html>\n\n',
    };
  return ANSWER;
};

const logOf = (sessionId: string) => stack.worker.logOf(sessionId);

beforeAll(async () => {
  proxy = await startServiceProxy();
  stack = await startMediaStack({
    models: { reply: (request) => reply(request), transcript: () => 'hello' },
    worker: (service) => ({
      // The agent reaches the service through the proxy, which can refuse its context fetches.
      SERVICE_URL: proxy.forwardTo(service.url),
      SERVICE_RETRY_MAX_SECONDS: '2',
      MODEL_TIMEOUT_SECONDS: '3',
    }),
  });
});

afterEach(async () => {
  proxy.failContext(false);
  modelMode = 'answer';
  for (const user of users.splice(0)) await user.leave().catch(() => {});
});

afterAll(async () => {
  await stack?.stop();
  await proxy?.stop();
  await dispose();
});

describe('the voice agent when things go wrong, on a real LiveKit server', () => {
  it(
    'a context fetch answered 503: it says once that it helps in general terms, retries with ' +
      'backoff, and uses the context when the service is back',
    async () => {
      const sessionId = 'fault-context-1';
      const { service, models } = stack;
      proxy.failContext(true);
      const { user } = await startCall(service, sessionId, users);
      await heardOpening(user);
      await eventually(
        () => user.transcripts.join(' '),
        (text) => text.includes(UNREACHABLE),
        30_000,
      );

      // Retried, each wait longer than the one before (0.5 s, 1 s, then 2 s at most here).
      const refused = await eventually(
        () => proxy.refusedAt(sessionId),
        (times) => times.length >= 4,
        30_000,
      );
      const waits = refused.slice(1, 4).map((at, i) => at - refused[i]!);
      expect(waits[0]).toBeGreaterThanOrEqual(450);
      expect(waits[1]).toBeGreaterThanOrEqual(950);
      expect(waits[2]).toBeGreaterThanOrEqual(1900);
      const unreachable = logOf(sessionId).filter((line) => line.msg.startsWith('service unreachable'));
      expect(unreachable).toHaveLength(1);
      expect(unreachable[0]!.cause).toBe('context answered 503');

      proxy.failContext(false);
      await eventually(
        () => service.activity(sessionId, 'voice_agent_context_fetch'),
        (items) => items.length >= 1,
        15_000,
      );
      await eventually(
        () => logOf(sessionId).map((line) => line.msg),
        (messages) => messages.includes('service reachable again'),
        15_000,
      );

      // The served prompt is the agent's again: the next model request carries it.
      const chats = requestsFrom(models.chats);
      await user.type('What should I do now?');
      const context = await service.client.GET('/v1/assistant/context/{session_id}', {
        params: { path: { session_id: sessionId } },
      });
      expect(systemPromptOf(await chats.next())).toBe(context.data!.system_prompt);
      await eventually(
        () => user.transcripts.join(' '),
        (text) => text.includes(ANSWER),
        30_000,
      );
      // Said once for the whole outage, however many fetches failed.
      expect(user.transcripts.filter((text) => text.includes(UNREACHABLE))).toHaveLength(1);
    },
  );

  it('a data packet that is not JSON on the notice topic: logged without its content, ignored, and the call goes on', async () => {
    const sessionId = 'fault-packet-1';
    const { service, rooms } = stack;
    const { started, user } = await startCall(service, sessionId, users);
    await heardOpening(user);
    const fetches = (await service.activity(sessionId, 'voice_agent_context_fetch')).length;

    const packet = new TextEncoder().encode('refresh please {');
    await rooms.sendData(started.media_room, packet, DataPacket_Kind.RELIABLE, { topic: AGENT_NOTICE_TOPIC });
    const [ignored] = await eventually(
      () => logOf(sessionId).filter((line) => line.msg === 'ignored a context notice that is not one'),
      (lines) => lines.length >= 1,
      15_000,
    );
    expect(ignored).toMatchObject({ topic: AGENT_NOTICE_TOPIC, bytes: packet.byteLength });
    expect(JSON.stringify(ignored)).not.toContain('refresh please');

    // A real notice after it still makes the agent fetch, and a typed turn is still answered.
    await service.postEvent({
      session_id: sessionId,
      event: 'validation_failed',
      screen: 'pan_entry',
      component_id: 'pan_number',
      failure_reason_code: 'PAN_FORMAT',
      errors: ['PAN_FORMAT'],
    });
    await eventually(
      () => service.activity(sessionId, 'voice_agent_context_fetch'),
      (items) => items.length > fetches,
      15_000,
    );
    await user.type('Are you still there?');
    await eventually(
      () => user.transcripts.join(' '),
      (text) => text.includes(ANSWER),
      30_000,
    );
  });

  it('a language model that hangs, then one that answers garbage: each logged with its cause, and the next turn is answered', async () => {
    const sessionId = 'fault-model-1';
    const { service, models } = stack;
    const { user } = await startCall(service, sessionId, users);
    await heardOpening(user);
    const modelErrors = () => logOf(sessionId).filter((line) => line.msg === 'model error');

    const causes = { hang: /timed out/i, garbage: /JSON/ };
    for (const fault of ['hang', 'garbage'] as const) {
      modelMode = fault;
      const errorsBefore = modelErrors().length;
      const answered = () => user.transcripts.filter((text) => text.includes(ANSWER)).length;
      const answeredBefore = answered();
      const chats = requestsFrom(models.chats);
      await user.type(`First question (${fault})`);
      await chats.next();
      // The framework's own timeout (MODEL_TIMEOUT_SECONDS) or its parse of the stream fails the
      // request; it is tried once more (recoverable), then the turn is given up (not recoverable).
      const errors = await eventually(
        () => modelErrors().slice(errorsBefore),
        (lines) => lines.some((line) => line.recoverable === false),
        30_000,
      );
      for (const error of errors) expect(String(error.cause)).toMatch(causes[fault]);
      expect(chats.since().length).toBeGreaterThanOrEqual(2);
      expect(answered()).toBe(answeredBefore);

      modelMode = 'answer';
      await user.type(`Second question (${fault})`);
      await eventually(answered, (count) => count > answeredBefore, 30_000);
    }
    // The job went on throughout: still in the room, and the session still active.
    expect(user.agents()).toHaveLength(1);
    expect((await service.session(sessionId)).active).toBe(true);
    expect(logOf(sessionId).map((line) => line.msg)).not.toContain('job ended');
  });
});
