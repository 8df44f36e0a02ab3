import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveKitServer } from '../../test-media/support/livekit-server.js';
import { startLiveKitServer } from '../../test-media/support/livekit-server.js';
import type { MediaService } from '../../test-media/support/media-service.js';
import { startMediaService } from '../../test-media/support/media-service.js';
import type { SimulatedUser } from '../../test-media/support/simulated-user.js';
import { AUDIBLE_RMS, joinAsUser } from '../../test-media/support/simulated-user.js';
import { fakeMicrophone, launchChromium, screenshot, seriousViolations } from './browser.js';

const SESSION = 'handoff-e2e';

/** The operator's voice: espeak-ng into a WAV that Chromium's fake microphone plays in a loop. */
function operatorVoice(): string {
  const folder = mkdtempSync(join(tmpdir(), 'operator-'));
  execFileSync('espeak-ng', [
    '-v',
    'en',
    '-s',
    '150',
    '-w',
    join(folder, 'voice.wav'),
    'Hello, this is the support desk. I can see your PAN details screen.',
  ]);
  return join(folder, 'voice.wav');
}

describe('an operator takes over a call from the console in Chromium, on a real LiveKit server', () => {
  let liveKit: LiveKitServer;
  let service: MediaService;
  let browser: Browser;
  let page: Page;
  let user: SimulatedUser;
  let callId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    liveKit = await startLiveKitServer();
    // No agent worker: the call must outlive the agent's absence for the length of the test.
    service = await startMediaService(liveKit, { VOICE_AGENT_JOIN_SECONDS: '600' });
    const started = await service.startVoice(SESSION, 'pan_details');
    callId = started.assistant_invocation_id;
    user = await joinAsUser(started.media_url, started.token);
    await service.postEvent({
      session_id: SESSION,
      event: 'handoff_requested',
      screen: 'pan_details',
      properties: { reason: 'the user asked for a person' },
    });
    browser = await launchChromium(fakeMicrophone(operatorVoice()));
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 180_000);

  afterAll(async () => {
    await user?.leave();
    await browser?.close();
    await service?.stop();
    await liveKit?.stop();
  });

  it('lists the waiting call, joins it with the microphone on, and the user hears the operator', async () => {
    await page.goto(`${service.url}/console#/handoffs`);
    await page.fill('#api-key', service.apiKey);
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#handoffs button.join', { timeout: 15_000 });
    const row = await page.textContent('#handoffs tbody tr');
    expect(row).toContain(SESSION);
    expect(row).toContain('the user asked for a person');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'handoffs-waiting');

    // A join without a name says what is missing and joins nothing.
    await page.click('#handoffs button.join');
    expect(await page.textContent('#handoff-status')).toMatch(/Type your name/);
    await page.fill('#operator-name', 'desk 7');
    await page.click('#handoffs button.join');
    await page.waitForFunction(
      () => document.querySelector('#handoff-status')?.textContent?.includes('Microphone on'),
      undefined,
      { timeout: 30_000 },
    );
    await page.waitForFunction(
      () => document.querySelector('#handoffs tbody')?.textContent?.includes('No call is waiting for a person'),
      undefined,
      { timeout: 15_000 },
    );
    await screenshot(page, 'handoffs-joined');

    // The user, in the room through the app's own token, hears the operator's voice.
    await expect
      .poll(
        () => [...user.loudestOtherAudio()].find(([identity]) => identity.startsWith('operator-desk-7-'))?.[1] ?? 0,
        { timeout: 30_000 },
      )
      .toBeGreaterThan(AUDIBLE_RMS);
    const record = await (
      await fetch(`${service.url}/api/calls/${callId}`, { headers: { 'x-api-key': service.apiKey } })
    ).json();
    expect(record.handoff).toMatchObject({ reason: 'the user asked for a person', joined: { operator: 'desk 7' } });

    await page.click('#handoff-leave');
    await page.waitForFunction(
      () => document.querySelector('#handoff-status')?.textContent?.includes('Left the call'),
      undefined,
      { timeout: 15_000 },
    );
    expect(pageErrors).toEqual([]);
  });

  it('fits a phone: the waiting calls scroll within their frame, the Join button in reach', async () => {
    await service.startVoice(`${SESSION}-2`, 'aadhaar_otp');
    await service.postEvent({
      session_id: `${SESSION}-2`,
      event: 'handoff_requested',
      screen: 'aadhaar_otp',
      properties: { reason: 'cannot read the OTP' },
    });
    const phone = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    await phone.goto(`${service.url}/console#/handoffs`);
    await phone.fill('#api-key', service.apiKey);
    await phone.click('#key-form button[type=submit]');
    await phone.waitForSelector('#handoffs button.join', { timeout: 15_000 });
    expect(await phone.textContent('#handoffs tbody tr')).toContain('cannot read the OTP');
    const overflow = await phone.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(phone, 'handoffs-phone');
    await phone.close();
  });
});
