// The decode benchmark's cases and rounds, free of Node and of the DOM, so the
// same code times in Node (bench/decode.ts: CPU time) and in real Chromium
// (bench/decode-browser.ts: the page's clock): a tick's view frame of 165
// walkers in 9 cells of one shard applied to the cells held (Held.apply on
// the bytes of ServerMessage.view) and every updated cell's players read in
// world units, as the page does.
import { Held } from '../src/net/held.js';
import { Motion } from '../src/net/motion.js';
import type { PlayerColumns } from '../src/net/protocol.js';
import { walkerScene, type WalkerScene } from '../src/testing/delta-frames.js';

/** Players in view and cells of the scene. */
export const PLAYERS = 165;
export const CELLS = 9;
/** Frames run warm before timing, and frames a timed round. */
export const WARM = 20_000;
export const BATCH = 2_000;

/** One case's median and quartiles, microseconds a frame, and its frame's bytes (0: not shown). */
export interface CaseResult {
  readonly name: string;
  readonly median: number;
  readonly q1: number;
  readonly q3: number;
  readonly bytes: number;
}

const out: PlayerColumns = { ids: new Uint32Array(256), x: new Float32Array(256), y: new Float32Array(256), heading: new Float32Array(256), flags: new Uint8Array(256) };

/** Median, first and third quartiles. */
function quartiles(v: number[]): [number, number, number] {
  const s = [...v].sort((a, b) => a - b);
  const at = (q: number) => s[Math.floor(q * (s.length - 1))] as number;
  return [at(0.5), at(0.25), at(0.75)];
}

/** Applies `frame` and reads every updated cell: the players read. */
function applyAndRead(h: Held, frame: Uint8Array, s: WalkerScene): number {
  const error = h.apply(frame);
  if (error) throw new Error(error.message);
  let read = 0;
  for (let i = 0; i < h.updateCount; i++) {
    const c = h.update(i).held;
    if (!c) continue;
    c.readPlayers(out, s.bounds);
    read += c.playerCount;
  }
  return read;
}

/** A Held that took the scene's full forms; its steady frames taken in turn (their players read, or not). */
function deltas(turning: number, read = true): () => number {
  const s = walkerScene(PLAYERS, turning);
  const h = new Held(new Motion(s.bounds, s.speed, s.tickHz), 1000);
  applyAndRead(h, s.setup, s);
  let k = 0;
  if (!read) return () => (h.apply(s.steady[k++ & 1] as Uint8Array) ? 1 : 0);
  return () => applyAndRead(h, s.steady[k++ & 1] as Uint8Array, s);
}

function fullForms(): () => number {
  const s = walkerScene(PLAYERS, 0);
  const h = new Held(new Motion(s.bounds, s.speed, s.tickHz), 1000);
  return () => applyAndRead(h, s.setup, s);
}

/**
 * Runs every case warm, then `rounds` rounds in turn of BATCH frames each,
 * timed by `clockUs` (microseconds: CPU time in Node, the page's clock in a
 * browser); each case's median and quartiles of microseconds a frame.
 */
export function runDecodeBench(rounds: number, clockUs: () => number): CaseResult[] {
  const cases: [string, () => number, number][] = [
    ['deltas: every walker going straight', deltas(0), walkerScene(PLAYERS, 0).steady[0].length],
    ['deltas: a walker turning in 3 cells', deltas(3), walkerScene(PLAYERS, 3).steady[0].length],
    ['full forms of every cell (a resync)', fullForms(), walkerScene(PLAYERS, 0).setup.length],
    ['walkers straight, applied, not read', deltas(0, false), 0],
  ];
  let sink = 0;
  for (const [, frame] of cases) for (let i = 0; i < WARM; i++) sink += frame();
  const times: number[][] = cases.map(() => []);
  for (let r = 0; r < rounds; r++) {
    cases.forEach(([, frame], k) => {
      const t0 = clockUs();
      for (let i = 0; i < BATCH; i++) sink += frame();
      times[k]?.push((clockUs() - t0) / BATCH);
    });
  }
  if (sink < 0) throw new Error('unreachable');
  return cases.map(([name, , bytes], k) => {
    const [median, q1, q3] = quartiles(times[k] ?? []);
    return { name, median, q1, q3, bytes };
  });
}

/** The results as the benches print them. */
export function formatResults(results: readonly CaseResult[], rounds: number, clock: string): string {
  const lines = [`${PLAYERS} players in ${CELLS} cells, ${rounds} rounds of ${BATCH} frames; ${clock} microseconds a frame: median [quartiles]`];
  for (const r of results) {
    lines.push(`${r.name.padEnd(40)} ${r.median.toFixed(2).padStart(6)} [${r.q1.toFixed(2)}, ${r.q3.toFixed(2)}]${r.bytes ? `  (${r.bytes} bytes of view)` : ''}`);
  }
  return lines.join('\n');
}
