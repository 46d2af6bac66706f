// Differential test of protocol 6's view frame decoders, Rust against TypeScript: the
// Rust oracle (schema/examples/delta_oracle.rs, run here with cargo) prints
// valid view frames of the shared cases and many mutants of them (bytes
// flipped, cut, inserted; items' bodies, kinds and deltas changed; cells
// moved), each with what Rust's ViewFrame::parse and Held::apply make of it
// after a setup frame. The browser's Held (src/net/held.ts) gets the same
// bytes, inside a bigger buffer whose bytes after the frame are the valid
// frame it was made from, and must give the same verdict (accepted, refused
// whole, or refused at the same item with the same error) and hold the same
// cells: so it never accepts what Rust refuses, never refuses what Rust
// accepts, and never reads outside the frame. In the worlds with a grid
// (the W line's cell size > 0) both hand players off between cells, and
// read implied cells (protocol 7) with the stencil of the W line's view
// radius (its tenth field, when there is one). A seed of a lossy sequence
// (frames lost, late and out of order) and its mutants are held by the
// lossy rule of datagrams on both sides (net/held.ts's `Delivery`).
//
// MINO_DIFF_CASES (default 20,000) and MINO_DIFF_SEED (default 1) run more
// or other mutants.
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DeltaError } from '../src/net/delta.js';
import { CellGrid } from '../src/net/grid.js';
import { Held } from '../src/net/held.js';
import { Motion } from '../src/net/motion.js';
import { Stencil } from '../src/net/stencil.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CASES = Number(process.env.MINO_DIFF_CASES ?? 20_000);
const SEED = process.env.MINO_DIFF_SEED ?? '1';

/**
 * The oracle's output (cargo builds it first if needed), read without
 * blocking the test worker (a build may take minutes).
 */
