import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RoomServiceClient, TrackSource, TrackType } from 'livekit-server-sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentWorker } from '../../test-media/support/agent-worker.js';
import { startAgentWorker } from '../../test-media/support/agent-worker.js';
import type { LiveKitServer } from '../../test-media/support/livekit-server.js';
import { startLiveKitServer } from '../../test-media/support/livekit-server.js';
import type { MediaService } from '../../test-media/support/media-service.js';
import { startMediaService } from '../../test-media/support/media-service.js';
import type { ChatRequest, ModelStandIn } from '../../test-media/support/model-stand-in.js';
import { startModelStandIn } from '../../test-media/support/model-stand-in.js';
import { fakeMicrophone, launchChromium, screenshot, seriousViolations } from './browser.js';

const SESSION = 'voice-demo-e2e';
const USER = 'demo-user';
const ROOM = `kyc-room-${SESSION}`;
/** What the transcription stand-in hears in any audio: the spoken turn's words. */
const HEARD = 'how do I fix my PAN';
const TYPED = 'I cannot speak right now';
/** Typed to the agent, whose model then highlights the field through its tool. */
const ASKED_FIELD = 'Which field is wrong?';

/**
 * A spoken phrase as a WAV file (Debian's espeak-ng, then sox): two seconds of silence, the
 * phrase, then a long silence, because Chromium's fake microphone plays the file in a loop and
 * one utterance per loop keeps the conversation to a few turns.
 */
function speech(phrase: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'voice-demo-'));
  execFileSync('espeak-ng', ['-v', 'en', '-s', '150', '-w', join(folder, 'phrase.wav'), phrase]);
  execFileSync('sox', [join(folder, 'phrase.wav'), join(folder, 'padded.wav'), 'pad', '2', '30']);
  return join(folder, 'padded.wav');
}

const lastUserText = (request: ChatRequest) =>
  String(request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '');

