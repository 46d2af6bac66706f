// End-to-end run (`npm run e2e`): the real mino-server binary, the built client
// in real Chromium (SwiftShader WebGPU), bots over real websockets. Files run one
// after another; every wait inside is bounded.
import { defineConfig } from 'vitest/config';

// Under mino-link (MINO_LINK_FAR set: a private network namespace behind the
// test kit's lossy link; `npm run e2e:lossy`) only e2e/lossy/ runs, and
// elsewhere everything else.
const behindLink = process.env.MINO_LINK_FAR !== undefined;

export default defineConfig({
  test: {
    include: behindLink ? ['e2e/lossy/**/*.e2e.ts'] : ['e2e/**/*.e2e.ts'],
    exclude: behindLink ? ['**/node_modules/**'] : ['**/node_modules/**', 'e2e/lossy/**'],
    environment: 'node',
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 90_000,
    teardownTimeout: 20_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