async function oracle(): Promise<string[]> {
  const args = ['run', '-q', '-p', 'mino-protocol', '--example', 'delta_oracle', '--', '--cases', String(CASES), '--seed', SEED];
  const child = spawn('cargo', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  const status = await new Promise<number | null>((done, fail) => {
    child.on('error', fail);
    child.on('close', done);
  });
  if (status !== 0) throw new Error(`cargo ${args.join(' ')} failed (${status}): ${Buffer.concat(err).toString()}`);
  return Buffer.concat(out)
    .toString()
    .split('\n')
    .filter((l) => l.length > 0);
}

function bytesOf(hex: string): Uint8Array {
  if (hex === '-') return new Uint8Array(0);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** FNV-1a over little-endian u32 words (the oracle's digest). */
class Fnv {
  h = 0x811c9dc5;
  word(w: number): void {
    for (let k = 0; k < 4; k++) {
      this.h ^= (w >>> (8 * k)) & 0xff;
      this.h = Math.imul(this.h, 16777619) >>> 0;
    }
  }
}

/** The oracle's digest of what `held` holds and, when the frame applied, its updates. */
function digest(held: Held, applied: boolean): string {
  const h = new Fnv();
  const cells: { shard: number; cell: number; c: NonNullable<ReturnType<Held['cell']>> }[] = [];
  held.forEachCell((c) => cells.push({ shard: c.shard, cell: c.cell, c }));
  cells.sort((a, b) => a.shard - b.shard || a.cell - b.cell);
  for (const { shard, cell, c } of cells) {
    const e = c.entries;
    for (const w of [shard, cell, c.tick, e.count]) h.word(w);
    for (let i = 0; i < e.count; i++) {
      h.word(e.ids[i] as number);
      h.word((e.x[i] as number) | ((e.y[i] as number) << 16));
      h.word((e.heading[i] as number) | ((e.flags[i] as number) << 8));
    }
  }
  if (applied) {
    for (let i = 0; i < held.updateCount; i++) {
      const u = held.update(i);
      const kind = u.kind === 'cell' ? 1 : u.kind === 'forgot' ? 2 : u.kind === 'reset' ? 3 : 4;
      for (const w of [kind, u.shard, u.cell, u.tick]) h.word(w);
    }
  }
  return h.h.toString(16).padStart(8, '0');
}

/** Applies bytes[start, end) to `held`: the oracle's verdict. */
function verdict(held: Held, bytes: Uint8Array, start: number, end: number): string {
  const e = held.apply(bytes, start, end);
  if (!e) return 'ok';
  if (e.kind === 'frame') return `frame:${e.error.label}`;
  return `item:${e.shard}:${e.cell}:${e.error instanceof DeltaError ? e.error.label : `not a DeltaError: ${e.error.label}`}`;
}

interface World {
  motion: Motion;
  maxPlayers: number;
  /** The world's grid (null: cell size 0, nobody handed off). */
  grid: CellGrid | null;
  /** The stencil implied cells are read with (null: refused). */
  stencil: Stencil | null;
}

interface Seed {
  world: number;
  /** Held by the lossy rule of datagrams (the oracle's `lossy`), else in order. */
  lossy: boolean;
  setup: Uint8Array;
  frame: Uint8Array;
}

describe('protocol 8: the browser decodes as Rust does', () => {
  it(`agrees with Rust on ${CASES} mutants of valid frames (seed ${SEED})`, { timeout: 900_000 }, async () => {
    const worlds: World[] = [];
    const seeds: Seed[] = [];
    const mismatches: string[] = [];
    const tally = new Map<string, number>();
    const labels = new Set<string>();
    let cases = 0;
    let lossySeeds = 0;
    const fresh = (s: Seed): Held => {
      const w = worlds[s.world] as World;
      const held = new Held(w.motion, w.maxPlayers)
        .handingOff(w.grid)
        .seeing(w.stencil)
        .delivered(s.lossy ? 'lossy' : 'in-order');
      if (s.setup.length > 0) {
        const e = held.apply(s.setup);
        if (e) throw new Error(`a setup frame is refused: ${e.message}`);
      }
      return held;
    };
    const lines = await oracle();
    for (let n = 0; n < lines.length; n++) {
      // Let the worker answer its runner now and then.
      if (n % 2000 === 0) await new Promise((next) => setImmediate(next));
      const f = (lines[n] as string).split(' ');
      if (f[0] === 'W') {
        const v = f.slice(1).map(Number);
        const at = (i: number) => v[i] ?? Number.NaN;
        // W world min_x min_y max_x max_y speed tick_hz max_players cell_size [view_radius]
        const bounds = { minX: at(1), minY: at(2), maxX: at(3), maxY: at(4) };
        if (!(at(8) >= 0)) throw new Error(`a world line without a cell size: ${lines[n] as string}`);
        const grid = at(8) > 0 ? CellGrid.of(bounds, at(8)) : null;
        const stencil = grid && v.length > 9 ? Stencil.ofView(at(9), at(8)) : null;
        worlds[at(0)] = { motion: new Motion(bounds, at(5), at(6)), maxPlayers: at(7), grid, stencil };
      } else if (f[0] === 'S') {
        // S seed world delivery setup frame digest-after-setup verdict digest
        if (f[3] !== 'in-order' && f[3] !== 'lossy') throw new Error(`a seed line without its delivery: ${lines[n] as string}`);
        const s: Seed = { world: Number(f[2]), lossy: f[3] === 'lossy', setup: bytesOf(f[4] ?? '-'), frame: bytesOf(f[5] ?? '-') };
        seeds[Number(f[1])] = s;
        if (s.lossy) lossySeeds++;
        const held = fresh(s);
        expect(digest(held, false), `seed ${f[1]}'s setup`).toBe(f[6]);
        const got = verdict(held, s.frame, 0, s.frame.length);
        expect([got, digest(held, got === 'ok')], `seed ${f[1]}'s frame`).toEqual([f[7], f[8]]);
      } else if (f[0] === 'C') {
        cases++;
        const s = seeds[Number(f[1])] as Seed;
        const mutant = bytesOf(f[2] ?? '-');
        // Junk before the frame, the valid frame it came from after it.
        const buf = new Uint8Array(7 + mutant.length + s.frame.length).fill(0x80);
        buf.set(mutant, 7);
        buf.set(s.frame, 7 + mutant.length);
        const held = fresh(s);
        const got = verdict(held, buf, 7, 7 + mutant.length);
        const sum = digest(held, got === 'ok');
        const want = f[3] ?? '?';
        const kind = want.split(':')[0] ?? want;
        tally.set(kind, (tally.get(kind) ?? 0) + 1);
        labels.add(want.replace(/^item:\d+:\d+:/, 'item:').replace(/\(\d+\)/, ''));
        if (got !== want || sum !== f[4]) {
          const what = got !== want ? `Rust says ${want}, the browser ${got}` : `both say ${got}, but hold different cells`;
          if (mismatches.length < 5) mismatches.push(`seed ${f[1]}, mutant ${f[2]}: ${what}`);
          else mismatches.length++;
        }
      }
    }
    expect(cases).toBe(CASES);
    expect(lossySeeds, 'seeds held by the lossy rule').toBeGreaterThan(20);
    expect(mismatches).toEqual([]);
    // The mutants reach every layer: accepted, refused whole, refused at an item, for many reasons.
    const share = (k: string) => (tally.get(k) ?? 0) / CASES;
    expect(share('ok')).toBeGreaterThan(0.2);
    expect(share('frame')).toBeGreaterThan(0.2);
    expect(share('item')).toBeGreaterThan(0.1);
    if (CASES >= 10_000) {
      // Every verdict a frame can get: each ViewError, and each DeltaError
      // but Span (an item's kind always names a valid span), a supplement
      // not after a delta and a misplaced unchanged item among them.
      const frame = ['EmptySection', 'Cells', 'Items', 'Kind', 'ForgetBody', 'Implied', 'Bytes(Truncated)', 'Bytes(TooMany)', 'Bytes(Varint)'];
      const item = ['Truncated', 'Varint', 'Trailing', 'Ids', 'Index', 'Change', 'Position', 'Duplicate', 'TooMany', 'Counts', 'Supplement', 'Unchanged'];
      const all = ['ok', ...frame.map((e) => `frame:${e}`), ...item.map((e) => `item:${e}`)];
      expect([...labels].sort()).toEqual(all.sort());
    }
  });
});
