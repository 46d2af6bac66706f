// The production bundle carries no test hook: builds the client in memory the
// way `npm run build` does (mode production) and the way `npm run build:e2e`
// does (mode e2e), and looks for the hook's names in the JavaScript each one
// ships. The e2e build must have them, so the check cannot pass by looking
// in the wrong place.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Rollup } from 'vite';
import { describe, expect, it } from 'vitest';

const CLIENT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Names that only the test hook (src/debug/test-hook.ts) puts in a bundle. */
const HOOK_MARKERS = ['__mino', 'loseDevice', 'drawnPosition'];

/** The JavaScript of the client built in `mode`, all chunks joined. */
async function bundle(mode: string): Promise<string> {
  const out = await build({
    configFile: resolve(CLIENT_DIR, 'vite.config.ts'),
    root: CLIENT_DIR,
    mode,
    logLevel: 'silent',
    build: { write: false, sourcemap: false },
  });
  const outputs = (Array.isArray(out) ? out : [out]) as Rollup.RollupOutput[];
  const chunks = outputs.flatMap((o) => o.output).filter((f): f is Rollup.OutputChunk => f.type === 'chunk');
  expect(chunks.length).toBeGreaterThan(0);
  return chunks.map((c) => c.code).join('\n');
}

describe('bundles', () => {
  it('production has no test hook, the e2e build has it', { timeout: 60_000 }, async () => {
    const production = await bundle('production');
    const e2e = await bundle('e2e');
    for (const marker of HOOK_MARKERS) {
      expect(production.includes(marker), `${marker} in the production bundle`).toBe(false);
      expect(e2e.includes(marker), `${marker} in the e2e bundle`).toBe(true);
    }
  });
});
