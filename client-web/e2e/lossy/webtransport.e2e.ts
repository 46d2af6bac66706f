// Behind a lossy link: the page on WebTransport draws a walking bot without
// a freeze, and a page on a websocket after it (one page drawing at a time)
// is measured the same way and logged (with one bot its short TCP stalls mostly hide in the interpolation
// buffer; the loadgen's figure, benches/RESULTS.md section 16, is where the
// two transports differ). Runs only
// under `mino-link` (testkit/src/bin/mino-link.rs: a private network
// namespace behind the test kit's lossy link, 2 % of packets lost each way
// and a 40 ms round trip as scripts/test.sh runs it; `npm run e2e:lossy`):
// the shard listens on the link's near address and the page, the bots and
// WebTransport reach it at the far one, every packet through the link.
//
// A lost datagram costs its tick: the interpolation, 100 ms behind, bridges
// one lost tick and draws on; two in a row (about one 10 s span in 12 at
// 2 %) hold the drawing for about 50 ms. A lost TCP segment holds every
// later frame until it is resent (a retransmission timeout, 200 ms or more).
//
// The page on WebTransport takes deltas in its datagrams (held by the lossy
// rule, net/held.ts). A change of the walker's cell comes again in the next
// tick's chain, so a lost datagram costs a tick there too; two lost in a
// row leave the cell as it was until the page's Resync brings it whole, a
// round trip and a tick or so later. The test checks the shard took each
// Resync the page asked (none, most runs) and logs how many cells it
// missed; webtransport.e2e.ts checks a Resync end to end.
import { createSocket } from 'node:dgram';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MinoStats } from '../../src/debug/hook.js';
import { Bot, keepWalking, until } from '../harness/bot.js';
import { launchChromium, pageStats } from '../harness/browser.js';
import { metric, startServer, type RunningServer } from '../harness/server.js';
import { startTrace, stopTrace, type TraceSample } from '../harness/trace.js';

const NEAR = process.env.MINO_LINK_NEAR;
const FAR = process.env.MINO_LINK_FAR;
const VIEW = { width: 900, height: 600 };
/** How long the walker is traced, ms. */
const TRACE_MS = 8000;
/** The longest the page on WebTransport may draw the walker standing still, ms. */
const WT_FREEZE_MS = 250;

let server: RunningServer;
let browser: Browser;
let walker: Bot;
let stopWalking: (() => void) | undefined;
let httpFar = '';
let wsFar = '';

