// "Server busy": a full server refuses the page with Busy; the page says so,
// waits the given delay and gets in once there is room, without a reload.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MinoStats } from '../src/debug/hook.js';
import { Bot, until } from './harness/bot.js';
import { launchChromium } from './harness/browser.js';
import { startServer, type RunningServer } from './harness/server.js';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  // Only the player limit refuses here: on a loaded machine late ticks would
  // also refuse (the lateness rule), and the page would need a third socket.
  server = await startServer(['--max-players', '1', '--busy-retry-ms', '1500', '--busy-lateness-ms', '0']);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await server?.stop();
});

describe('a full server', () => {
  it('shows "server busy" and retries after retry_after_ms', async () => {
    const bot = await Bot.connect(server.ws, 'first');
    const page = await browser.newPage();
    try {
      await page.goto(server.http);
      await page.fill('#name-input', 'second');
      await page.press('#name-input', 'Enter');
      const badge = page.locator('#badge:not([hidden])', { hasText: 'server busy' });
      await badge.waitFor({ timeout: 5000 });
      const shownAt = Date.now();
      expect(await badge.textContent()).toMatch(/retrying in \d s/);
      await bot.close();
      const stats = await until('the page admitted', async () => {
        const s = await page.evaluate(() => JSON.parse(JSON.stringify(window.__mino?.stats)) as MinoStats);
        return s.connection === 'live' ? s : null;
      }, 10_000);
      // Not before the server's delay (1.5 s plus its 0-50 %), not much after it (plus our 0-20 %).
      const waited = Date.now() - shownAt;
      expect(waited).toBeGreaterThan(1000);
      expect(waited).toBeLessThan(3 * 1500 * 1.2);
      expect(stats.sockets).toBe(2);
      expect(stats.ownPlayerId).toBeGreaterThan(0);
      expect(await page.locator('#badge').isHidden()).toBe(true);
    } finally {
      await page.close();
      await bot.close();
    }
  });
});
