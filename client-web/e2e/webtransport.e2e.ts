// WebTransport end to end: the real mino-server with `--webtransport-listen
// 127.0.0.1:0` (a self-signed certificate, its hash offered at
// /webtransport), real Chromium and bots on real websockets. The page plays
// over WebTransport by itself (the HUD says so; the server counts a
// session): it sees a walking bot, walks (the bot sees it move; the own
// player is predicted, without snaps), chats both ways, and is kicked as
// over the websocket (the close code from the Error on the stream). Chromium opens
// the session with the harness's `--disable-quic` and without it. Then the
// fallbacks, each a fresh page: WebTransport refused (the offer's hash
// replaced by one that does not match), not offered (a server without the
// flag), not in the browser, an offered UDP port that never answers (UDP
// blocked) and an offer that never comes (the page plays over the websocket
// after the bound): each plays over the websocket and the HUD says why. Every wait is bounded and waits on page or server state.
import { createSocket } from 'node:dgram';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MinoStats } from '../src/debug/hook.js';
import { WEBTRANSPORT_DEADLINE_MS } from '../src/net/dial.js';
import { Bot, keepWalking, until } from './harness/bot.js';
import { launchChromium, pageStats } from './harness/browser.js';
import { metric, startServer, type RunningServer } from './harness/server.js';

const VIEW = { width: 900, height: 600 };
/** Not about "server busy": a busy machine's late ticks must not refuse anyone. */
const BUSY_OFF = ['--busy-lateness-ms', '0'];

let server: RunningServer;
/** A server without --webtransport-listen. */
let plain: RunningServer;
let browser: Browser;
let quicBrowser: Browser;
let walker: Bot;
let observer: Bot;
const pages: Page[] = [];

/** The page's test-hook stats. */
function stats(page: Page): Promise<MinoStats> {
  return pageStats(page);
}

function hud(page: Page): Promise<string> {
  return page.locator('#hud').textContent().then((t) => t ?? '');
}

/** Opens a page at `url` in `on`, plays as `name` (set up by `prepare` first), and waits until it is live and drawing. */
async function play(on: Browser, url: string, name: string, prepare?: (page: Page) => Promise<unknown>): Promise<Page> {
  const page = await on.newPage({ viewport: VIEW });
  pages.push(page);
  page.on('pageerror', (e) => console.error('page error:', e));
  await prepare?.(page);
  await page.goto(url);
  await page.fill('#name-input', name);
  await page.press('#name-input', 'Enter');
  await until(`${name} live and drawing`, async () => {
    const s = await stats(page);
    return s.connection === 'live' && s.ownPlayerId > 0 && s.frames > 5 && s.transport !== '';
  }, 20_000);
  return page;
}

beforeAll(async () => {
  server = await startServer([...BUSY_OFF, '--webtransport-listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0']);
  plain = await startServer(BUSY_OFF);
  walker = await Bot.connect(server.ws, 'walker');
  observer = await Bot.connect(server.ws, 'observer');
  browser = await launchChromium();
  quicBrowser = await launchChromium([], { quic: true });
});

afterAll(async () => {
  await Promise.allSettled([walker, observer].map((b) => b?.close()));
  await browser?.close().catch(() => undefined);
  await quicBrowser?.close().catch(() => undefined);
  await Promise.allSettled([server, plain].map((s) => s?.stop()));
});

