// Figures the end-to-end tests measure, kept for benches/RESULTS.md: when
// MINO_CLIENT_FIGURES names a JSON file, each figure is merged into it under
// its key (benches/src/report/client.rs renders the file as the browser client's
// section). Without it, nothing is written.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** Merges `value` under `key` into the figures file, if one is named. */
export function recordFigure(key: string, value: unknown): void {
  const file = process.env.MINO_CLIENT_FIGURES;
  if (!file) return;
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  all[key] = value;
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
}
