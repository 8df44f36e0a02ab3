import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSimulation } from '../../scripts/simulator/simulation.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';
import { startService } from '../support/service-process.js';
import { launchChromium, screenshot, seriousViolations } from './browser.js';

const KEY = 'console-e2e-key';

describe('the operator console in Chromium', () => {
  let service: ReturnType<typeof startService>;
  let url: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  const api = (path: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'X-API-Key': KEY, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function enterKey(key: string) {
    await page.fill('#api-key', key);
    await page.click('#key-form button[type=submit]');
  }

  const shownIds = () =>
    page.$$eval('#activity-table tbody tr', (rows) => rows.map((row) => Number((row as HTMLElement).dataset.id)));

  beforeAll(async () => {
    service = startService({ API_KEY: KEY, RATE_LIMIT_PER_MINUTE: '0' });
    url = await service.url;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    service?.child.kill('SIGTERM');
  });

  it('shows a 401 page for a wrong key, and takes the right one', async () => {
    await page.goto(`${url}/console`);
    await enterKey('not-the-key');
    await page.waitForSelector('text=401: key not accepted');
    expect(await page.textContent('.unauthorized')).toContain('invalid API key');
    await screenshot(page, 'unauthorized');
    expect(await seriousViolations(page)).toEqual([]);

    await enterKey(KEY);
    await page.waitForSelector('h2:has-text("Live activity")');
    await page.waitForFunction(() => document.querySelector('#stream-state')?.textContent === 'live');
    expect(await page.evaluate(() => sessionStorage.getItem('kyc-console-api-key'))).toBe(KEY);
    // Where each item goes besides this table, in words: the metrics, the flow-graph recorder and the SSE hub (this page's stream).
    await page.waitForFunction(
      () =>
        document.querySelector('#activity-readers')?.textContent ===
        'Each new item also goes to the metrics (/metrics), the flow recorder and every live page open (this one too).',
    );
  });

  it('shows items live while the simulator runs, and filters them', async () => {
    const simulation = runSimulation({
      url,
      apiKey: KEY,
      sessions: 20,
      rate: 10,
      concurrency: 20,
      seed: 7,
      thinkMs: 150,
      timeoutMs: 10_000,
    });
    await page.waitForFunction(() => document.querySelectorAll('#activity-table tbody tr').length >= 30);
    await page.waitForFunction(() => Number(document.querySelector('#rate')?.textContent) > 0);
    const summary = await simulation;
    expect(summary.requests.failed).toBe(0);
    await screenshot(page, 'activity');

    await page.selectOption('#filter-kind', 'trigger');
    const kinds = await page.$$eval('#activity-table tbody tr', (rows) =>
      rows.map((row) => (row as HTMLElement).dataset.kind),
    );
    expect(kinds.length).toBeGreaterThan(0);
    expect(new Set(kinds)).toEqual(new Set(['trigger']));

    await page.selectOption('#filter-kind', '');
    const someSession = await page.$eval(
      '#activity-table tbody tr td:nth-child(4) a',
      (link) => link.textContent ?? '',
    );
    await page.fill('#filter-session', someSession);
    const sessions = await page.$$eval('#activity-table tbody tr td:nth-child(4)', (cells) =>
      cells.map((cell) => cell.textContent),
    );
    expect(sessions.length).toBeGreaterThan(0);
    expect(new Set(sessions)).toEqual(new Set([someSession]));
    await page.fill('#filter-session', '');

    await page.fill('#filter-text', 'SELFIE_CAPTURE');
    const texts = await page.$$eval('#activity-table tbody tr', (rows) =>
      rows.map((row) => row.textContent?.toLowerCase() ?? ''),
    );
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.every((text) => text.includes('selfie_capture'))).toBe(true);
    await page.fill('#filter-text', '');
    expect(await page.$$eval('#activity-table tbody tr', (rows) => rows.length)).toBeGreaterThan(texts.length);
  });

  it('counts only live arrivals in items/s, not the recent items loaded on arrival', async () => {
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('#activity-table tbody tr').length >= 100);
    const readings: number[] = [];
    for (let tick = 0; tick < 12; tick += 1) {
      readings.push(Number(await page.textContent('#rate')));
      await page.waitForTimeout(200);
    }
    // Nothing is posted meanwhile: the 200 items loaded on arrival are not a rate.
    expect(Math.max(...readings)).toBeLessThan(5);
  });

  it('pauses and resumes without losing an item', async () => {
    await page.click('#pause');
    await page.waitForFunction(() => document.querySelector('#stream-state')?.textContent === 'paused');
    const before = Math.max(...(await shownIds()));
    for (let step = 0; step < 5; step += 1) {
      expect(
        (await api('/v1/events', { session_id: 'e2e-paused', event: 'screen_view', screen: `step-${step}` })).status,
      ).toBe(200);
    }
    // Nothing arrives while paused.
    expect(Math.max(...(await shownIds()))).toBe(before);

    await page.click('#pause');
    await page.waitForFunction(
      (last) => document.querySelector(`#activity-table tr[data-id="${last}"]`) !== null,
      before + 5,
    );
    const ids = (await shownIds()).filter((id) => id > before).sort((a, b) => a - b);
    expect(ids).toEqual([before + 1, before + 2, before + 3, before + 4, before + 5]);
    expect(await page.getAttribute('#gap-note', 'data-gaps')).toBe('0');
  });

  it('offers every kind in the Kind filter and words the popup, flow and drop-off items', async () => {
    const session = { session_id: 'e2e-kinds', user_id: 'user-kinds' };
    expect(
      (
        await api('/v1/events', {
          ...session,
          event: 'validation_failed',
          screen: 'pan_details',
          component_id: 'pan',
          failure_reason_code: 'pan_invalid_format',
        })
      ).status,
    ).toBe(200);
    expect((await api('/v1/assistant/popup/evaluate', session)).status).toBe(200);
    const steps = ['phone_entry', 'pan_details', 'selfie_capture'];
    expect(
      (
        await api('/v1/flows/set', {
          ...session,
          client_id: 'e2e-client',
          flow_key: 'e2e-flow',
          current_step: 'pan_details',
          step_sequence: steps,
        })
      ).status,
    ).toBe(200);
    expect(
      (await api('/api/dropoff/register', { ...session, phone: '+91 98765 43210', reason: 'app_backgrounded' })).status,
    ).toBe(200);
    expect((await api('/api/dropoff/cancel', session)).status).toBe(200);

    const offered = await page.$$eval('#filter-kind option', (options) =>
      options.map((option) => (option as HTMLOptionElement).value).filter(Boolean),
    );
    expect(offered).toEqual(
      expect.arrayContaining(['popup_evaluate', 'flow_graph_recorded', 'dropoff_registered', 'dropoff_cancelled']),
    );
    await page.fill('#filter-session', 'e2e-kinds');
    const said = async (kind: string) => {
      await page.selectOption('#filter-kind', kind);
      await page.waitForSelector(`#activity-table tbody tr[data-kind="${kind}"]`);
      return page.$$eval('#activity-table tbody tr td:nth-child(5)', (cells) => cells.map((cell) => cell.textContent));
    };
    expect(await said('popup_evaluate')).toEqual(['popup shown on pan_details: validation_failed after 1500 ms']);
    expect(await said('flow_graph_recorded')).toEqual(['new flow e2e-flow for e2e-client: 3 steps']);
    expect(await said('dropoff_registered')).toEqual([
      'drop-off registered (app_backgrounded), dialable phone ending 3210',
    ]);
    expect(await said('dropoff_cancelled')).toEqual(['drop-off cancelled: the app cancelled it']);
    await page.selectOption('#filter-kind', '');
    await page.fill('#filter-session', '');
  });

  it('finds a session the service keys by its digest (its id reads as an identity value) by the id as typed, live items included', async () => {
    await page.reload();
    await page.waitForFunction(() => document.querySelector('#stream-state')?.textContent === 'live');
    for (const screen of ['pan-a', 'pan-b'])
      expect((await api('/v1/events', { session_id: 'ABCDE1234F', event: 'screen_view', screen })).status).toBe(200);
    await page.fill('#filter-session', 'ABCDE1234F');
    await page.waitForFunction(() => document.querySelectorAll('#activity-table tbody tr').length === 2);
    const shown = await page.$$eval('#activity-table tbody tr td:nth-child(4)', (cells) =>
      cells.map((cell) => cell.textContent ?? ''),
    );
    // Shown by its key, never the raw id.
    expect(shown.every((id) => /^h-[0-9a-f]{24}$/.test(id))).toBe(true);
    expect(
      (await api('/v1/events', { session_id: 'ABCDE1234F', event: 'screen_view', screen: 'pan-live' })).status,
    ).toBe(200);
    await page.waitForFunction(() => document.querySelectorAll('#activity-table tbody tr').length === 3);
    expect(await page.textContent('#activity-table tbody tr:first-child')).toContain('pan-live');
    await page.fill('#filter-session', '');
  });

  it('asks the service for the items of a session or kind filter, beyond the newest the page holds, and adds live ones', async () => {
    for (let step = 0; step < 3; step += 1) {
      expect(
        (await api('/v1/events', { session_id: 'e2e-early', event: 'screen_view', screen: `early-${step}` })).status,
      ).toBe(200);
    }
    // More than the page loads on arrival (200), so the early session's items are not among them.
    for (let step = 0; step < 210; step += 1) {
      expect((await api('/v1/events', { session_id: 'e2e-later', event: 'screen_view', screen: 'later' })).status).toBe(
        200,
      );
    }
    await page.reload();
    await page.waitForFunction(() => document.querySelector('#stream-state')?.textContent === 'live');
    expect(await page.$('#activity-table a:text-is("e2e-early")')).toBeNull();

    await page.fill('#filter-session', 'e2e-early');
    await page.waitForFunction(() => document.querySelectorAll('#activity-table tbody tr').length === 3);
    expect(await page.textContent('#filter-note')).toContain('matching items the service holds');
    expect(
      (await api('/v1/events', { session_id: 'e2e-early', event: 'screen_view', screen: 'early-live' })).status,
    ).toBe(200);
    await page.waitForFunction(() => document.querySelectorAll('#activity-table tbody tr').length === 4);
    expect(await page.textContent('#activity-table tbody tr:first-child')).toContain('early-live');
    // The live item is not drawn twice after the service's answer to another filter change.
    await page.selectOption('#filter-kind', 'event');
    await page.waitForFunction(() =>
      document.querySelector('#filter-note')?.textContent?.includes('the service holds'),
    );
    expect(
      await page.$$eval('#activity-table tbody tr', (rows) =>
        rows.map((row) => row.textContent?.match(/early-\S+/)?.[0]),
      ),
    ).toEqual(['early-live', 'early-2', 'early-1', 'early-0']);

    // A filter nothing matches says so.
    await page.fill('#filter-session', 'e2e-no-such-session');
    await page.waitForFunction(
      () => document.querySelector('#empty-note')?.textContent === 'No item matches: clear a filter to see more.',
    );
    // A filter finding nothing is not an empty service: the simulator is not suggested.
    expect(await page.isVisible('#no-activity')).toBe(false);
    expect(await page.$$('#activity-table tbody tr')).toHaveLength(0);
    await page.fill('#filter-session', 'e2e-early');
    await page.waitForFunction(() => document.querySelectorAll('#activity-table tbody tr').length === 4);
    expect(await page.textContent('#empty-note')).toBe('');

    await page.fill('#filter-text', 'early-1');
    expect(await page.textContent('#filter-note')).toMatch(
      /Text searches the items this page holds: since \d\d:\d\d:\d\d/,
    );
    await page.fill('#filter-text', '');
    await page.selectOption('#filter-kind', '');
    await page.fill('#filter-session', '');
    expect(await page.textContent('#filter-note')).toBe('');
  });

  it('lists the sessions held, filters them, and shows one session with its statechart following a voice start', async () => {
    await page.goto(`${url}/console#/sessions`);
    await page.waitForFunction(() => document.querySelectorAll('#sessions-table tbody tr').length >= 20);
    expect(await page.textContent('#sessions-summary')).toMatch(/of 2\d sessions/);
    await screenshot(page, 'sessions');

    expect(
      (
        await api('/v1/events', {
          session_id: 'e2e-voice',
          event: 'screen_view',
          screen: 'document_capture',
          user_id: 'user-e2e',
        })
      ).status,
    ).toBe(200);
    await page.fill('#sessions-q', 'e2e-voice');
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('#sessions-table tbody tr')]
          .map((row) => (row as HTMLElement).dataset.sessionId)
          .join() === 'e2e-voice',
    );

    await page.click('#sessions-table a:has-text("e2e-voice")');
    await page.waitForSelector('[data-state-id="session.voice.inactive"].current');
    expect(await page.$('[data-state-id="session.voice.active"].current')).toBeNull();

    expect(
      (await api('/v1/assistant/session/start', { session_id: 'e2e-voice', screen: 'document_capture' })).status,
    ).toBe(200);
    await page.waitForSelector('[data-state-id="session.voice.active"].current');
    expect(await page.$('[data-state-id="session.voice.inactive"].current')).toBeNull();
    await page.waitForSelector('#timeline li[data-kind="session_start"]');
    // Newest first, as Live activity: the voice start just made is at the top.
    const timelineIds = await page.$$eval('#timeline li', (items) =>
      items.map((item) => Number(/#(\d+)/.exec(item.textContent ?? '')?.[1])),
    );
    expect(timelineIds.length).toBeGreaterThan(1);
    expect(timelineIds).toEqual([...timelineIds].sort((a, b) => b - a));
    expect(await page.getAttribute('#timeline li:first-child', 'data-kind')).toBe('session_start');
    expect(await page.textContent('#system-prompt')).not.toBe('');
    await screenshot(page, 'session', true);
  });

  it(
    'never scrolls the page sideways: long text wraps, wide tables scroll in their own box, and ' +
      'a narrow screen shows the timeline before the statechart',
    async () => {
      const longScreen = `screen_${'abcdefghij'.repeat(24)}`;
      const longSession = `e2e-${'long-session-id-'.repeat(7)}`;
      expect(
        (await api('/v1/events', { session_id: longSession, event: 'screen_view', screen: longScreen })).status,
      ).toBe(200);
      const sideways = () =>
        page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(`${url}/console#/activity`);
      await page.waitForSelector(`#activity-table td:text-is("screen_view on ${longScreen}")`);
      expect(await sideways()).toBe(0);

      // Only long ids, screens and payload text break anywhere: a word ('running', a user id) breaks only at a space or hyphen.
      await page.goto(`${url}/console#/sessions`);
      // By its text: the screen may break at its underscores (<wbr>), which Playwright's :text-is does not read through.
      await page.waitForFunction(
        (screen) => [...document.querySelectorAll('#sessions-table td')].some((cell) => cell.textContent === screen),
        longScreen,
      );
      const brokenWords = await page.$$eval(
        '#sessions-table tbody td:nth-child(2), #sessions-table tbody td:nth-child(8)',
        (cells) =>
          cells
            .filter((cell) => {
              const range = document.createRange();
              range.selectNodeContents(cell);
              return range.getClientRects().length > 1 && !/[\s-]/.test(cell.textContent ?? '');
            })
            .map((cell) => cell.textContent),
      );
      expect(brokenWords).toEqual([]);
      expect(await sideways()).toBe(0);

      await page.goto(`${url}/console#/activity`);
      await page.waitForSelector(`#activity-table td:text-is("screen_view on ${longScreen}")`);
      await page.setViewportSize({ width: 390, height: 800 });
      expect(await sideways()).toBe(0);
      // On a phone the rows are cards that wrap inside the screen: nothing to scroll, nothing cut.
      expect(
        await page.$eval(
          '#activity-table',
          (table) => table.parentElement!.scrollWidth <= table.parentElement!.clientWidth,
        ),
      ).toBe(true);
      expect(await page.isVisible('#activity-table td:text-is("screen_view on ' + longScreen + '")')).toBe(true);
      await page.goto(`${url}/console#/sessions`);
      await page.waitForSelector('#sessions-table tbody tr');
      expect(await sideways()).toBe(0);
      await page.goto(`${url}/console#/sessions/${encodeURIComponent(longSession)}`);
      await page.waitForSelector('#timeline li');
      await page.waitForSelector('#statechart');
      expect(await sideways()).toBe(0);
      const top = (selector: string) => page.$eval(selector, (element) => element.getBoundingClientRect().top);
      expect(await top('#timeline')).toBeLessThan(await top('#statechart'));
      expect(await top('#timeline')).toBeLessThan(800);
      await screenshot(page, 'session-narrow', true);
      await page.setViewportSize({ width: 1360, height: 860 });
    },
  );

  it('keeps the keyboard focus on a session link across refreshes, also when its row moves', async () => {
    await page.goto(`${url}/console#/sessions`);
    await page.waitForFunction(() => document.querySelectorAll('#sessions-table tbody tr').length >= 5);
    const order = () =>
      page.$$eval('#sessions-table tbody tr', (rows) => rows.map((row) => (row as HTMLElement).dataset.sessionId));
    const [, , third] = await order();
    await page.focus(`#sessions-table tr[data-session-id="${third}"] a`);
    const focused = () =>
      page.evaluate(() => (document.activeElement as HTMLElement | null)?.closest('tr')?.dataset.sessionId);

    // Another session becomes the most recent: rows move around the focused one.
    expect(
      (await api('/v1/events', { session_id: 'e2e-focus-other', event: 'screen_view', screen: 'pan_details' })).status,
    ).toBe(200);
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('#sessions-table tbody tr')?.dataset.sessionId === 'e2e-focus-other',
    );
    expect(await focused()).toBe(third);
    // Its own session becomes the most recent: the focused row itself moves to the top.
    expect((await api('/v1/events', { session_id: third, event: 'screen_view', screen: 'pan_details' })).status).toBe(
      200,
    );
    await page.waitForFunction(
      (id) => document.querySelector<HTMLElement>('#sessions-table tbody tr')?.dataset.sessionId === id,
      third,
    );
    expect(await focused()).toBe(third);
  });

  it('shows a not-found page for an unknown view, a malformed address and an unknown session, which it asks for once', async () => {
    const errors: string[] = [];
    const onError = (error: Error) => errors.push(error.message);
    page.on('pageerror', onError);
    const heading = () => page.textContent('main h2');

    await page.goto(`${url}/console#/nosuchview`);
    await page.waitForSelector('main h2:text-is("No such page")');
    expect(await page.$('nav a[aria-current]')).toBeNull();
    await page.goto(`${url}/console#/sessions/%E0%A4`);
    await page.waitForSelector('main h2:text-is("No such page")');
    expect(await page.textContent('main')).toContain('#/sessions/%E0%A4');

    const asked: string[] = [];
    const onRequest = (request: { url: () => string }) => {
      if (new URL(request.url()).pathname === '/api/sessions/e2e-nope') asked.push(request.url());
    };
    page.on('request', onRequest);
    await page.goto(`${url}/console#/sessions/e2e-nope`);
    await page.waitForSelector('main h2:text-is("No such session")');
    await page.waitForTimeout(2500);
    expect(await heading()).toBe('No such session');
    expect(asked).toHaveLength(1);
    page.off('request', onRequest);
    page.off('pageerror', onError);
    expect(errors).toEqual([]);
  });

  it('loads without a request the service refuses (no /favicon.ico)', async () => {
    const fresh = await context.newPage();
    await fresh.addInitScript((key) => sessionStorage.setItem('kyc-console-api-key', key), KEY);
    const failed: string[] = [];
    fresh.on('console', (message) => {
      if (message.type() === 'error') failed.push(message.text());
    });
    await fresh.goto(`${url}/console#/health`);
    await fresh.waitForSelector('#counts dt');
    await fresh.waitForTimeout(1000);
    expect(failed).toEqual([]);
    expect(await fresh.getAttribute('link[rel="icon"]', 'href')).toMatch(/^data:image\/svg\+xml,/);
    await fresh.close();
  });

  it('gives the date with a time that is not today', async () => {
    // A context of its own: the clock is the context's, and this one believes it is two days on,
    // so everything the service recorded is from another day.
    const laterContext = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    const later = await laterContext.newPage();
    await later.addInitScript((key) => sessionStorage.setItem('kyc-console-api-key', key), KEY);
    await later.clock.setFixedTime(Date.now() + 2 * 86_400_000);
    await later.goto(`${url}/console#/sessions/e2e-voice`);
    await later.waitForSelector('#timeline li');
    const year = String(new Date().getFullYear());
    const lastActivity = await later.textContent('#session-facts dt:text-is("Last user activity") + dd');
    expect(lastActivity).toContain(year);
    expect(lastActivity).toMatch(/\d\d:\d\d:\d\d$/);
    expect(await later.textContent('#timeline li:first-child')).toContain(year);
    await laterContext.close();
    // Today's times stay short.
    await page.goto(`${url}/console#/sessions/e2e-voice`);
    await page.waitForSelector('#timeline li');
    expect(await page.textContent('#session-facts dt:text-is("Last user activity") + dd')).toMatch(/^\d\d:\d\d:\d\d$/);
  });

  it('shows health: media, sessions running and hibernated, streams, config version', async () => {
    await page.goto(`${url}/console#/health`);
    await page.waitForSelector('#counts dt');
    const counts = await page.textContent('#counts');
    expect(counts).toContain('sessions running');
    expect(counts).toContain('config version');
    expect(await page.textContent('#media-configured')).toContain('not configured');
    expect(await page.textContent('#health-body')).toContain('ok');
    await screenshot(page, 'health');
  });

  it('says when the service stops answering, dims the last data shown, and clears both when it answers again', async () => {
    const unreachable = (path: string) =>
      page.route(
        (address) => address.pathname === path,
        (route) => route.abort('connectionrefused'),
      );
    const problem = () => page.textContent('main .problem');

    await page.goto(`${url}/console#/health`);
    await page.waitForSelector('#counts dt');
    await unreachable('/api/status');
    await page.waitForFunction(() =>
      document.querySelector('main .problem')?.textContent?.startsWith('Service unreachable since'),
    );
    expect(await problem()).toMatch(
      /^Service unreachable since \d\d:\d\d:\d\d; showing the last data, loaded at \d\d:\d\d:\d\d\.$/,
    );
    expect(await page.getAttribute('#health-content', 'class')).toContain('stale');
    await page.unrouteAll();
    await page.waitForFunction(() => document.querySelector('main .problem')?.textContent === '');
    expect(await page.getAttribute('#health-content', 'class')).not.toContain('stale');

    await page.goto(`${url}/console#/sessions`);
    await page.waitForSelector('#sessions-table tbody tr');
    await unreachable('/api/sessions');
    await page.waitForFunction(() =>
      document.querySelector('main .problem')?.textContent?.startsWith('Service unreachable since'),
    );
    expect(await page.getAttribute('#sessions-content', 'class')).toContain('stale');
    await screenshot(page, 'unreachable');
    await page.unrouteAll();
    await page.waitForFunction(() => !document.querySelector('#sessions-content')?.classList.contains('stale'));
    expect(await problem()).toBe('');
  });

  it("shows a session's calls: outcome, summary and the masked transcript", async () => {
    const session = 'e2e-call';
    await api('/v1/assistant/session/start', { session_id: session, user_id: 'e2e-user', screen: 'pan_details' });
    await api('/v1/assistant/consent', {
      session_id: session,
      decision: 'given',
      notice_version: 'default-1',
      language: 'en',
    });
    await api('/v1/events', {
      session_id: session,
      event: 'voice_conversation_turn',
      properties: { role: 'agent', text: 'How can I help with your PAN?' },
    });
    await api('/v1/events', {
      session_id: session,
      event: 'voice_conversation_turn',
      properties: { role: 'user', text: 'my PAN is ABCPE1234F' },
    });
    await api('/v1/assistant/session/stop', { session_id: session });
    await page.goto(`${url}/console#/sessions/${session}`);
    await page.waitForSelector('#session-calls .call .summary');
    const text = await page.textContent('#session-calls');
    expect(text).toContain('How can I help with your PAN?');
    expect(text).toContain('my PAN is');
    expect(text).not.toContain('ABCPE1234F');
    expect(await page.textContent('#session-calls .call h4 .badge')).toBe('unresolved');
    expect(await page.$$eval('#session-calls .turn', (turns) => turns.length)).toBe(2);
    await screenshot(page, 'session-calls');
    await page.goto(`${url}/console#/health`);
    await page.waitForSelector('#deliveries tbody tr');
    expect(await page.textContent('#deliveries')).toContain('set WEBHOOK_URL');
  });

  it('has no serious accessibility violations in any view', async () => {
    for (const view of [
      'activity',
      'sessions',
      'sessions/e2e-voice',
      'sessions/e2e-call',
      'health',
      'nosuchview',
      'sessions/e2e-nope',
    ]) {
      await page.goto(`${url}/console#/${view}`);
      await page.waitForSelector('main h2');
      await page.waitForTimeout(0);
      expect({ view, violations: await seriousViolations(page) }).toEqual({ view, violations: [] });
    }
  });
});

