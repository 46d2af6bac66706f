// `npm run e2e:lossy`: the end-to-end tests of e2e/lossy/ under mino-link
// (testkit/src/bin/mino-link.rs, built by `cargo build --workspace --bins`,
// found where cargo builds: cargoBin), a private network namespace behind
// the test kit's lossy link, 2 % of packets lost each way and a 40 ms round
// trip. Needs root. Exits with the tests' status.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cargoBin, CLIENT_DIR } from '../harness/server.js';

const link = cargoBin('debug', 'mino-link');
if (!existsSync(link)) {
  console.error(`mino-link not found at ${link}: build it (cargo build --workspace --bins)`);
  process.exit(1);
}
const vitest = ['npx', 'vitest', 'run', '--config', 'vitest.e2e.config.ts'];
const run = spawnSync(link, ['--loss-pct', '2', '--rtt-ms', '40', '--', ...vitest], { cwd: CLIENT_DIR, stdio: 'inherit' });
if (run.error) console.error(`mino-link did not start: ${run.error.message}`);
process.exit(run.status ?? 1);
