// Signing in with a token given to the page (issue 16), end to end: the real
// mino-server verifying HS256 tokens against a test secret with guests
// refused, real Chromium opening the page with `#token=…` in its URL. The
// token is minted here with Node's HMAC; the page must play, take the token
// out of the address bar, keep it out of storage, and say plainly why a
// refused token was refused without trying it again.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MinoStats } from '../src/debug/hook.js';
import { until } from './harness/bot.js';
import { launchChromium, pageStats } from './harness/browser.js';
import { startServer, type RunningServer } from './harness/server.js';

const SECRET = randomBytes(32).toString('hex');
let dir: string;
let server: RunningServer;
let browser: Browser;

/** base64url of `data`. */
function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/** An HS256 JWT of `claims` signed with the test secret. */
function mint(claims: Record<string, unknown>): string {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify(claims));
  const sig = createHmac('sha256', SECRET).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

function stats(page: Page): Promise<MinoStats> {
  return pageStats(page);
}

/** Opens the page at `fragment`, types a name, and returns the page. */
async function open(fragment: string, name = 'typed-name'): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(`${server.http}${fragment}`);
  await page.fill('#name-input', name);
  await page.press('#name-input', 'Enter');
  return page;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mino-identity-'));
  const file = join(dir, 'secret');
  writeFileSync(file, `${SECRET}\n`);
  server = await startServer(['--auth-hs256-secret-file', file, '--guests', 'deny']);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('sign-in token in the page URL', () => {
  it('plays signed in; the token leaves the address bar and never reaches storage', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = mint({ sub: 'acct-7', name: 'Tess', exp: now + 600 });
    const page = await open(`#token=${token}`);
    const s = await until('welcomed', async () => {
      const now = await stats(page);
      return now.connection === 'live' && now.ownPlayerId > 0 ? now : null;
    }, 15_000);
    // The account's name claim wins over the typed one.
    expect(await page.evaluate((id) => window.__mino?.nameOf(id), s.ownPlayerId)).toBe('Tess');
    const href = await page.evaluate(() => location.href);
    expect(href).toBe(server.http);
    expect(href).not.toContain('token');
    const stored = await page.evaluate(() => {
      const all: string[] = [];
      for (const store of [localStorage, sessionStorage]) {
        for (let i = 0; i < store.length; i++) {
          const key = store.key(i) ?? '';
          all.push(key, store.getItem(key) ?? '');
        }
      }
      return all.join('\n');
    });
    const signature = token.split('.')[2] as string;
    expect(stored).not.toContain(signature);
    expect(stored).not.toContain(token.split('.')[1] as string);
    expect(stored).toContain('typed-name'); // the name is remembered as before
    await page.close();
  });

  it('an expired token: a plain message, and no second try with it', async () => {
    const now = Math.floor(Date.now() / 1000);
    const page = await open(`#token=${mint({ sub: 'acct-8', name: 'Old', exp: now - 3600 })}`);
    await until('the refusal shown', () => page.locator('#panel:not([hidden])', { hasText: 'Sign-in expired — sign in again.' }).count(), 10_000);
    const s = await stats(page);
    expect(s.connection).toBe('stopped');
    expect(s.ownPlayerId).toBe(0);
    await new Promise((r) => setTimeout(r, 2500));
    expect((await stats(page)).sockets).toBe(1);
    await page.close();
  });

  it('no token where guests are refused: says to sign in', async () => {
    const page = await open('');
    await until('the refusal shown', () => page.locator('#panel:not([hidden])', { hasText: 'needs you to sign in' }).count(), 10_000);
    expect((await stats(page)).sockets).toBe(1);
    await page.close();
  });
});
