// The admin console in real Chromium against a real two-shard cluster: Redis,
// two mino-server shards of one place with their admin listeners serving the
// console (dist-admin/, `npm run build:admin`), shard 1's asking for a bearer
// token. Players on both shards follow moves as pages do. The page must sign
// in, list both shards live with their figures and draw the charts; a player
// found by name and kicked from the page closes with 4040 and the reason; a
// drain of shard 2 confirmed on the page moves every one of its players to
// shard 1 (same ids), shows its progress, and the shard leaves the place.
// (ON_TWO walkers keep shard 2 draining long enough to see its progress.)
// A standalone shard's console says its drain disconnects every player and
// stops the shard, and then shows that shard gone.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './harness/bot.js';
import { launchChromium } from './harness/browser.js';
import { startRedis, type RunningRedis } from './harness/redis.js';
import { Roamer } from './harness/roamer.js';
import { CLIENT_DIR, startServer, waitReady, type RunningServer } from './harness/server.js';

/** The console's build. */
const CONSOLE_DIR = resolve(CLIENT_DIR, 'dist-admin');
const TOKEN = 'e2e-operator-token-0123';
/**
 * Players on shard 2 at the drain (one more is kicked first). Shard 2 drains
 * one a tick (--drain-rate 20 at 20 Hz), so the drain lasts 2 s and the
 * page, reading every second, shows its progress.
 */
const ON_TWO = 40;

let redis: RunningRedis | undefined;
const shards = new Map<number, RunningServer>();
/** Each shard's admin listener, `IP:PORT`. */
const admins = new Map<number, string>();
let browser: Browser | undefined;
let page: Page;
/** The console's own files answered 404 since it loaded (its favicon, any asset). */
const missing: string[] = [];
let tokenDir = '';
const roamers: Roamer[] = [];

/** Waits for the shard's "admin on http://ADDR" line. */
async function adminOf(server: RunningServer): Promise<string> {
  return until('the admin address', () => /admin on http:\/\/(\S+)/.exec(server.output())?.[1], 10_000);
}

/** The processes' output, for failure messages. */
function logs(): string {
  return [...shards].map(([id, s]) => `--- shard ${id}\n${s.output().slice(-3000)}`).join('\n');
}

/** The players column of shard `id`'s row, as a number. */
async function playersOf(id: number): Promise<number | null> {
  const text = await page.locator(`#shards tr[data-shard="${id}"] td.players`).textContent({ timeout: 1000 }).catch(() => null);
  const m = text ? /^([\d,]+) \//.exec(text) : null;
  return m?.[1] ? Number(m[1].replace(/,/g, '')) : null;
}

beforeAll(async () => {
  redis = await startRedis();
  tokenDir = mkdtempSync(join(tmpdir(), 'mino-admin-e2e-'));
  const tokenFile = join(tokenDir, 'tokens');
  writeFileSync(tokenFile, `e2e ${TOKEN}\n`);
  for (const id of [1, 2]) {
    const flags = ['--redis-url', redis.url, '--shard-id', String(id), '--busy-lateness-ms', '0', '--heartbeat-ms', '200'];
    flags.push('--admin-listen', '127.0.0.1:0', '--admin-console-dir', CONSOLE_DIR, '--drain-rate', id === 2 ? '20' : '1000');
    if (id === 1) flags.push('--admin-token-file', tokenFile);
    const shard = await startServer(flags);
    shards.set(id, shard);
    await waitReady(shard, 10_000, id === 1 ? TOKEN : undefined);
    admins.set(id, await adminOf(shard));
  }
  const urls = [1, 2].map((id) => (shards.get(id) as RunningServer).ws);
  roamers.push(await Roamer.join('walker-one', urls, 0));
  for (let i = 0; i < ON_TWO; i++) roamers.push(await Roamer.join(`walker-two-${i}`, urls, 1));
  roamers.push(await Roamer.join('kick-me', urls, 1));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('pageerror', (e) => console.error('page error:', e));
  page.on('response', (r) => {
    // The page's own files (the API's answers are the tests' business).
    if (r.status() === 404 && !new URL(r.url()).pathname.startsWith('/admin/api/')) missing.push(r.url());
  });
}, 90_000);

afterAll(async () => {
  for (const r of roamers) r.close();
  await browser?.close().catch(() => undefined);
  await Promise.allSettled([...shards.values()].map((s) => s.stop(3000)));
  await redis?.stop();
  if (tokenDir) rmSync(tokenDir, { recursive: true, force: true });
});

