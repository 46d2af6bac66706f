// End-to-end run (`npm run e2e`): the real mino-server binary, the built client
// in real Chromium (SwiftShader WebGPU), bots over real websockets. Files run one
// after another; every wait inside is bounded.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    environment: 'node',
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 90_000,
    teardownTimeout: 20_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