describe('the session page with media configured (a LiveKit stand-in)', () => {
  let lk: LiveKitStandIn;
  let service: ReturnType<typeof startService>;
  let url: string;
  let browser: Browser;
  let page: Page;

  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'X-API-Key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const voiceFact = () => page.textContent('#session-facts dt:text-is("Voice") + dd');
  const voiceFactBecomes = (state: string) =>
    page.waitForFunction(
      (expected) =>
        [...document.querySelectorAll('#session-facts dt')].find((dt) => dt.textContent === 'Voice')?.nextElementSibling
          ?.textContent === expected,
      state,
    );

  beforeAll(async () => {
    lk = await startLiveKitStandIn();
    // Room calls held for a while must not time out (3 s by default) before the page looks.
    service = startService({
      API_KEY: KEY,
      RATE_LIMIT_PER_MINUTE: '0',
      MEDIA_REQUEST_TIMEOUT_SECONDS: '10',
      SHUTDOWN_GRACE_SECONDS: '30',
      ...lk.env(),
    });
    url = await service.url;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1360, height: 860 } });
    await page.addInitScript((key) => sessionStorage.setItem('kyc-console-api-key', key), KEY);
  });

  afterAll(async () => {
    await browser?.close();
    service?.child.kill('SIGTERM');
    await lk?.close();
  });

  it('says voice is starting or stopping while it is, as the voice region says', async () => {
    expect(
      (await post('/v1/events', { session_id: 'e2e-media', event: 'screen_view', screen: 'pan_details' })).status,
    ).toBe(200);
    const creating = lk.holdNext('CreateRoom');
    const started = post('/v1/assistant/session/start', { session_id: 'e2e-media', screen: 'pan_details' });
    await creating.arrived;
    await page.goto(`${url}/console#/sessions/e2e-media`);
    await page.waitForSelector('[data-state-id="session.voice.starting"].current');
    expect(await voiceFact()).toBe('starting');
    creating.release();
    expect((await started).status).toBe(200);
    await voiceFactBecomes('active');

    const deleting = lk.holdNext('DeleteRoom');
    const stopped = post('/v1/assistant/session/stop', { session_id: 'e2e-media' });
    await deleting.arrived;
    await page.waitForSelector('[data-state-id="session.voice.stopping"].current');
    expect(await voiceFact()).toBe('stopping');
    deleting.release();
    expect((await stopped).status).toBe(200);
    await voiceFactBecomes('inactive');
  });
});