describe('the admin console', () => {
  it('signs in with the token and shows both shards live, with charts', async () => {
    await page.goto(`http://${admins.get(1)}/admin/`);
    await page.locator('#login:not([hidden])').waitFor({ timeout: 10_000 });
    expect(await page.locator('#console').isHidden()).toBe(true);
    await page.fill('#token-input', 'a-wrong-token-for-this-page');
    await page.press('#token-input', 'Enter');
    await page.locator('#login .error', { hasText: 'refused' }).waitFor({ timeout: 5000 });
    await page.fill('#token-input', TOKEN);
    await page.press('#token-input', 'Enter');
    await page.locator('#console:not([hidden])').waitFor({ timeout: 5000 });
    await until('both shards with their players', async () => (await playersOf(1)) === 1 && (await playersOf(2)) === ON_TWO + 1, 10_000, logs);
    const row = page.locator('#shards tr[data-shard="2"]');
    expect(await row.locator('td.redis').textContent()).toBe('up');
    expect(await row.locator('td.state').textContent()).toBe('ready');
    await until('ticks a second near 20', async () => /^(19|20)\.\d \/ 20$/.exec((await row.locator('td.ticks').textContent()) ?? ''), 10_000, logs);
    expect(await page.locator('#shards tr[data-shard="1"] th').textContent()).toContain('00000001 (this page)');
    expect(await page.locator('#summary').textContent()).toContain('2 shards');
    // Live: the freshness line changes as the figures are read again.
    const first = await page.locator('#freshness').textContent();
    await until('a newer read', async () => (await page.locator('#freshness').textContent()) !== first, 5000, logs);
    // Charts: a line a shard.
    await until('a line a shard in both charts', async () => (await page.locator('#chart-players path[data-shard]').count()) === 2 && (await page.locator('#chart-lateness path[data-shard]').count()) === 2, 10_000, logs);
  });

  it('finds a player by name and kicks it: 4040 with the reason', async () => {
    const victim = roamers.find((r) => r.name === 'kick-me') as Roamer;
    const id = victim.landing?.playerId as number;
    await page.fill('#search-input', 'KICK');
    await page.press('#search-input', 'Enter');
    const found = page.locator(`#found tr[data-player="${id}"]`);
    await found.waitFor({ timeout: 10_000 });
    expect(await found.locator('td.name').textContent()).toBe('kick-me');
    // Shard ids as the server's logs write them: 8 lowercase hex digits.
    expect(await found.locator('td.shard').textContent()).toBe('00000002');
    expect(await found.locator('td.position').textContent()).toMatch(/^\(\d+, \d+\)$/);
    await found.locator('button.kick-button').click();
    const dialog = page.locator('#kick-dialog[open]');
    await dialog.waitFor({ timeout: 5000 });
    await dialog.locator('button[value="kick"]').click();
    expect(await dialog.locator('.error').textContent(), 'a reason is required').toMatch(/Say why/);
    await page.fill('#kick-reason', 'testing the console');
    await dialog.locator('button[value="kick"]').click();
    await until('the player closed with 4040', () => victim.closes.includes(4040), 10_000, logs);
    expect(victim.errors).toContainEqual({ code: 4040, message: 'removed by an operator: testing the console' });
    await page.locator('#action-log li.ok', { hasText: `player ${id} (kick-me) kicked on shard 00000002` }).waitFor({ timeout: 5000 });
    expect(await found.count()).toBe(0);
    await until('shard 2 without the kicked player', async () => (await playersOf(2)) === ON_TWO, 10_000, logs);
  });

  it('drains shard 2 after a confirmation: every player moves to shard 1', async () => {
    const movers = roamers.filter((r) => r.name.startsWith('walker-two-'));
    const ids = movers.map((r) => r.landing?.playerId);
    const drain = page.locator('#shards tr[data-shard="2"] button.drain-button');
    await drain.click();
    const dialog = page.locator('#drain-dialog[open]');
    await dialog.waitFor({ timeout: 5000 });
    expect(await dialog.locator('.what').textContent()).toContain(`moves its ${ON_TWO} players`);
    await dialog.locator('button[value="cancel"]').click();
    expect(await page.locator('#shards tr[data-shard="2"]').getAttribute('data-state')).toBe('ready');
    await drain.click();
    await dialog.waitFor({ timeout: 5000 });
    await dialog.locator('button[value="drain"]').click();
    await page.locator('#action-log li.ok', { hasText: `drain of shard 00000002: ${ON_TWO} players to move` }).waitFor({ timeout: 5000 });
    // Its progress while the players move.
    const progress = page.locator('#shards tr[data-shard="2"] .drain-text');
    const said = await until('the drain under way on the page', async () => {
      const t = await progress.textContent({ timeout: 200 }).catch(() => null);
      return t && /moved \d+ of 40, \d+ left/.exec(t) ? t : null;
    }, 5000, logs);
    expect(await page.locator('#shards tr[data-shard="2"]').getAttribute('data-state')).toBe('draining');
    expect(said).toMatch(/of 40/);
    await until('every player of shard 2 on shard 1', () => movers.every((r) => r.landing?.shardId === 1), 15_000, logs);
    expect(movers.map((r) => r.landing?.playerId), 'the same players').toEqual(ids);
    expect(movers.every((r) => r.closes.includes(4018)), 'each was told to move (4018)').toBe(true);
    await page.locator('#action-log li', { hasText: 'shard 00000002 drained and left the place' }).waitFor({ timeout: 15_000 });
    await until('shard 1 alone with every player', async () => (await page.locator('#shards tr[data-shard]').count()) === 1 && (await playersOf(1)) === ON_TWO + 1, 10_000, logs);
    const two = shards.get(2) as RunningServer;
    await until('shard 2 exited', () => two.proc.exitCode !== null, 10_000, logs);
    expect(two.proc.exitCode).toBe(0);
  });

  it('loads without a missing file (its favicon, no 404)', () => {
    expect(missing).toEqual([]);
  });
});

