import { describe, expect, it } from 'vitest';
import { TAKEOVER_LINE } from '../agent/prompts.js';
import { eventually } from './support/eventually.js';
import { mediaSuite } from './support/media-suite.js';
import { heardOpening, startCall } from './support/voice-call.js';

/**
 * livekit-server's webhooks to the service (docs/explanation/voice.md, "Webhooks from the media
 * server"), at the default VOICE_ROOM_CHECK_SECONDS (30): a crashed worker's call is taken over
 * sooner than any room check could see it.
 */
const { stack, users } = mediaSuite({
  webhooks: true,
  service: { VOICE_SILENCE_TIMEOUT_SECONDS: '120' },
  models: { reply: () => 'Please check the highlighted field.', transcript: () => 'hello' },
});

describe("the media server's webhooks, on a real LiveKit server", () => {
  it(
    'the worker killed mid-call: its agent leaving reaches the service at once, and a new agent ' +
      'says sorry within 15 s, with room checks 30 s apart',
    async () => {
      const sessionId = 'webhook-takeover-1';
      const { service } = stack();
      const { user } = await startCall(service, sessionId, users);
      await heardOpening(user, 60_000);
      // A second worker is up before the first dies, as in a deployment of more than one.
      const crashing = stack().worker;
      await stack().replaceWorker();
      const killedAt = Date.now();
      process.kill(crashing.pid, 'SIGKILL');
      await eventually(
        () => user.transcripts.join(' '),
        (text) => text.includes(TAKEOVER_LINE),
        60_000,
      );
      const heardAfterMs = Date.now() - killedAt;
      console.log(`[webhook] the new agent's sorry heard ${heardAfterMs} ms after the worker was killed`);
      expect(heardAfterMs).toBeLessThan(15_000);
      const outcomes = (await service.activity(sessionId, 'voice_agent')).map((item) => item.payload.outcome);
      expect(outcomes.slice(0, 2)).toEqual(['agent_left', 'redispatched']);
      expect((await service.session(sessionId)).active).toBe(true);
    },
    150_000,
  );

  it('a stopped call: the room finishing is taken and changes nothing more', async () => {
    const sessionId = 'webhook-stop-1';
    const { service } = stack();
    const { user } = await startCall(service, sessionId, users);
    await heardOpening(user, 60_000);
    await service.stopVoice(sessionId);
    const stops = await eventually(
      () => service.activity(sessionId, 'session_stop'),
      (items) => items.length >= 1,
      15_000,
    );
    expect(stops.map((item) => item.payload.ended_by ?? 'client')).toEqual(['client']);
    expect(await service.activity(sessionId, 'voice_agent')).toEqual([]);
  }, 150_000);
});
