// Build of the admin console (`npm run build:admin`): a page of its own,
// served by a shard's admin listener at /admin/ (mino-server
// --admin-console-dir client-web/dist-admin). Relative asset URLs, so it
// works under that path. Its unit tests run with the client's
// (`npm test`, vite.config.ts).
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

export default defineConfig({
  root: resolve(import.meta.dirname, 'admin'),
  base: './',
  // The game's public files (its favicon) serve the console too.
  publicDir: resolve(import.meta.dirname, 'public'),
  build: {
    outDir: resolve(import.meta.dirname, 'dist-admin'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
});
