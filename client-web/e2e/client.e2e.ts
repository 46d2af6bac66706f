// The browser client end to end: the real mino-server serving the built
// client, real Chromium drawing with WebGPU (SwiftShader), bots on real
// websockets. Each test's waits are bounded; the server and the browser are
// stopped at the end whatever happened.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MinoStats } from '../src/debug/hook.js';
import { Bot, until } from './harness/bot.js';
import { launchChromium } from './harness/browser.js';
import { OTHER_BODY, OWN_BODY, Screenshot } from './harness/pixels.js';
import { startServer, type RunningServer } from './harness/server.js';

const BOTS = 5;
const VIEW = { width: 960, height: 640 };

let server: RunningServer;
let browser: Browser;
let page: Page;
const bots: Bot[] = [];
let observer: Bot;

function stats(): Promise<MinoStats> {
  return page.evaluate(() => {
    const s = window.__mino?.stats;
    if (!s) throw new Error('no window.__mino');
    return JSON.parse(JSON.stringify(s)) as MinoStats;
  });
}

async function ownId(): Promise<number> {
  return (await stats()).ownPlayerId;
}

/** The page player's server-side position, as the observer bot last saw it. */
async function serverPosition(): Promise<[number, number]> {
  const id = await ownId();
  return until(`server position of player ${id}`, () => observer.position(id));
}

/** Waits for a few snapshots so positions are current. */
async function settle(ms = 300): Promise<void> {
  const before = observer.snapshots;
  await new Promise((r) => setTimeout(r, ms));
  await until('fresh snapshots', () => observer.snapshots >= before + 3);
}

beforeAll(async () => {
  server = await startServer();
  for (let i = 0; i < BOTS; i++) bots.push(await Bot.connect(server.ws, `bot-${i}`));
  observer = bots[0] as Bot;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: VIEW });
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(server.http);
  await page.fill('#name-input', 'e2e-player');
  await page.press('#name-input', 'Enter');
  await until('the page welcomed and drawing', async () => {
    const s = await stats();
    return s.ownPlayerId > 0 && s.frames > 5 && s.instances === BOTS + 1;
  }, 20_000);
});

afterAll(async () => {
  await Promise.allSettled(bots.map((b) => b.close()));
  await browser?.close().catch(() => undefined);
  await server?.stop();
});

