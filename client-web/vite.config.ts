// Build of the browser client (`npm run build` -> dist/) and the unit-test run
// (`npm test`). The page is served by `mino-server --static-dir client-web/dist`
// at any path, so asset URLs are relative.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
  server: {
    // `npm run dev`: forward /ws to a locally running mino-server.
    proxy: { '/ws': { target: process.env.MINO_DEV_SERVER ?? 'http://127.0.0.1:8080', ws: true } },
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