describe('webtransport', () => {
  it('plays over WebTransport where the shard offers it: the HUD says so, the server holds a session', async () => {
    const page = await play(browser, server.http, 'wt-player');
    const s = await stats(page);
    expect([s.transport, s.fallback]).toEqual(['webtransport', '']);
    // The place's player count comes once a second: wait for the HUD to have it and say WebTransport.
    const line = /^ping (\d+ ms|–) · shard [0-9a-f]{8} · players 3 · delay (\d+ ms|–) · \d+ fps · cpu [\d.]+ ms · WebTransport$/;
    await until('the HUD counting 3 players and saying WebTransport', async () => line.test(await hud(page)) || null, 5000);
    expect(await hud(page)).toMatch(line);
    expect(await metric(server, 'mino_webtransport_sessions')).toBe(1);
    await until('view frames as datagrams', async () => (await metric(server, 'mino_webtransport_datagrams_total')) > 0 || null, 5000);
  });

  it('sees a bot walk in the datagrams\' view frames, drawn where the server has it', async () => {
    const page = pages[0] as Page;
    const stop = keepWalking(walker);
    try {
      const first = await until('the walker drawn', () => page.evaluate((id) => window.__mino?.drawnPosition(id) ?? null, walker.id));
      await until('the walker drawn moving', async () => {
        const p = await page.evaluate((id) => window.__mino?.drawnPosition(id) ?? null, walker.id);
        return p && Math.abs(p[0] - first[0]) > 5 ? p : null;
      });
      const before = (await stats(page)).cellFrames;
      await until('more cells taken', async () => (await stats(page)).cellFrames > before + 10 || null);
    } finally {
      stop();
    }
    const s = await stats(page);
    expect(s.decodeErrors).toBe(0);
    expect(s.resyncs).toBe(0);
    // Deltas in the datagrams, held by the lossy rule (the Welcome granted them).
    expect(s.datagramDeltas).toBe(true);
  });

  it('asks a resync on the stream as a page that missed a change does: the shard takes it, the page draws on', async () => {
    const page = pages[0] as Page;
    const before = await metric(server, 'mino_webtransport_resyncs_total');
    expect(await page.evaluate(() => window.__mino?.askResync() ?? false)).toBe(true);
    await until('the shard taking the resync', async () => (await metric(server, 'mino_webtransport_resyncs_total')) === before + 1 || null, 5000);
    // The view comes whole again on the same session: more cells taken, no new transport.
    const s = await stats(page);
    await until('cells taken after it', async () => (await stats(page)).cellFrames > s.cellFrames || null, 5000);
    const after = await stats(page);
    expect([after.sockets, after.resyncs, after.decodeErrors, after.connection]).toEqual([s.sockets, 0, 0, 'live']);
  });

  it('walks with the keys: the server moves the player, the page predicts it without snaps', async () => {
    const page = pages[0] as Page;
    const id = (await stats(page)).ownPlayerId;
    await page.locator('#world').click({ position: { x: 10, y: VIEW.height - 10 } });
    const [x0, y0] = await until('the page player at the observer', () => observer.position(id));
    const key = x0 > 500 ? 'ArrowLeft' : 'ArrowRight';
    await page.keyboard.down(key);
    try {
      await until('the page player walking on the server', () => {
        const p = observer.position(id);
        return p && Math.abs(p[0] - x0) > 40 ? p : null;
      });
    } finally {
      await page.keyboard.up(key);
    }
    const stopped = await until('the page player stopped on the server', async () => {
      const a = observer.position(id);
      const frames = observer.cellFrames;
      await until('fresh cells', () => observer.cellFrames >= frames + 3);
      const b = observer.position(id);
      return a && b && a[0] === b[0] ? b : null;
    });
    expect(Math.abs(stopped[1] - y0)).toBeLessThan(1);
    // Drawn (predicted) where the server has it once stopped, and never snapped.
    const drawn = await until('the own player drawn where the server has it', async () => {
      const p = await page.evaluate((pid) => window.__mino?.drawnPosition(pid) ?? null, id);
      return p && Math.hypot(p[0] - stopped[0], p[1] - stopped[1]) < 1 ? p : null;
    });
    expect(drawn).not.toBeNull();
    const s = await stats(page);
    expect(s.predictionSamples).toBeGreaterThan(0);
    expect(s.predictionSnaps).toBe(0);
  });

  it('chats both ways over the stream', async () => {
    const page = pages[0] as Page;
    const id = (await stats(page)).ownPlayerId;
    await page.fill('#chat-input', 'hello over quic');
    await page.press('#chat-input', 'Enter');
    const got = await until('the line at a bot', () => observer.chats.find((c) => c.fromId === id));
    expect(got.text).toBe('hello over quic');
    observer.say('hello back');
    await until('the bot line in the page', () => page.locator('#chat-log .text', { hasText: 'hello back' }).count());
  });

  it('opens the session without --disable-quic too (that flag leaves WebTransport on)', async () => {
    const page = await play(quicBrowser, server.http, 'wt-quic');
    expect((await stats(page)).transport).toBe('webtransport');
    await until('two sessions on the server', async () => (await metric(server, 'mino_webtransport_sessions')) === 2 || null, 5000);
    await page.close();
  });

  it("is kicked as over the websocket: the close code comes in the stream's Error, the page says why and stays away", async () => {
    const page = pages[0] as Page;
    const id = (await stats(page)).ownPlayerId;
    const res = await fetch(`http://${server.admin ?? ''}/admin/api/players/${id}/kick`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'testing over quic' }),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    const panel = page.locator('#panel');
    await panel.waitFor({ state: 'visible', timeout: 5000 });
    expect(await panel.textContent()).toBe('An operator removed you from the game: “testing over quic”. Reload the page to join again.');
    const s = await stats(page);
    expect([s.connection, s.reconnectPending, s.transport]).toEqual(['stopped', false, 'webtransport']);
    await until('the session gone from the server', async () => (await metric(server, 'mino_webtransport_sessions')) === 0 || null, 5000);
  });
});

