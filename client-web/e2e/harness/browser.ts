// Real Chromium (Debian's /usr/bin/chromium) through playwright-core, with the
// flags that give a working WebGPU adapter (SwiftShader) on a machine without
// a GPU and keep the browser off the network (see shared/BROWSER-TESTING.md).

import { chromium, type Browser } from 'playwright-core';

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

/** Launches headless Chromium with [`CHROMIUM_ARGS`]. */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs], timeout: 30_000 });
}
