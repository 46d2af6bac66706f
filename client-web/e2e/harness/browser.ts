// Real Chromium (Debian's /usr/bin/chromium) through playwright-core, with the
// flags that give a working WebGPU adapter (SwiftShader) on a machine without
// a GPU and keep the browser off the network (see shared/BROWSER-TESTING.md).
//
// `--disable-quic` turns off QUIC for HTTP (no HTTP/3 for pages and fetches)
// but not WebTransport: Chromium 156 opens WebTransport sessions (HTTP/3 over
// QUIC, with serverCertificateHashes) with and without it, as
// e2e/webtransport.e2e.ts checks both ways.

import { chromium, type Browser, type Page } from 'playwright-core';
import type { MinoStats } from '../../src/debug/hook.js';

/** Path of the browser; CHROMIUM_PATH overrides. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The flags verified for WebGPU on SwiftShader. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--enable-unsafe-webgpu',
  '--enable-unsafe-swiftshader',
  '--use-angle=swiftshader',
  '--enable-features=Vulkan',
  '--use-vulkan=swiftshader',
];

/** Launches headless Chromium with [`CHROMIUM_ARGS`] (without `--disable-quic` when `quic` is set) and `extraArgs`. */
export function launchChromium(extraArgs: string[] = [], opts: { quic?: boolean } = {}): Promise<Browser> {
  const base = opts.quic ? CHROMIUM_ARGS.filter((a) => a !== '--disable-quic') : CHROMIUM_ARGS;
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...base, ...extraArgs], timeout: 30_000 });
}

/** The page's test hook figures (`window.__mino.stats`), copied out of the page. Throws when the page has no hook. */
export function pageStats(page: Page): Promise<MinoStats> {
  return page.evaluate(() => {
    const s = window.__mino?.stats;
    if (!s) throw new Error('no window.__mino');
    return JSON.parse(JSON.stringify(s)) as MinoStats;
  });
}
