// The decode benchmark (bench/decode-core.ts) in real Chromium: the cases
// bundled by Vite (bench/decode-page.ts as one IIFE) into a blank page of
// headless Chromium (the e2e harness's flags), run there, timed with the
// page's performance.now()
// (wall time: the machine's other work shows in the quartiles; its
// resolution is 100 us in a page that is not cross-origin isolated, so each
// round times 2,000 frames at once).
//
//   cd client-web && npm run bench:decode:browser [-- ROUNDS] [--json PATH]
//
// With --json the results are also written to PATH (the benches' report
// reads benches/results/raw/decode-browser.json: `mino_benches::raw::DecodeBrowser`).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build, type Rollup } from 'vite';
import { launchChromium } from '../e2e/harness/browser.js';
import { BATCH, CELLS, PLAYERS, formatResults, type CaseResult } from './decode-core.js';

const { values, positionals } = parseArgs({ options: { json: { type: 'string' } }, allowPositionals: true });
const ROUNDS = Number(positionals[0] ?? 31);

const built = (await build({
  configFile: false,
  logLevel: 'warn',
  build: {
    write: false,
    minify: true,
    target: 'es2022',
    lib: { entry: fileURLToPath(new URL('./decode-page.ts', import.meta.url)), formats: ['iife'], name: 'decodeBench', fileName: 'decode-bench' },
  },
})) as Rollup.RollupOutput[];
const code = built[0]?.output.find((o) => o.type === 'chunk')?.code ?? '';
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.setContent('<!doctype html><title>decode bench</title>');
  await page.addScriptTag({ content: code });
  const version = browser.version();
  const results = await page.evaluate((rounds) => (window as unknown as { __bench: (r: number) => CaseResult[] }).__bench(rounds), ROUNDS);
  console.log(`Chromium ${version}`);
  console.log(formatResults(results, ROUNDS, 'wall-clock'));
  if (values.json) {
    const cases = results.map((r) => ({ name: r.name, median_us: r.median, q1_us: r.q1, q3_us: r.q3, bytes: r.bytes }));
    writeFileSync(values.json, `${JSON.stringify({ chromium: version, players: PLAYERS, cells: CELLS, rounds: ROUNDS, batch: BATCH, cases }, null, 2)}\n`);
  }
} finally {
  await browser.close();
}
