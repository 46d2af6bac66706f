// Cluster failover over WebTransport: Redis, two mino-server shards of one
// place, each with `--webtransport-listen 127.0.0.1:0`, and real nginx in
// front as shipped (deploy/nginx's template: /ws and /webtransport passed
// to a shard of the upstream). The page loads through nginx, asks
// /webtransport there and opens its session to that shard's UDP address
// directly (nginx does not proxy WebTransport). Its shard is killed
// (SIGKILL); the page must resume on the other shard, over WebTransport
// again (it asks /webtransport afresh, which nginx now answers from the
// survivor), as the same player, in place, in the same page. Everything
// runs on 127.0.0.1; every wait is bounded; every process started here is
// stopped at the end.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MinoStats } from '../src/debug/hook.js';
import { Bot, until } from './harness/bot.js';
import { launchChromium, pageStats } from './harness/browser.js';
import { startNginx, type RunningNginx } from './harness/nginx.js';
import { startRedis, type RunningRedis } from './harness/redis.js';
import { TEST_BUILD_DIR, metric, startServer, waitReady, type RunningServer } from './harness/server.js';

const SHARD_IDS = [1, 2] as const;
const SHARD_FLAGS = ['--shard-ttl-ms', '3000', '--busy-lateness-ms', '0', '--webtransport-listen', '127.0.0.1:0'];
const NAME = 'e2e-wt-cluster';
/** World units the resumed player may be from where it stood (it stood still; quantization is 0.015). */
const POSITION_SLACK = 2;

let redis: RunningRedis | undefined;
const shards = new Map<number, RunningServer>();
let nginx: RunningNginx | undefined;
let browser: Browser | undefined;
let page: Page;
/** One bot on each shard, connected straight to it (not through nginx). */
const bots = new Map<number, Bot>();

/** Everything the processes printed, for failure messages. */
function logs(): string {
  const parts = [...shards].map(([id, s]) => `--- shard ${id} (${s.addr})\n${s.output()}`);
  if (nginx) parts.push(`--- nginx\n${nginx.output()}`);
  return parts.join('\n');
}

function stats(): Promise<MinoStats> {
  return pageStats(page);
}

function drawnPosition(id: number): Promise<[number, number] | null> {
  return page.evaluate((pid) => window.__mino?.drawnPosition(pid) ?? null, id);
}

beforeAll(async () => {
  redis = await startRedis();
  for (const id of SHARD_IDS) {
    const shard = await startServer(['--redis-url', redis.url, '--shard-id', String(id), ...SHARD_FLAGS]);
    shards.set(id, shard);
    await waitReady(shard);
  }
  for (const [id, shard] of shards) bots.set(id, await Bot.connect(shard.ws, `bot-${id}`));
  await until('each shard relaying the other', () => [...bots].every(([id, b]) => SHARD_IDS.every((s) => s === id || (b.shardCells.get(s) ?? 0) > 3)), 10_000, logs);
  nginx = await startNginx([...shards.values()].map((s) => s.addr), TEST_BUILD_DIR);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 800, height: 600 }, ignoreHTTPSErrors: true });
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(nginx.https);
  await page.fill('#name-input', NAME);
  await page.press('#name-input', 'Enter');
  await until('the page playing over WebTransport, offered through nginx', async () => {
    const s = await stats();
    return s.connection === 'live' && s.transport === 'webtransport' && s.frames > 5 && s.shards === SHARD_IDS.length && (await drawnPosition(s.ownPlayerId)) !== null;
  }, 25_000, logs);
});

afterAll(async () => {
  await Promise.allSettled([...bots.values()].map((b) => b.close()));
  await browser?.close().catch(() => undefined);
  await nginx?.stop();
  await Promise.allSettled([...shards.values()].map((s) => s.stop(3000)));
  await redis?.stop();
});

describe('a two-shard cluster behind nginx, the page on WebTransport', () => {
  it('resumes on the other shard over WebTransport, as the same player, in place, when its shard dies', async () => {
    const before = await stats();
    const id = before.ownPlayerId;
    const doomedId = before.shardId;
    expect(SHARD_IDS).toContain(doomedId);
    expect(before.fallback).toBe('');
    const survivorId = SHARD_IDS.find((s) => s !== doomedId) as number;
    const doomed = shards.get(doomedId) as RunningServer;
    const survivor = shards.get(survivorId) as RunningServer;
    const observer = bots.get(survivorId) as Bot;
    // The page's session is on its shard's UDP port, not a websocket through nginx.
    expect(await metric(doomed, 'mino_webtransport_sessions')).toBe(1);
    const seenBefore = await until('the page player relayed to the other shard', () => observer.positionOn(doomedId, id), 5000, logs);
    const drawnBefore = (await drawnPosition(id)) as [number, number];
    await page.evaluate(() => void ((window as unknown as { __samePage: boolean }).__samePage = true));

    const killedAt = Date.now();
    await doomed.kill();
    const after = await until(`the page live on shard ${survivorId}`, async () => {
      const s = await stats();
      return s.connection === 'live' && s.shardId === survivorId ? s : null;
    }, 15_000, logs);
    const failoverMs = Date.now() - killedAt;

    expect(after.ownPlayerId, 'same player id after resume').toBe(id);
    expect([after.transport, after.fallback], 'WebTransport again, offered by the survivor').toEqual(['webtransport', '']);
    expect(after.sockets).toBeGreaterThanOrEqual(2);
    expect(await page.evaluate(() => (window as unknown as { __samePage?: boolean }).__samePage)).toBe(true);
    expect(await page.locator('#name-form').isHidden(), 'no name form (no new session)').toBe(true);
    expect(await metric(survivor, 'mino_webtransport_sessions')).toBe(1);
    await until('the HUD saying WebTransport', async () => / · WebTransport$/.test((await page.locator('#hud').textContent()) ?? '') || null, 5000, logs);

    // In place: the survivor has the player where it stood, and the page draws it there.
    const seenAfter = await until(`the page player in shard ${survivorId}'s cell`, () => observer.positionOn(survivorId, id), 5000, logs);
    expect(Math.hypot(seenAfter[0] - seenBefore[0], seenAfter[1] - seenBefore[1])).toBeLessThan(POSITION_SLACK);
    const drawnAfter = await until('the own player drawn after resume', () => drawnPosition(id), 5000, logs);
    expect(Math.hypot(drawnAfter[0] - drawnBefore[0], drawnAfter[1] - drawnBefore[1])).toBeLessThan(POSITION_SLACK);
    expect((await stats()).decodeErrors).toBe(0);
    expect(failoverMs).toBeLessThan(10_000);
    console.log(`cluster failover over WebTransport: shard ${doomedId} killed -> live on shard ${survivorId} as player ${id} in ${failoverMs} ms`);
  });
});
