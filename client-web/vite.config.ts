// Build of the browser client and the unit-test run (`npm test`). The page is
// served by `mino-server --static-dir client-web/dist` at any path, so asset
// URLs are relative.
//
// Two builds (test/bundle.test.ts holds them to it):
// - `npm run build` (mode production) -> dist/: what players get. No test hooks.
// - `npm run build:e2e` (mode e2e) -> dist-e2e/: the same client plus the test
//   hook `window.__mino` (src/debug/hook.ts), served by the end-to-end tests.
// `__MINO_TEST_HOOKS__` is replaced at build time, so a production bundle
// drops the hook module altogether. The dev server and Vitest have the hook.
import { defineConfig } from 'vitest/config';

/** Modes whose build carries the test hooks. */
export const TEST_HOOK_MODES: readonly string[] = ['e2e', 'test', 'development'];

export default defineConfig(({ mode }) => ({
  base: './',
  define: {
    __MINO_TEST_HOOKS__: JSON.stringify(TEST_HOOK_MODES.includes(mode)),
  },
  build: {
    outDir: mode === 'e2e' ? 'dist-e2e' : 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
  server: {
    // `npm run dev`: forward /ws and /webtransport (the shard's WebTransport
    // offer; the page then reaches its UDP port directly) to a locally
    // running mino-server.
    proxy: {
      '/ws': { target: process.env.MINO_DEV_SERVER ?? 'http://127.0.0.1:8080', ws: true },
      '/webtransport': { target: process.env.MINO_DEV_SERVER ?? 'http://127.0.0.1:8080' },
    },
  },
  test: {
    // The admin console's (admin/, built by vite.admin.config.ts) too.
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'admin/**/*.test.ts'],
    environment: 'node',
    // The allocation tests run thousands of frames and force collections: on
    // a loaded 2-core machine one took 5.3 s, past vitest's 5 s default.
    testTimeout: 30_000,
    // The allocation tests (src/testing/allocation.ts) measure optimized
    // code: V8 must optimize on the main thread, which only a flag given at
    // the process's start does (set later, a background compiler starved by
    // the other test files left the code unoptimized through every round).
    poolOptions: { forks: { execArgv: ['--no-concurrent-recompilation'] } },
    reporters: ['default', './test/summary-reporter.ts'],
  },
}));
