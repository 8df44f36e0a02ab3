import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { RAW_PAN } from '../fixtures/client-events.js';
import type { Harness } from '../support/harness.js';
import { createHarness, settle } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';

let lk: LiveKitStandIn;
beforeAll(async () => void (lk = await startLiveKitStandIn()));
beforeEach(() => lk.reset());
afterAll(() => lk.close());

const ROOM = 'kyc-room-s1';
const post = (h: Harness, body: Record<string, unknown>) =>
  h.http.post('/v1/events').send({ session_id: 's1', screen: 'pan_details', ...body });
const typed = (h: Harness, hint = RAW_PAN) =>
  post(h, { event: 'component_input', component_id: 'pan_field', component_type: 'text_input', hint, masked: false });
const start = (h: Harness) =>
  h.http.post('/v1/assistant/session/start').send({ session_id: 's1', user_id: 'u1', screen: 'pan_details' });
const notices = () =>
  lk.dataPackets.map((packet) => ({ ...packet, data: JSON.parse(packet.data) as Record<string, unknown> }));

describe('context_updated: the voice agent hears of what the user typed or failed on while a call runs', () => {
  it('sends a reliable data packet on the topic context_updated to the room, naming the session and the event, never a value', async () => {
    const h = createHarness({ env: lk.env() });
    expect((await start(h)).status).toBe(200);
    expect((await typed(h)).status).toBe(200);
    await vi.waitFor(() => expect(lk.dataPackets).toHaveLength(1));
    expect(notices()).toEqual([
      {
        room: ROOM,
        topic: 'context_updated',
        kind: 'RELIABLE',
        data: { type: 'context_updated', session_id: 's1', reason: 'component_input', at: h.clock.now() },
      },
    ]);
    expect(lk.dataPackets[0]!.data).not.toContain(RAW_PAN.slice(-4));
    // The admin token the SDK sent was good for that room only.
    expect(lk.calls.find((call) => call.method === 'SendData')!.claims?.video).toMatchObject({
      roomAdmin: true,
      room: ROOM,
    });
  });

  it('only for component_input and validation_failed, and only while voice is active', async () => {
    const h = createHarness({ env: lk.env() });
    await typed(h);
    await start(h);
    await post(h, { event: 'screen_state' });
    await post(h, { event: 'voice_conversation_turn', properties: { role: 'agent' } });
    h.clock.increment(1000);
    await post(h, { event: 'validation_failed', component_id: 'pan_field', errors: ['pan_invalid'] });
    await vi.waitFor(() => expect(lk.dataPackets).toHaveLength(1));
    expect(notices()[0]!.data).toMatchObject({ reason: 'validation_failed' });
    await h.http.post('/v1/assistant/session/stop').send({ session_id: 's1' });
    h.clock.increment(1000);
    await typed(h);
    await settle();
    expect(lk.methodsCalled().filter((method) => method === 'SendData')).toHaveLength(1);
  });

  it('at most one a second per session: a burst sends the first at once and the last at the end of the second', async () => {
    const h = createHarness({ env: lk.env() });
    await start(h);
    await typed(h);
    h.clock.increment(200);
    await typed(h, 'ABCDE12');
    h.clock.increment(200);
    await post(h, { event: 'validation_failed', component_id: 'pan_field', errors: ['pan_invalid'] });
    await settle();
    await vi.waitFor(() => expect(lk.dataPackets).toHaveLength(1));
    const first = h.clock.now() - 400;
    h.clock.increment(599);
    await settle();
    expect(lk.dataPackets).toHaveLength(1);
    h.clock.increment(1);
    await vi.waitFor(() => expect(lk.dataPackets).toHaveLength(2));
    expect(notices().map((notice) => [notice.data.reason, notice.data.at])).toEqual([
      ['component_input', first],
      ['validation_failed', first + 400],
    ]);
  });

  it('a failed notice changes nothing for the app: the event is answered, the failure is logged and listed with the media calls', async () => {
    const h = createHarness({ env: lk.env() });
    await start(h);
    lk.failNext('SendData', { status: 503, code: 'unavailable', msg: 'no response from servers' });
    expect((await typed(h)).status).toBe(200);
    await vi.waitFor(async () => {
      const calls = (await h.http.get('/api/status')).body.media.recent_calls as { call: string; outcome: string }[];
      expect(calls.find((call) => call.call === 'notifyAgent')).toMatchObject({ outcome: 'failed' });
    });
  });

  it('without LiveKit configured nothing is sent and nothing fails', async () => {
    const h = createHarness();
    await start(h);
    expect((await typed(h)).status).toBe(200);
    await settle();
    expect(lk.calls).toEqual([]);
  });
});
