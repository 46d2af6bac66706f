// Browsers that cannot draw: no navigator.gpu, a null adapter, an adapter
// request that never settles, a device request that fails. Each page must say
// so clearly and never open a websocket, so it holds no player slot.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MinoStats } from '../src/debug/hook.js';
import { until } from './harness/bot.js';
import { launchChromium } from './harness/browser.js';
import { metric, startServer, type RunningServer } from './harness/server.js';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await server?.stop();
});

const CASES: { name: string; script: string; failure: string; text: RegExp }[] = [
  {
    name: 'no navigator.gpu',
    script: "Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined, configurable: true });",
    failure: 'no-webgpu',
    text: /has no WebGPU/,
  },
  {
    name: 'a null adapter',
    script: 'GPU.prototype.requestAdapter = async () => null;',
    failure: 'no-adapter',
    text: /no graphics adapter/,
  },
  {
    name: 'an adapter request that never settles',
    script: 'GPU.prototype.requestAdapter = () => new Promise(() => {});',
    failure: 'timeout',
    text: /did not answer within 3 seconds/,
  },
  {
    name: 'a failed device request',
    script: "GPUAdapter.prototype.requestDevice = () => Promise.reject(new Error('no device for you'));",
    failure: 'no-device',
    text: /would not give this page a WebGPU device.*no device for you/,
  },
];

describe('without usable WebGPU', () => {
  it.each(CASES)('$name: says why and opens no websocket', async ({ script, failure, text }) => {
    const page = await browser.newPage();
    try {
      const sockets: string[] = [];
      page.on('websocket', (ws) => sockets.push(ws.url()));
      await page.addInitScript({ content: script });
      const t0 = Date.now();
      await page.goto(server.http);
      await page.locator('#panel').waitFor({ state: 'visible', timeout: 8000 });
      const elapsed = Date.now() - t0;
      expect(await page.locator('#panel').textContent()).toMatch(text);
      const stats = await page.evaluate(() => JSON.parse(JSON.stringify(window.__mino?.stats)) as MinoStats);
      expect(stats.gpuFailure).toBe(failure);
      if (failure === 'timeout') {
        expect(elapsed).toBeGreaterThanOrEqual(2900);
        expect(elapsed).toBeLessThan(7000);
      }
      expect(await page.locator('#name-form').isHidden()).toBe(true);
      // Give a wrongly started connection time to show up, then check both ends.
      await new Promise((r) => setTimeout(r, 500));
      expect(sockets).toEqual([]);
      expect(await metric(server, 'mino_connections')).toBe(0);
      expect(await metric(server, 'mino_players')).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('a working adapter in the same browser does connect (the checks above can fail)', async () => {
    const page = await browser.newPage();
    try {
      const sockets: string[] = [];
      page.on('websocket', (ws) => sockets.push(ws.url()));
      await page.goto(server.http);
      await page.fill('#name-input', 'control');
      await page.press('#name-input', 'Enter');
      await until('a websocket', () => sockets.length > 0);
      expect(sockets[0]).toBe(`${server.ws}`);
      await until('a player on the server', async () => (await metric(server, 'mino_players')) === 1);
    } finally {
      await page.close();
    }
  });
});