/** A free UDP port on the near address. */
function freeUdpPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    s.once('error', reject);
    s.bind(0, host, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** How near a wall (world units) the walker may stop by the wall, not by a freeze: its swing is about 48 units. */
const WALL = 60;

/**
 * The longest stretch the trace shows the walker drawn in one place, ms,
 * leaving out where it stands by a wall of the world (`bounds`): there it
 * stops because it cannot walk on, not because frames stopped.
 */
function longestStill(trace: TraceSample[], bounds: { minX: number; minY: number; maxX: number; maxY: number }): number {
  const byWall = (p: readonly [number, number]): boolean =>
    p[0] < bounds.minX + WALL || p[0] > bounds.maxX - WALL || p[1] < bounds.minY + WALL || p[1] > bounds.maxY - WALL;
  let longest = 0;
  let since: number | null = null;
  for (let i = 1; i < trace.length; i++) {
    const a = trace[i - 1]?.at;
    const b = trace[i]?.at;
    const t = trace[i]?.t ?? 0;
    const still = a && b && Math.hypot(a[0] - b[0], a[1] - b[1]) < 0.01 && !byWall(b);
    if (still) {
      since ??= trace[i - 1]?.t ?? t;
      longest = Math.max(longest, t - since);
    } else {
      since = null;
    }
  }
  return longest;
}

/**
 * Plays as `name` over `transport` and returns the page once it draws the
 * walker. A lost handshake packet can outlast the page's WebTransport bound
 * (1.5 s; it then takes its websocket, as designed): such a page is closed
 * and another opened, at most 4 in all.
 */
async function play(name: string, transport: 'webtransport' | 'websocket'): Promise<Page> {
  for (let attempt = 1; ; attempt++) {
    const page = await browser.newPage({ viewport: VIEW });
    page.on('pageerror', (e) => console.error('page error:', e));
    if (transport === 'websocket') {
      // A browser without WebTransport: the page takes the websocket.
      await page.addInitScript(() => Reflect.deleteProperty(window, 'WebTransport'));
    }
    await page.goto(httpFar);
    await page.fill('#name-input', name);
    await page.press('#name-input', 'Enter');
    const s = await until(`${name} live, drawing the walker`, async () => {
      const st: MinoStats = await pageStats(page);
      const drawn = await page.evaluate((id) => window.__mino?.drawnPosition(id) ?? null, walker.id);
      return st.connection === 'live' && st.transport !== '' && drawn !== null ? st : null;
    }, 30_000);
    if (s.transport === transport) return page;
    console.log(`${name}: attempt ${attempt} on ${s.transport} (${s.fallback}), not ${transport}`);
    await page.close();
    if (attempt === 4) throw new Error(`${name}: 4 pages took ${s.transport}, not ${transport}`);
  }
}

/** Traces the walker on `page` for TRACE_MS and returns its longest drawn stand-still, ms. */
async function freeze(page: Page): Promise<number> {
  await startTrace(page, walker.id);
  await new Promise((r) => setTimeout(r, TRACE_MS));
  const trace = await stopTrace(page);
  expect(trace.length, 'frames drawn').toBeGreaterThan(TRACE_MS / 100);
  expect(trace.filter((f) => !f.at), 'frames without the walker').toHaveLength(0);
  return longestStill(trace, walker.welcome.bounds);
}

beforeAll(async () => {
  if (!NEAR || !FAR) throw new Error('run under mino-link (npm run e2e:lossy): MINO_LINK_NEAR and MINO_LINK_FAR are not set');
  const port = await freeUdpPort(NEAR);
  server = await startServer(
    ['--busy-lateness-ms', '0', '--webtransport-listen', `${NEAR}:${port}`, '--webtransport-advertise', `${FAR}:${port}`],
    `${NEAR}:0`,
    30_000,
  );
  httpFar = server.http.replace(NEAR, FAR);
  wsFar = server.ws.replace(NEAR, FAR);
  walker = await Bot.connect(wsFar, 'walker');
  stopWalking = keepWalking(walker);
  browser = await launchChromium();
});

afterAll(async () => {
  stopWalking?.();
  await walker?.close();
  await browser?.close().catch(() => undefined);
  await server?.stop();
});

describe(`behind a lossy link (${process.env.MINO_LINK ?? 'not set'})`, () => {
  it('draws a walking bot over WebTransport without a freeze, and says how long the websocket froze', async () => {
    const wt = await play('wt-lossy', 'webtransport');
    const wtFreeze = await freeze(wt);
    expect(wtFreeze, 'the longest the WebTransport page drew the walker still').toBeLessThan(WT_FREEZE_MS);
    const s = await pageStats(wt);
    expect(s.decodeErrors).toBe(0);
    expect(s.datagramDeltas, 'deltas in the datagrams').toBe(true);
    // Every resync the page asked (on the stream, which loses nothing) taken by the shard.
    const taken = await until('the shard taking every resync asked', async () => {
      const m = await metric(server, 'mino_webtransport_resyncs_total');
      const asked = (await pageStats(wt)).resyncsAsked;
      return m >= s.resyncsAsked && m <= asked ? { m } : null;
    }, 10_000);
    const after = await pageStats(wt);
    console.log(`WebTransport page: ${after.cellsMissed} cells missed, ${after.resyncsAsked} resyncs asked, ${taken.m} taken by the shard; ${after.resyncs} reconnects`);
    expect(after.resyncs, 'no frame refused (no reconnect)').toBe(0);
    // One page drawing at a time: two share the software renderer, and a
    // page beside another drew under 10 frames a second (.ci/run, 78 in 8 s).
    await wt.close();
    const ws = await play('ws-lossy', 'websocket');
    const wsFreeze = await freeze(ws);
    console.log(`walker drawn standing still at most: WebTransport ${wtFreeze.toFixed(0)} ms, websocket ${wsFreeze.toFixed(0)} ms over ${TRACE_MS} ms`);
  });
});
