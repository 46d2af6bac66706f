// A kick end to end: the real mino-server with its admin listener on loopback,
// the page in real Chromium playing on it, and the operator's kick through the
// admin API (as the console sends it). The page must show the operator's
// reason over the world, stop, and not reconnect by itself: no new socket, no
// reconnect scheduled, and no player of its name on the server again.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MinoStats } from '../src/debug/hook.js';
import { until } from './harness/bot.js';
import { launchChromium, pageStats } from './harness/browser.js';
import { startServer, type RunningServer } from './harness/server.js';

const NAME = 'kick-e2e';
const REASON = 'spamming the chat';
/**
 * Frames the page draws after the kick while it must stay away: well past the
 * longest a dropped page waits before its first reconnect (FIRST_RETRY_JITTER_MS,
 * 500 ms, then 100 ms to rejoin as a new player) at the page's frame rate.
 */
const WATCH_MS = 1500;

let server: RunningServer;
let admin = '';
let browser: Browser;
let page: Page;

function stats(): Promise<MinoStats> {
  return pageStats(page);
}

/** The players of the place whose name or id matches `q`, through the admin API. */
async function search(q: string): Promise<{ id: number; name: string }[]> {
  const res = await fetch(`http://${admin}/admin/api/players?q=${encodeURIComponent(q)}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { players: { id: number; name: string }[] }).players;
}

beforeAll(async () => {
  server = await startServer(['--admin-listen', '127.0.0.1:0', '--busy-lateness-ms', '0']);
  admin = await until('the admin address', () => /admin on http:\/\/(\S+)/.exec(server.output())?.[1], 10_000);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 800, height: 600 } });
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(server.http);
  await page.fill('#name-input', NAME);
  await page.press('#name-input', 'Enter');
  await until('the page playing', async () => {
    const s = await stats();
    return s.connection === 'live' && s.ownPlayerId > 0 && s.frames > 5;
  }, 20_000);
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await server?.stop();
});

describe('a player kicked by an operator', () => {
  it("sees the operator's reason and stays away", async () => {
    const before = await stats();
    expect((await search(NAME)).map((p) => p.id)).toEqual([before.ownPlayerId]);
    const res = await fetch(`http://${admin}/admin/api/players/${before.ownPlayerId}/kick`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: REASON }),
    });
    expect(res.status, await res.clone().text()).toBe(202);

    // The reason, over the world (not only a chat line).
    const panel = page.locator('#panel');
    await panel.waitFor({ state: 'visible', timeout: 5000 });
    expect(await panel.textContent()).toBe(`An operator removed you from the game: “${REASON}”. Reload the page to join again.`);
    const stopped = await stats();
    expect(stopped.connection).toBe('stopped');
    expect(stopped.reconnectPending, 'no reconnect scheduled').toBe(false);

    // And it stays away: the page draws on for WATCH_MS (its own clock) without opening a socket.
    const frames = await page.evaluate(async (ms) => {
      const start = performance.now();
      let n = 0;
      await new Promise<void>((done) => {
        const step = (t: number): void => {
          n++;
          if (t - start >= ms) done();
          else requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      });
      return n;
    }, WATCH_MS);
    expect(frames).toBeGreaterThan(5);
    const after = await stats();
    expect(after.sockets, 'no socket opened after the kick').toBe(before.sockets);
    expect(after.connection).toBe('stopped');
    expect(after.reconnectPending).toBe(false);
    expect(await search(NAME), 'no player of that name on the server').toEqual([]);
    expect(await page.locator('#name-form').isHidden(), 'no name form: joining again is a reload').toBe(true);
    expect(await page.locator('#hud').textContent()).toMatch(/disconnected/);
  });
});
