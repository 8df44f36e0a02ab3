/**
 * The /docs page in a real browser (Chromium through playwright-core): it loads with no key and
 * with no request leaving the service, lists every operation, and "Try it out" sends the key
 * entered under "Authorize". Not part of `npm test` (it needs a browser); CHROMIUM_PATH names
 * the browser, /usr/bin/chromium by default. SCREENSHOT, when set, is where a screenshot goes.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiDocument } from '../../src/http/api-document.js';
import type { RunningServer } from '../../src/http/server.js';
import { createHarness, serve } from '../support/harness.js';

const KEY = 'docs-e2e-key';
let server: RunningServer;

beforeAll(async () => {
  server = await serve(createHarness({ env: { API_KEY: KEY } }));
});
afterAll(async () => {
  await server.close(0);
});

describe('GET /docs in a browser', () => {
  it('shows every operation offline and tries one with the key entered', async () => {
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
    try {
      const page = await browser.newPage();
      const elsewhere: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) elsewhere.push(request.url());
      });
      await page.goto(`${server.url}/docs`);
      await page.waitForSelector('.opblock');
      const shown = await page.locator('.opblock').count();
      const documented = Object.values((apiDocument() as { paths: Record<string, object> }).paths).reduce(
        (n, item) => n + Object.keys(item).length,
        0,
      );
      expect(shown).toBe(documented);

      await page.click('button.authorize');
      await page.fill('.auth-container input', KEY);
      await page.click('.auth-btn-wrapper button.authorize');
      await page.click('.btn-done');

      const features = page.locator('#operations-operations-getFeatureFlags');
      await features.locator('.opblock-summary').click();
      await features.locator('button.try-out__btn').click();
      const answered = page.waitForResponse((response) => response.url() === `${server.url}/api/features`);
      await features.locator('button.execute').click();
      const response = await answered;
      expect(response.status()).toBe(200);
      expect(response.request().headers()['x-api-key']).toBe(KEY);
      await features.locator('.responses-table .response-col_status').first().waitFor();
      if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT, fullPage: false });
      expect(elsewhere).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('shows each operation on one line at a desk, its summary short and its operation id beside it', async () => {
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${server.url}/docs`);
      await page.waitForSelector('.opblock-summary-operation-id');
      // Each operation's line: path, summary and operation id. A summary that is a paragraph made it three or four lines tall.
      const heights = await page.$$eval('.opblock-summary', (rows) =>
        rows.map((row) => ({
          id: row.querySelector('.opblock-summary-operation-id')?.textContent,
          height: row.getBoundingClientRect().height,
        })),
      );
      const oneLine = Math.min(...heights.map(({ height }) => height));
      expect(heights.filter(({ height }) => height > oneLine * 1.5)).toEqual([]);
      // For a person to look at, beside the console's pictures (test/e2e/console-sizes.e2e.ts).
      const folder = resolve(
        process.env.CONSOLE_SCREENSHOTS_DIR ?? 'test-results/console-screenshots',
        '..',
        'api-reference',
      );
      mkdirSync(folder, { recursive: true });
      await page.screenshot({ path: resolve(folder, 'docs-desk.png'), fullPage: false });
      console.info(`/docs screenshot in ${folder}`);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
