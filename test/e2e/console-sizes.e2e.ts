import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSimulation } from '../../scripts/simulator/simulation.js';
import { startService } from '../support/service-process.js';
import { launchChromium, seriousViolations } from './browser.js';

const KEY = 'console-sizes-key';

/** A desk and a phone: the sizes an operator opens the console at. */
const SIZES = [
  { name: 'desk', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/**
 * Every picture this file takes, for a person to look at: outside the repository's tracked files
 * (.gitignore), and printed at the end of the run. CONSOLE_SCREENSHOTS_DIR puts them elsewhere.
 */
const SHOTS = resolve(process.env.CONSOLE_SCREENSHOTS_DIR ?? 'test-results/console-screenshots');

describe('the console at a desk and on a phone, empty and with data', () => {
  let service: ReturnType<typeof startService>;
  let url: string;
  let browser: Browser;
  const taken: string[] = [];

  beforeAll(async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    service = startService({ API_KEY: KEY, RATE_LIMIT_PER_MINUTE: '0' });
    url = await service.url;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    service?.child.kill('SIGTERM');
    console.info(`console screenshots (${taken.length}) in ${SHOTS}`);
  });

  async function pageAt(size: (typeof SIZES)[number]): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: size.width, height: size.height } });
    await page.addInitScript((key) => sessionStorage.setItem('kyc-console-api-key', key), KEY);
    return page;
  }

  /** The page as far as two screens down: past that a long list only repeats its rows, and the picture would be too tall to read. */
  async function shoot(page: Page, name: string): Promise<void> {
    const path = join(SHOTS, `${name}.png`);
    const { width, height } = page.viewportSize()!;
    const tall = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.screenshot({ path, fullPage: true, clip: { x: 0, y: 0, width, height: Math.min(tall, 2 * height) } });
    taken.push(path);
  }

  async function visit(page: Page, hash: string, ready: string): Promise<void> {
    await page.goto(`${url}/console${hash}`);
    await page.waitForSelector(ready);
    // One more refresh of the polled views, so what is shown is what the service holds now.
    await page.waitForTimeout(300);
  }

  /** What the menus on the page offer: the one at the top, and a page's own (not-found). */
  const menus = (page: Page) =>
    page.$$eval('nav', (navs) =>
      navs.map((nav) => [...nav.querySelectorAll('a')].map((link) => link.getAttribute('href'))),
    );

  /**
   * What is wider than its box at this size and not plainly scrollable: the page itself, or any
   * element cut (its content wider than it) unless it scrolls sideways with its hint in sight.
   * Form fields scroll their own text, and the visually hidden caption is 1 px on purpose.
   */
  const cutOff = (page: Page) =>
    page.evaluate(() => {
      const found: string[] = [];
      const root = document.documentElement;
      if (root.scrollWidth > root.clientWidth)
        found.push(`the page scrolls sideways by ${root.scrollWidth - root.clientWidth} px`);
      for (const element of document.querySelectorAll<HTMLElement>('header *, main *')) {
        if (
          element.matches('input, select, textarea, .visually-hidden, .visually-hidden *') ||
          element.clientWidth === 0
        )
          continue;
        if (element.scrollWidth <= element.clientWidth + 1) continue;
        const style = getComputedStyle(element);
        const scrolls = style.overflowX === 'auto' || style.overflowX === 'scroll';
        const hint = element.closest('.scroll-frame')?.querySelector<HTMLElement>('.scroll-hint');
        const hinted = hint !== undefined && hint !== null && !hint.hidden && hint.getBoundingClientRect().height > 0;
        if (!(scrolls && hinted))
          found.push(
            `${element.tagName.toLowerCase()}#${element.id}.${element.className}: ${element.scrollWidth} px in ${element.clientWidth}${scrolls ? ', scrolls with no hint' : ', cut'}`,
          );
      }
      return found;
    });

  /** Every page shows the voice demo in its menus, nothing is cut at either size, and axe finds nothing serious. */
  async function checkLayout(page: Page, size: (typeof SIZES)[number], where: string): Promise<void> {
    for (const menu of await menus(page)) expect(menu, where).toContain('#/voice');
    expect({ where, cut: await cutOff(page) }).toEqual({ where, cut: [] });
    // Not only uncut: no word broken mid-token. A value with no space, hyphen or underscore to
    // break at, and short enough for a line (an id, `inactive`, `52s ago`), is drawn on one line.
    const broken = await page.$$eval('main td, main dd', (cells) =>
      cells
        .filter(
          (cell) => !cell.querySelector('dl, ul, ol, table, div, p') && /^[^\s_-]{1,30}$/.test(cell.textContent ?? ''),
        )
        .filter((cell) => {
          const lines = new Set<number>();
          const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const range = document.createRange();
            range.selectNodeContents(node);
            for (const rect of range.getClientRects()) lines.add(Math.round(rect.top));
          }
          return lines.size > 1;
        })
        .map((cell) => cell.textContent),
    );
    expect({ where, broken }).toEqual({ where, broken: [] });
    // The empty states and cards are read out as well as shown.
    expect({ where, violations: await seriousViolations(page) }).toEqual({ where, violations: [] });
  }

  it('says so above a table wider than its box, and stops saying so once it fits', async () => {
    const page = await pageAt(SIZES[1]);
    await visit(page, '#/health', '#counts dt');
    // As source text: vitest would rewrite a dynamic import() inside a function passed here.
    const hintShown = await page.evaluate(`(async () => {
      const { h, tableScroll } = await import('/console/dom.js');
      const cell = h('td', {}, 'wide');
      cell.style.minWidth = '900px';
      const frame = tableScroll('A wide table', h('table', {}, h('tbody', {}, h('tr', {}, cell))));
      document.querySelector('main').append(frame);
      const hint = () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(!frame.querySelector('.scroll-hint').hidden))));
      const wide = await hint();
      cell.style.minWidth = '10px';
      const narrow = await hint();
      frame.remove();
      return { wide, narrow };
    })()`);
    expect(hintShown).toEqual({ wide: true, narrow: false });
    await page.close();
  });

  it('shows every page of an empty service, each saying what would fill it', async () => {
    for (const size of SIZES) {
      const page = await pageAt(size);
      const where = (name: string) => `empty ${name} at ${size.width}×${size.height}`;

      await visit(page, '#/activity', '#no-activity:not([hidden])');
      expect(await page.textContent('#no-activity .empty-title')).toBe(
        'No activity yet. Items appear here as apps send events and ask for the assistant.',
      );
      // The command to run, for this very service, whole on a line of its own.
      expect(await page.textContent('#no-activity pre.command')).toBe(
        `npm run simulate -- --url ${url} --key <API key>`,
      );
      expect(await page.textContent('#no-activity')).toContain('docs/how-to/simulator.md');
      expect(await page.isVisible('#activity-table')).toBe(false);
      expect(await page.$$('#activity-table tbody tr')).toHaveLength(0);
      // Where new items go, in words: no "actor", no "readers", no reader's code name.
      const goesTo = await page.textContent('#activity-readers');
      expect(goesTo).toBe(
        'Each new item also goes to the metrics (/metrics), the flow recorder and every live page open (this one too).',
      );
      await shoot(page, `empty-activity-${size.name}`);
      await checkLayout(page, size, where('activity'));

      await visit(page, '#/sessions', '#no-sessions:not([hidden])');
      expect(await page.textContent('#no-sessions')).toMatch(/^No session yet\..*npm run simulate/);
      // Nothing is filtered: the page does not say that nothing matches.
      expect(await page.textContent('main')).not.toContain('matches');
      expect(await page.isVisible('#sessions-table')).toBe(false);
      await shoot(page, `empty-sessions-${size.name}`);
      await checkLayout(page, size, where('sessions'));

      await visit(page, '#/sessions/sim-5-3', 'main h2:text-is("No such session")');
      await shoot(page, `empty-session-${size.name}`);
      await checkLayout(page, size, where('session'));

      await visit(page, '#/handoffs', '#handoffs td.muted');
      expect(await page.textContent('#handoffs')).toContain(
        'No call is waiting for a person. A call shows here when its user asks for one',
      );
      await shoot(page, `empty-handoffs-${size.name}`);
      await checkLayout(page, size, where('handoffs'));

      await visit(page, '#/health', '#no-data:not([hidden])');
      expect(await page.textContent('#no-data')).toContain('npm run simulate');
      expect(await page.textContent('#counts dt:text-is("last activity id") + dd')).toBe('none yet');
      await shoot(page, `empty-health-${size.name}`);
      await checkLayout(page, size, where('health'));

      await visit(page, '#/voice', '#voice-form');
      expect(await page.textContent('#voice-participants')).toBe('Not in a room yet: press “Start and join”.');
      expect(await page.isVisible('#voice-timeline-empty')).toBe(true);
      await page.waitForSelector('#voice-media-note:has-text("No media server configured")');
      await shoot(page, `empty-voice-${size.name}`);
      await checkLayout(page, size, where('voice demo'));

      await visit(page, '#/no-such-page', 'main h2:text-is("No such page")');
      expect(await page.$$eval('main nav a', (links) => links.map((link) => link.textContent))).toEqual([
        'Live activity',
        'Sessions',
        'Handoffs',
        'Health',
        'Voice demo',
      ]);
      await shoot(page, `empty-not-found-${size.name}`);
      await checkLayout(page, size, where('not-found'));
      await page.close();
    }
  });

  it('shows every page with the simulator’s traffic, each screen in one spelling', async () => {
    const summary = await runSimulation({
      url,
      apiKey: KEY,
      sessions: 24,
      rate: 24,
      concurrency: 24,
      seed: 5,
      thinkMs: 20,
      timeoutMs: 10_000,
    });
    expect(summary.requests.failed).toBe(0);
    for (const size of SIZES) {
      const page = await pageAt(size);
      const where = (name: string) => `${name} with data at ${size.width}×${size.height}`;

      await visit(page, '#/activity', '#activity-table tbody tr');
      expect(await page.isVisible('#no-activity')).toBe(false);
      const said = await page.$$eval('#activity-table td.what', (cells) => cells.map((cell) => cell.textContent ?? ''));
      const screens = said.flatMap((text) =>
        [...text.matchAll(/\b(?:on|schema for) (\S+)/g)].map((match) => match[1]!),
      );
      expect(screens.length).toBeGreaterThan(20);
      expect(screens.filter((screen) => screen !== screen.toLowerCase())).toEqual([]);
      await shoot(page, `data-activity-${size.name}`);
      await checkLayout(page, size, where('activity'));

      await visit(page, '#/sessions', '#sessions-table tbody tr');
      expect(await page.isVisible('#no-sessions')).toBe(false);
      const cells = await page.$$eval('#sessions-table td[data-label="Screen"]', (tds) =>
        tds.map((td) => ({ shown: td.textContent ?? '', sent: td.getAttribute('title') })),
      );
      // React Native sends its screens in upper case (docs/how-to/simulator.md): some of these did.
      expect(cells.some(({ sent }) => sent !== null && /^sent as [A-Z_]+$/.test(sent))).toBe(true);
      expect(cells.filter(({ shown }) => shown !== shown.toLowerCase())).toEqual([]);
      await shoot(page, `data-sessions-${size.name}`);
      await checkLayout(page, size, where('sessions'));

      // A session that sent its screens in upper case, shown in the same spelling as the rest.
      const upper = cells.find(({ sent }) => sent !== null)!;
      const id = await page.$eval(
        `#sessions-table tr:has(td[title="${upper.sent}"]) td.session a`,
        (link) => link.textContent ?? '',
      );
      await visit(page, `#/sessions/${id}`, '#timeline li');
      expect(await page.textContent('#session-facts dt:text-is("Screen") + dd')).toBe(upper.shown);
      await shoot(page, `data-session-${size.name}`);
      await checkLayout(page, size, where('session'));

      await visit(page, '#/health', '#counts dt');
      expect(await page.isVisible('#no-data')).toBe(false);
      expect(await page.textContent('#counts dt:text-is("last activity id") + dd')).toMatch(/^\d+$/);
      await shoot(page, `data-health-${size.name}`);
      await checkLayout(page, size, where('health'));

      await visit(page, '#/voice', '#voice-form');
      await page.click('#voice-start');
      await page.waitForSelector('#voice-timeline li[data-kind="session_start"]');
      expect(await page.isVisible('#voice-timeline-empty')).toBe(false);
      // Not told to press Start again: the session is there, the room is what is missing.
      expect(await page.textContent('#voice-participants')).toBe('No room: the service has no media server.');
      await shoot(page, `data-voice-${size.name}`);
      await checkLayout(page, size, where('voice demo'));

      await visit(page, '#/sessions/no-such-session', 'main h2:text-is("No such session")');
      expect(await page.$$eval('main nav a', (links) => links.map((link) => link.getAttribute('href')))).toEqual([
        '#/activity',
        '#/sessions',
        '#/handoffs',
        '#/health',
        '#/voice',
      ]);
      await shoot(page, `data-not-found-${size.name}`);
      await checkLayout(page, size, where('not-found'));
      await page.close();
    }
  });
});
