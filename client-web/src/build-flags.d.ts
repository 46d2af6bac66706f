// Constants that vite.config.ts `define`s at build time (so a production
// bundle drops the code they guard).

/** True in test builds (`npm run build:e2e`, the dev server, Vitest): install the test hook. */
declare const __MINO_TEST_HOOKS__: boolean;