describe('browser client', () => {
  it('draws with a WebGPU adapter (SwiftShader here)', async () => {
    const s = await stats();
    const adapter = `${s.adapter.architecture} ${s.adapter.vendor} ${s.adapter.description}`;
    expect(adapter).toMatch(/swiftshader/i);
    expect(s.gpuFailure).toBeNull();
    expect(s.deviceGeneration).toBe(1);
  });

  it('remembers the name and connects to /ws on its own origin', async () => {
    expect(await page.evaluate(() => localStorage.getItem('mino.name'))).toBe('e2e-player');
    // The list redraws at most twice a second.
    const names = await until('every player listed', async () => {
      const items = await page.locator('#players li').allTextContents();
      return items.length === BOTS + 1 ? items : null;
    });
    expect(names).toContain('e2e-player (you)');
    for (let i = 0; i < BOTS; i++) expect(names).toContain(`bot-${i}`);
  });

  it('draws every player in one instanced draw call, visible in the pixels', async () => {
    // Zoom out until the whole world fits, with the real mouse wheel.
    await page.mouse.move(VIEW.width / 2, VIEW.height / 2);
    for (let i = 0; i < 6; i++) await page.mouse.wheel(0, 800);
    await settle();
    const s = await stats();
    expect(s.instances).toBe(BOTS + 1);
    expect(s.bodyDrawCalls).toBe(1);
    expect(s.drawCalls).toBe(2); // the floor and the bodies
    // Read the canvas's own pixels: hide the panels and name labels floating over it.
    const overlays = await page.addStyleTag({ content: '#labels, #hud, #side { visibility: hidden !important; }' });
    const shot = new Screenshot(await page.screenshot({ type: 'png' }));
    await overlays.evaluate((el) => el.parentNode?.removeChild(el));
    // Every bot is orange where the server says it stands...
    for (const bot of bots) {
      const [x, y] = await until(`position of bot ${bot.id}`, () => observer.position(bot.id));
      const at = await page.evaluate(([wx, wy]) => window.__mino?.worldToScreen(wx, wy), [x, y] as const);
      expect(at, `bot ${bot.id} on screen`).toBeTruthy();
      const [sx, sy] = at as [number, number];
      expect(shot.near(sx, sy, OTHER_BODY), `bot ${bot.id} drawn at ${sx},${sy}: ${shot.at(sx, sy).join(',')}`).toBe(true);
    }
    // ...the page's own player is cyan...
    const [ox, oy] = await serverPosition();
    const own = (await page.evaluate(([wx, wy]) => window.__mino?.worldToScreen(wx, wy), [ox, oy] as const)) as [number, number];
    expect(shot.near(own[0], own[1], OWN_BODY, 3)).toBe(true);
    // ...and there are as many orange bodies as bots (overlaps aside), and nothing orange elsewhere.
    expect(shot.blobs(OTHER_BODY)).toBeGreaterThanOrEqual(BOTS - 1);
    expect(shot.blobs(OTHER_BODY)).toBeLessThanOrEqual(BOTS);
    expect(shot.blobs(OWN_BODY)).toBe(1);
  });

  it('a held key moves the player on the server, and releasing it stops', async () => {
    await page.locator('#world').click({ position: { x: 10, y: VIEW.height - 10 } });
    const [x0, y0] = await serverPosition();
    // Walk away from the nearer edge so the bounds do not stop us.
    const key = x0 > 500 ? 'ArrowLeft' : 'ArrowRight';
    await page.keyboard.down(key);
    await new Promise((r) => setTimeout(r, 700));
    await page.keyboard.up(key);
    await settle();
    const [x1, y1] = await serverPosition();
    const moved = key === 'ArrowLeft' ? x0 - x1 : x1 - x0;
    expect(moved).toBeGreaterThan(40);
    expect(moved).toBeLessThan(140);
    expect(Math.abs(y1 - y0)).toBeLessThan(1);
    await settle();
    const [x2] = await serverPosition();
    expect(x2).toBeCloseTo(x1, 3);
    // WASD works too: W walks up (+y) or S down.
    const wKey = y1 > 500 ? 'KeyS' : 'KeyW';
    await page.keyboard.down(wKey);
    await new Promise((r) => setTimeout(r, 500));
    await page.keyboard.up(wKey);
    await settle();
    const [, y3] = await serverPosition();
    expect(Math.abs(y3 - y1)).toBeGreaterThan(25);
  });

  it('stops walking when the window loses focus', async () => {
    const [x0] = await serverPosition();
    const key = x0 > 500 ? 'ArrowLeft' : 'ArrowRight';
    await page.keyboard.down(key);
    await new Promise((r) => setTimeout(r, 300));
    await page.evaluate(() => window.dispatchEvent(new Event('blur')));
    await settle();
    const [x1] = await serverPosition();
    await settle(500);
    const [x2] = await serverPosition();
    await page.keyboard.up(key);
    expect(Math.abs(x1 - x0)).toBeGreaterThan(5);
    expect(x2).toBeCloseTo(x1, 3);
  });

  it('sends chat that reaches a bot, and shows network text as text', async () => {
    const id = await ownId();
    await page.fill('#chat-input', 'hello from the browser');
    await page.press('#chat-input', 'Enter');
    const got = await until('the chat line at a bot', () => bots[1]?.chats.find((c) => c.fromId === id));
    expect(got.text).toBe('hello from the browser');
    expect(got.name).toBe('e2e-player');
    const evil = '<img src=x onerror="window.__pwned=1"><b>bold</b>';
    bots[2]?.say(evil);
    await until('the bot line in the page', () => page.locator('#chat-log .text', { hasText: 'bold' }).count());
    const texts = await page.locator('#chat-log .text').allTextContents();
    expect(texts).toContain(evil);
    expect(await page.locator('#chat-log img, #chat-log b').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it('shows ping, players, interpolation delay and frame rate, settling near 100 ms', async () => {
    await until('a ping measured', async () => Number.isFinite((await stats()).pingMs));
    const hud = await page.locator('#hud').textContent();
    expect(hud).toMatch(new RegExp(`^ping \\d+ ms · players ${BOTS + 1} · delay \\d+ ms · \\d+ fps · cpu [\\d.]+ ms$`));
    const s = await stats();
    expect(s.interpDelayMs).toBeGreaterThanOrEqual(50);
    expect(s.interpDelayMs).toBeLessThanOrEqual(250);
    expect(s.fps).toBeGreaterThan(5);
    expect(s.decodeErrors).toBe(0);
    expect(s.bufferedSnapshots).toBeLessThanOrEqual(32);
  });

  it('names the player under the mouse', async () => {
    const bot = bots[3] as Bot;
    const [x, y] = await until('bot 3 position', () => observer.position(bot.id));
    const at = (await page.evaluate(([wx, wy]) => window.__mino?.worldToScreen(wx, wy), [x, y] as const)) as [number, number];
    await page.mouse.move(at[0], at[1]);
    await until('a label with the bot name', () => page.locator('#labels .label:not([hidden])', { hasText: 'bot-3' }).count());
  });

  it('recovers from a lost WebGPU device within about a second', async () => {
    const before = await stats();
    await page.evaluate(() => window.__mino?.loseDevice());
    const s = await until('a new device drawing', async () => {
      const now = await stats();
      return now.deviceGeneration === 2 && now.frames > before.frames + 10 && now.instances === BOTS + 1 ? now : null;
    }, 5000);
    expect(s.lastRecoveryMs).toBeLessThan(1500);
    expect(s.bodyDrawCalls).toBe(1);
    const overlays = await page.addStyleTag({ content: '#labels, #hud, #side { visibility: hidden !important; }' });
    const shot = new Screenshot(await page.screenshot({ type: 'png' }));
    await overlays.evaluate((el) => el.parentNode?.removeChild(el));
    expect(shot.blobs(OWN_BODY)).toBe(1);
    expect(shot.blobs(OTHER_BODY)).toBeGreaterThanOrEqual(BOTS - 1);
  });

  it('after the page was frozen it is back at newest minus the delay within half a second', async () => {
    const cdp = await page.context().newCDPSession(page);
    const before = await stats();
    // The render clock slews (not jumps) over errors below 50 ms, so it may trail by that much.
    const slack = 50;
    expect(before.renderLagMs).toBeGreaterThan(0);
    expect(before.renderLagMs).toBeLessThanOrEqual(before.interpDelayMs + slack);
    // Frozen: no task runs, snapshots pile up in the browser and arrive as one late burst.
    await cdp.send('Page.setWebLifecycleState', { state: 'frozen' });
    await new Promise((r) => setTimeout(r, 2000));
    await cdp.send('Page.setWebLifecycleState', { state: 'active' });
    await new Promise((r) => setTimeout(r, 500));
    const s = await stats();
    expect(s.frames).toBeGreaterThan(before.frames);
    expect(s.bufferedSnapshots).toBeLessThanOrEqual(32);
    // Drawn at newest minus the delay: not behind by the frozen 2 s, never ahead of the newest.
    expect(s.renderLagMs).toBeGreaterThan(0);
    expect(s.renderLagMs).toBeLessThanOrEqual(s.interpDelayMs + slack);
    expect(s.renderLagMs).toBeGreaterThan(s.interpDelayMs - 120);
    await cdp.detach();
  });

  it('keeps the view and reconnects (badge shown) when the server restarts', async () => {
    await page.evaluate(() => ((window as unknown as { __samePage: boolean }).__samePage = true));
    const framesBefore = (await stats()).frames;
    const addr = server.addr;
    await server.kill();
    await until('the reconnecting badge', () => page.locator('#badge:not([hidden])', { hasText: 'reconnecting' }).count(), 5000);
    expect((await stats()).instances).toBe(BOTS + 1); // the last view stays
    server = await startServer([], addr);
    const s = await until('live again', async () => {
      const now = await stats();
      return now.connection === 'live' && now.ownPlayerId > 0 ? now : null;
    }, 20_000);
    expect(s.sockets, JSON.stringify(s)).toBeGreaterThanOrEqual(2);
    expect(s.frames).toBeGreaterThan(framesBefore);
    expect(await page.evaluate(() => (window as unknown as { __samePage?: boolean }).__samePage)).toBe(true);
    expect(await page.locator('#badge').isHidden()).toBe(true);
  });
});

// Cluster failover (kill one shard of a two-shard cluster behind nginx and
// watch the page continue on the other) is in e2e/cluster.e2e.ts.
