// Area of interest across two shards: a `redis-server` on a free port, two
// `mino-server --redis-url ... --shard-id 1|2` shards of one place with
// `--cell-size 125 --view-radius 250` (a 2,000-unit world, walkers at 300
// units/s), the page on shard 1 (straight to it) and a bot on shard 2. The bot
// walks to the page player and then a square around it, crossing cell
// borders: the page holds shard 2's cells (relayed by shard 1) beside its own
// shard's, and draws the bot in every frame, interpolated (never more than a
// walk's worth between two frames), where the bot's own shard has it when it
// stops. Every wait is bounded; everything is stopped at the end.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MinoStats } from '../src/debug/hook.js';
import { Bot, until, walkTo } from './harness/bot.js';
import { launchChromium, pageStats } from './harness/browser.js';
import { startRedis, type RunningRedis } from './harness/redis.js';
import { startServer, waitReady, type RunningServer } from './harness/server.js';
import { largestStep, startTrace, stopTrace } from './harness/trace.js';

const WORLD = 2000;
const CELL = 125;
const SPEED = 300;
const FLAGS = [
  '--world-size',
  String(WORLD),
  '--cell-size',
  String(CELL),
  '--view-radius',
  '250',
  '--speed',
  String(SPEED),
  '--view-hysteresis-ticks',
  '2',
  '--busy-lateness-ms',
  '0',
];
const VIEW = { width: 960, height: 640 };

type Point = [number, number];

let redis: RunningRedis | undefined;
const shards: RunningServer[] = [];
let browser: Browser | undefined;
let page: Page;
let walker: Bot;

function stats(): Promise<MinoStats> {
  return pageStats(page);
}

function drawnAt(id: number): Promise<Point | null> {
  return page.evaluate((i) => window.__mino?.drawnPosition(i) ?? null, id);
}

function distance(a: Point, b: Point): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1]);
}

/** The bot's own position, from its own shard's frames. */
function botPosition(bot: Bot): Promise<Point> {
  return until(`position of ${bot.welcome.name}`, () => bot.position(bot.id));
}


beforeAll(async () => {
  redis = await startRedis();
  for (const id of [1, 2]) {
    const shard = await startServer(['--redis-url', redis.url, '--shard-id', String(id), ...FLAGS]);
    shards.push(shard);
    await waitReady(shard);
  }
  walker = await Bot.connect((shards[1] as RunningServer).ws, 'walker-2');
  browser = await launchChromium();
  page = await browser.newPage({ viewport: VIEW });
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto((shards[0] as RunningServer).http);
  await page.fill('#name-input', 'aoi-cluster');
  await page.press('#name-input', 'Enter');
  await until('the page playing on shard 1', async () => {
    const s = await stats();
    return s.connection === 'live' && s.ownPlayerId > 0 && s.frames > 5 && (await drawnAt(s.ownPlayerId)) !== null;
  }, 25_000);
});

afterAll(async () => {
  await walker?.close();
  await browser?.close().catch(() => undefined);
  await Promise.allSettled(shards.map((s) => s.stop(3000)));
  await redis?.stop();
});

describe('area of interest across two shards', () => {
  it("draws a player of the other shard walking across cell borders near it, interpolated, where its shard has it", async () => {
    const s0 = await stats();
    const own = (await drawnAt(s0.ownPlayerId)) as Point;
    const d = 150;
    const inside = (v: number): number => Math.min(WORLD - d - 60, Math.max(d + 60, v));
    const centre: Point = [inside(own[0]), inside(own[1])];
    // The page player stands; the square is around it (or as near as the world's edge allows).
    const corners: Point[] = [
      [centre[0] + d, centre[1] + d],
      [centre[0] - d, centre[1] + d],
      [centre[0] - d, centre[1] - d],
      [centre[0] + d, centre[1] - d],
    ];
    await walkTo(walker, corners[3] as Point, 10);
    await until('the walker of shard 2 drawn', () => drawnAt(walker.id), 5000);
    const held = await stats();
    expect(held.shards, 'cells of both shards held').toBe(2);
    await startTrace(page, walker.id);
    for (const corner of [...corners, corners[0] as Point]) await walkTo(walker, corner, 10);
    const trace = await stopTrace(page);
    expect(trace.length).toBeGreaterThan(30);
    expect(trace.filter((f) => !f.at).length, 'frames without the walker').toBe(0);
    let crossings = 0;
    let moved = 0;
    // Frames of the walker standing at a corner (walkTo stops it there, and
    // polls more slowly on a busy machine) say nothing of interpolation: a run
    // of unmoved frames longer than two ticks is a stop, left out of the count.
    let walking = 0;
    let still: number[] = [];
    const endStill = (): void => {
      const first = still[0];
      const last = still[still.length - 1];
      if (first !== undefined && last !== undefined && last - first <= 100) walking += still.length;
      still = [];
    };
    for (let i = 1; i < trace.length; i++) {
      const a = trace[i - 1]?.at as Point;
      const b = trace[i]?.at as Point;
      if (Math.floor(a[0] / CELL) !== Math.floor(b[0] / CELL) || Math.floor(a[1] / CELL) !== Math.floor(b[1] / CELL)) crossings++;
      if (distance(a, b) > 0) {
        endStill();
        moved++;
        walking++;
      } else {
        still.push(trace[i]?.t ?? 0);
      }
    }
    endStill();
    expect(crossings, 'cell borders crossed').toBeGreaterThanOrEqual(4);
    // Never more than a walk's worth between two frames.
    const step = largestStep(trace, SPEED);
    expect(step.over, `largest step beyond a walk, in ${step.around}`).toBeLessThanOrEqual(0);
    // Interpolated: it moves in most frames, not a step a tick.
    expect(moved / walking, `${moved} of ${walking} walking frames moved (${trace.length} in all)`).toBeGreaterThan(0.5);
    // Stopped: drawn where its own shard has it.
    const stopped = await botPosition(walker);
    await until('drawn where shard 2 has it', async () => {
      const at = await drawnAt(walker.id);
      return at && distance(at, stopped) < 2;
    }, 3000);
    const s = await stats();
    expect(s.decodeErrors).toBe(0);
    expect(s.resyncs).toBe(0);
    expect(s.shardId).toBe(1);
  });
});