// A standalone shard has no other shard to move its players to: the drain
// dialog says a drain disconnects every player and stops the process, and
// once it has, the console (served by that shard) shows the shard gone, not
// a stale "draining" row with "no answer ... retrying".
describe('the console of a standalone shard', () => {
  it('says a drain disconnects everyone and stops the shard, then shows the shard gone', async () => {
    const alone = await startServer(['--admin-listen', '127.0.0.1:0', '--admin-console-dir', CONSOLE_DIR, '--busy-lateness-ms', '0']);
    const player = await Roamer.join('alone', [alone.ws]);
    const p = await (browser as Browser).newPage({ viewport: { width: 1200, height: 900 } });
    try {
      await p.goto(`http://${alone.admin as string}/admin/`);
      await p.locator('#console:not([hidden])').waitFor({ timeout: 10_000 });
      await p.locator('#summary', { hasText: '(standalone)' }).waitFor({ timeout: 5000 });
      const row = p.locator('#shards tr[data-shard]');
      await row.locator('td.players', { hasText: /^1 \// }).waitFor({ timeout: 10_000 });
      await row.locator('button.drain-button').click();
      const dialog = p.locator('#drain-dialog[open]');
      await dialog.waitFor({ timeout: 5000 });
      const what = (await dialog.locator('.what').textContent()) ?? '';
      expect(what).toContain('standalone');
      expect(what).toContain("closes every player's connection at once");
      expect(what).toContain('the process exits');
      expect(what).not.toContain('moves');
      expect(await dialog.locator('.warning').isVisible()).toBe(true);
      expect(await dialog.locator('.warning').textContent()).toContain('this console');
      expect(await dialog.locator('button[value="drain"]').textContent()).toBe('Disconnect everyone and stop');
      await dialog.locator('button[value="drain"]').click();
      await p.locator('#action-log li.ok', { hasText: 'its 1 player disconnected, then it stops' }).waitFor({ timeout: 5000 });
      await until('the player closed with 1012', () => player.closes.includes(1012), 10_000);
      await until('the shard exited', () => alone.proc.exitCode !== null, 15_000);
      expect(alone.proc.exitCode).toBe(0);
      // The console says the shard is gone, and stops saying it retries.
      await p.locator('#shards tr[data-state="gone"]').waitFor({ timeout: 10_000 });
      expect(await row.locator('td.state').textContent()).toBe('gone: drained (every player disconnected) and stopped');
      expect(await row.locator('button.drain-button').count()).toBe(0);
      expect(await p.locator('#summary').textContent()).toContain('is gone');
      const freshness = (await p.locator('#freshness').textContent()) ?? '';
      expect(freshness).not.toContain('retrying');
      expect(freshness).toContain('in case it is started again');
      await p.locator('#action-log li.info', { hasText: 'drained (every player disconnected) and stopped' }).waitFor({ timeout: 5000 });
    } finally {
      player.close();
      await p.close();
      await alone.stop(3000);
    }
  }, 60_000);
});