describe('the voice demo page in Chromium, with the voice agent on a real LiveKit server', () => {
  let liveKit: LiveKitServer;
  let service: MediaService;
  let models: ModelStandIn;
  let worker: AgentWorker;
  let rooms: RoomServiceClient;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  /** The lines of the conversation as the page shows them, by speaker. */
  const said = (speaker: 'you' | 'assistant') =>
    page.$$eval(
      `#voice-transcript li[data-speaker="${speaker}"] .words`,
      (lines, wanted) => lines.map((line) => line.textContent ?? '').filter(() => wanted),
      speaker,
    );

  /** Audio packets the page has sent to the media server, over all its connections. */
  const audioPacketsSent = () =>
    page.evaluate(async () => {
      let packets = 0;
      for (const connection of (window as unknown as { peerConnections: RTCPeerConnection[] }).peerConnections) {
        (await connection.getStats()).forEach((report: { type: string; kind?: string; packetsSent?: number }) => {
          if (report.type === 'outbound-rtp' && report.kind === 'audio') packets += report.packetsSent ?? 0;
        });
      }
      return packets;
    });

  // A LiveKit server, the service, an agent worker (which waits for its inference processes) and a
  // browser: on a busy two-core machine this can take longer than the suite's default for a hook.
  beforeAll(async () => {
    liveKit = await startLiveKitServer();
    service = await startMediaService(liveKit);
    // The agent's models: OpenAI-compatible stand-ins, the same the agent's own tests use.
    models = await startModelStandIn({
      reply: (request) => {
        const last = request.messages.at(-1);
        if (last?.role === 'user' && lastUserText(request) === ASKED_FIELD)
          return { toolCall: { name: 'highlight_field', arguments: { component_id: 'pan_number' } } };
        if (last?.role === 'tool') return 'There it is, highlighted.';
        return `You said: ${lastUserText(request).slice(0, 40)}. Please check the highlighted field.`;
      },
      transcript: () => HEARD,
    });
    worker = await startAgentWorker(liveKit, service, models.baseUrl);
    rooms = new RoomServiceClient(liveKit.url, liveKit.apiKey, liveKit.apiSecret);
    browser = await launchChromium(
      fakeMicrophone(speech('Hello. I am stuck on the PAN card step. What should I type?')),
    );
    page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // The test's own window on the page's WebRTC connections, to read what they sent.
    await page.addInitScript(() => {
      const seen: RTCPeerConnection[] = [];
      (window as unknown as { peerConnections: RTCPeerConnection[] }).peerConnections = seen;
      const Native = window.RTCPeerConnection;
      window.RTCPeerConnection = class extends Native {
        constructor(config?: RTCConfiguration) {
          super(config);
          seen.push(this);
        }
      };
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await models?.close();
    await service?.stop();
    await liveKit?.stop();
  });

  it('starts a session and joins its room as the user, microphone on; the agent joins and opens', async () => {
    await page.goto(`${service.url}/console#/voice`);
    await page.fill('#api-key', service.apiKey);
    await page.click('#key-form button[type=submit]');
    await page.fill('#voice-session-id', SESSION);
    await page.fill('#voice-user-id', USER);
    await page.click('#voice-start');
    await page.waitForFunction(
      () => document.querySelector('#voice-status')?.textContent?.includes('Microphone on'),
      undefined,
      { timeout: 30_000 },
    );
    expect(await page.textContent('#voice-problem')).toBe('');
    expect(await page.textContent('#voice-session-link')).toContain(ROOM);

    // The server, not the page, says who is in the room: the user the service's token names,
    // publishing the fake microphone, and one agent.
    await expect
      .poll(
        async () =>
          (await rooms.listParticipants(ROOM)).map((p) => ({
            user: p.identity === USER,
            tracks: p.tracks.map((track) => ({ type: track.type, source: track.source, muted: track.muted })),
          })),
        { timeout: 30_000 },
      )
      .toEqual(
        expect.arrayContaining([
          { user: true, tracks: [{ type: TrackType.AUDIO, source: TrackSource.MICROPHONE, muted: false }] },
          { user: false, tracks: expect.any(Array) },
        ]),
      );
    expect(await rooms.listParticipants(ROOM)).toHaveLength(2);
    // The microphone's sound flows: the connection to the server is up and carrying audio.
    await expect.poll(audioPacketsSent, { timeout: 15_000 }).toBeGreaterThan(50);

    // The page sees the agent, and shows its opening as it speaks.
    await page.waitForSelector('#voice-participants li[data-agent="true"]', { timeout: 30_000 });
    await expect
      .poll(async () => (await said('assistant')).join(' '), { timeout: 30_000 })
      .toMatch(/automated assistant/i);
    // The timeline is the session's own activity: the start, and the agent reading its context.
    await page.waitForSelector('#voice-timeline li[data-kind="session_start"]');
    await page.waitForSelector('#voice-timeline li[data-kind="voice_agent_context_fetch"]', { timeout: 15_000 });
  });

  it('the agent hears the microphone and answers; the words appear as they are spoken', async () => {
    // The phrase from the WAV file went through the real VAD to the transcription stand-in...
    await expect.poll(() => models.transcriptions.length, { timeout: 60_000 }).toBeGreaterThan(0);
    expect(models.transcriptions[0]!.audio.length).toBeGreaterThan(1000);
    // ...the agent shows the user what it heard, and answers it.
    await expect.poll(async () => (await said('you')).join(' '), { timeout: 30_000 }).toContain(HEARD);
    await expect
      .poll(async () => (await said('assistant')).join(' '), { timeout: 30_000 })
      .toContain(`You said: ${HEARD}`);
  });

  it('typed chat reaches the agent, which answers it on the page; the turns reach the timeline', async () => {
    await page.fill('#voice-chat-input', TYPED);
    await page.click('#voice-chat-send');
    await page.waitForSelector(`#voice-transcript li[data-speaker="you"]:has-text("${TYPED}")`);
    await expect
      .poll(async () => (await said('assistant')).join(' '), { timeout: 30_000 })
      .toContain(`You said: ${TYPED}`);
    expect(models.chats.some((request) => lastUserText(request) === TYPED)).toBe(true);
    // The agent reports each turn to the service, and the page's timeline shows them in words.
    await page.waitForSelector(`#voice-timeline li[data-kind="event"]:has-text("user said"):has-text("${TYPED}")`, {
      timeout: 15_000,
    });
    // Each answer, once spoken, is shown as whole, no longer as words still coming.
    await expect
      .poll(() => page.locator('#voice-transcript li[data-speaker="assistant"].interim').count(), { timeout: 15_000 })
      .toBe(0);
    await screenshot(page, 'voice-demo');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('the agent highlights a field in the app: the page, playing the app, shows it, and the timeline records it', async () => {
    expect(await page.textContent('#voice-app-actions')).toContain('Nothing yet');
    await page.fill('#voice-chat-input', ASKED_FIELD);
    await page.click('#voice-chat-send');
    await page.waitForSelector(
      '#voice-app-actions li[data-action="highlight_field"]:has-text("Highlight field pan_number")',
      { timeout: 30_000 },
    );
    await page.waitForSelector(
      '#voice-timeline li[data-kind="event"]:has-text("agent asked the app to highlight field: pan_number (done)")',
      { timeout: 15_000 },
    );
    await screenshot(page, 'voice-demo-app-action');
  });

  it('stop deletes the room and ends the session', async () => {
    await page.click('#voice-stop');
    await page.waitForFunction(() => document.querySelector('#voice-status')?.textContent?.startsWith('Stopped'));
    expect(await rooms.listRooms([ROOM])).toEqual([]);
    await page.waitForSelector('#voice-timeline li[data-kind="session_stop"]');
    const session = await fetch(`${service.url}/api/sessions/${SESSION}`, { headers: { 'X-API-Key': service.apiKey } });
    expect(((await session.json()) as { active: boolean }).active).toBe(false);
    expect(pageErrors).toEqual([]);
  });
});