describe('webtransport fallback', () => {
  /** Plays a fresh page and checks it is on the websocket for `fallback`, saying `why` in the HUD. */
  async function fellBack(page: Page, fallback: string, why: string): Promise<void> {
    const s = await stats(page);
    expect([s.transport, s.fallback]).toEqual(['websocket', fallback]);
    await until(`the HUD saying ${why}`, async () => (await hud(page)).endsWith(` · WebSocket (${why})`) || null, 5000);
    await page.close();
  }

  it('takes the websocket when the session is refused (a hash that does not match)', async () => {
    const page = await play(browser, server.http, 'wt-refused', (p) =>
      p.route('**/webtransport', async (route) => {
        const offer = (await (await route.fetch()).json()) as { certificateHashes: { value: string }[] };
        for (const h of offer.certificateHashes) h.value = '00'.repeat(32);
        await route.fulfill({ json: offer });
      }),
    );
    await fellBack(page, 'refused', 'WebTransport refused');
  });

  it('takes the websocket when the shard does not offer it (204, no offer)', async () => {
    const page = await play(browser, plain.http, 'wt-plain');
    await fellBack(page, 'not-offered', 'WebTransport not offered');
  });

  it('takes the websocket in a browser without WebTransport', async () => {
    const page = await play(browser, server.http, 'wt-none', (p) => p.addInitScript(() => Reflect.deleteProperty(window, 'WebTransport')));
    // It asked for datagram deltas as every page does: a websocket is not granted them, its frames held in order.
    expect((await stats(page)).datagramDeltas).toBe(false);
    await fellBack(page, 'unsupported', 'no WebTransport in this browser');
  });

  it('takes the websocket when the offered UDP port never answers (UDP blocked), after the bound', async () => {
    // A bound UDP socket that reads and never answers: no ICMP error, the QUIC handshake just waits.
    const silent = createSocket('udp4');
    let datagrams = 0;
    silent.on('message', () => datagrams++);
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', r));
    const port = silent.address().port;
    try {
      const started = Date.now();
      const page = await play(browser, server.http, 'wt-blocked', (p) =>
        p.route('**/webtransport', async (route) => {
          const offer = (await (await route.fetch()).json()) as { addr: string; port: number };
          await route.fulfill({ json: { ...offer, addr: `127.0.0.1:${port}`, port } });
        }),
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(WEBTRANSPORT_DEADLINE_MS);
      expect(datagrams, 'the page tried the silent port').toBeGreaterThan(0);
      await fellBack(page, 'no-answer', 'WebTransport did not answer');
    } finally {
      silent.close();
    }
  });

  it('takes the websocket when no offer comes within the bound', async () => {
    let asked = 0;
    const started = Date.now();
    const page = await play(browser, server.http, 'wt-silent', (p) =>
      p.route('**/webtransport', () => {
        asked++; // never answered
      }),
    );
    const tookMs = Date.now() - started;
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(tookMs).toBeGreaterThanOrEqual(WEBTRANSPORT_DEADLINE_MS);
    await fellBack(page, 'no-answer', 'WebTransport did not answer');
  });
});
