// Protocol 7 against the shared fixture Rust's encoders and Held wrote
// (schema/tests/delta_fixture.rs): every sequence of view frames applied in
// order (in order, or by the lossy rule of datagrams, as the sequence says)
// must leave exactly the cells Rust's Held holds (handing players off
// between cells and reading implied cells in the worlds with a grid), make
// the same updates and fail at the same items, or refuse the same sections'
// implied cells, with the same errors; every malformed
// frame, delta and full form must be refused with Rust's error; and none of
// it may read a byte outside the frame, however the buffer around it goes on.
import { describe, expect, it } from 'vitest';
import fixture from '../../../schema/fixtures/delta.json';
import { DeltaError, Entries, Reader, applyDelta, decodeFull, type DeltaErrorKind } from './delta.js';
import { CellGrid } from './grid.js';
import { Held, type HeldCell } from './held.js';
import { Motion } from './motion.js';
import { Stencil } from './stencil.js';
import { verifyViewFrame } from './view.js';

interface World {
  bounds: { min_x: number; min_y: number; max_x: number; max_y: number };
  speed: number;
  tick_hz: number;
  max_players: number;
  /** The grid's cell side, world units (0: no grid, nobody handed off). */
  cell_size: number;
  /** The view radius, world units: implied cells are read with its stencil (with a grid). */
  view_radius: number;
}
type EntryRow = number[];
type HeldRow = [number, number, number, EntryRow[]];
/** An item that does not apply (Rust's `HeldError::Item`), or a section's implied cells refused (`HeldError::Frame`). */
type FrameError = { shard: number; cell: number; error: string } | { frame: string };
interface Frame {
  hex: string;
  error: FrameError | null;
  updates: (string | number)[][] | null;
  held: HeldRow[];
}
interface Sequence {
  name: string;
  world: number;
  /** How its frames reach the client: 'in order', or 'lossy' (datagrams, held by the lossy rule). */
  delivery: 'in order' | 'lossy';
  frames: Frame[];
}

const worlds = fixture.worlds as World[];
const sequences = fixture.sequences as unknown as Sequence[];

function bytesOf(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function boundsOf(w: World): { minX: number; minY: number; maxX: number; maxY: number } {
  const b = w.bounds;
  return { minX: b.min_x, minY: b.min_y, maxX: b.max_x, maxY: b.max_y };
}

function motion(w: World): Motion {
  return new Motion(boundsOf(w), w.speed, w.tick_hz);
}

/**
 * A client of world `w` holding nothing yet, handing players off and
 * reading implied cells with the world's stencil when it has a grid
 * (delta_cases' `World::held`).
 */
function heldOf(w: World, delivery: Sequence['delivery'] = 'in order'): Held {
  const grid = w.cell_size > 0 ? CellGrid.of(boundsOf(w), w.cell_size) : null;
  return new Held(motion(w), w.max_players)
    .handingOff(grid)
    .seeing(grid ? Stencil.ofView(w.view_radius, w.cell_size) : null)
    .delivered(delivery === 'lossy' ? 'lossy' : 'in-order');
}

function rows(e: Entries): EntryRow[] {
  const out: EntryRow[] = [];
  for (let i = 0; i < e.count; i++) out.push([e.ids[i] ?? -1, e.x[i] ?? -1, e.y[i] ?? -1, e.heading[i] ?? -1, e.flags[i] ?? -1]);
  return out;
}

/** Every held cell as the fixture lists them: [shard, cell, tick, players], sorted. */
function heldRows(held: Held): HeldRow[] {
  const cells: HeldCell[] = [];
  held.forEachCell((c) => cells.push(c));
  cells.sort((a, b) => a.shard - b.shard || a.cell - b.cell);
  return cells.map((c) => [c.shard, c.cell, c.tick, rows(c.entries)]);
}

function updateRows(held: Held): (string | number)[][] {
  const out: (string | number)[][] = [];
  for (let i = 0; i < held.updateCount; i++) {
    const u = held.update(i);
    out.push([u.kind, u.shard, u.cell, u.tick]);
  }
  return out;
}

function entriesOf(list: EntryRow[]): Entries {
  const e = new Entries(list.length);
  for (const [id, x, y, h, f] of list) e.push(id ?? 0, x ?? 0, y ?? 0, h ?? 0, f ?? 0);
  return e;
}

/** `bytes` inside a bigger buffer, `junk` bytes of `fill` before and after. */
function embedded(bytes: Uint8Array, junk: number, fill: number): { buf: Uint8Array; start: number; end: number } {
  const buf = new Uint8Array(bytes.length + 2 * junk).fill(fill);
  buf.set(bytes, junk);
  return { buf, start: junk, end: junk + bytes.length };
}

/** Applies a sequence's frames to a fresh Held, each framed by `junk` bytes of `fill`, checking each against the fixture. */
function replay(seq: Sequence, junk: number, fill: number): void {
  const held = heldOf(worlds[seq.world] as World, seq.delivery);
  seq.frames.forEach((f, k) => {
    const { buf, start, end } = embedded(bytesOf(f.hex), junk, fill);
    const error = held.apply(buf, start, end);
    const where = `${seq.name}, frame ${k}`;
    if (f.error && 'frame' in f.error) {
      expect([error?.kind, error?.error.label], where).toEqual(['frame', f.error.frame]);
      expect(held.updateCount, where).toBe(0);
    } else if (f.error) {
      expect(error?.kind, where).toBe('item');
      expect([error?.shard, error?.cell, error?.error instanceof DeltaError ? error.error.label : '?'], where).toEqual([f.error.shard, f.error.cell, f.error.error]);
      expect(held.updateCount, where).toBe(0);
    } else {
      expect(error?.message ?? null, where).toBeNull();
      expect(updateRows(held), where).toEqual(f.updates);
    }
    expect(heldRows(held), where).toEqual(f.held);
  });
}

describe('protocol 8 against the Rust fixture', () => {
  it('has sequences, malformed frames, deltas and full forms to check', () => {
    expect(sequences.length).toBeGreaterThanOrEqual(12);
    expect(sequences.some((s) => (worlds[s.world] as World).cell_size > 0)).toBe(true);
    expect(sequences.reduce((n, s) => n + s.frames.length, 0)).toBeGreaterThan(100);
    // Frames lost, late and out of order, held by the lossy rule: some applied, some passed over, some broken.
    const lossy = sequences.filter((s) => s.delivery === 'lossy').flatMap((s) => s.frames.flatMap((f) => f.updates ?? []));
    expect(new Set(lossy.map((u) => u[0]))).toEqual(new Set(['cell', 'forgot', 'broken']));
    expect(fixture.bad_frames.length).toBeGreaterThan(10);
    expect(fixture.bad_deltas.length).toBeGreaterThan(20);
    expect(fixture.bad_fulls.length).toBeGreaterThan(5);
    // Implied cells read, and refused, in a world with a grid.
    const frameErrors = sequences.flatMap((s) => s.frames.flatMap((f) => (f.error && 'frame' in f.error ? [f.error.frame] : [])));
    expect(frameErrors.length).toBeGreaterThanOrEqual(2);
    expect(new Set(frameErrors)).toEqual(new Set(['Implied']));
    expect(fixture.bad_frames.filter((f) => f.error === 'Implied').length).toBeGreaterThanOrEqual(5);
  });

  it('refuses items at every error an item can meet, a misplaced supplement and unchanged item among them', () => {
    const seen = new Set(sequences.flatMap((s) => s.frames.flatMap((f) => (f.error && 'error' in f.error ? [f.error.error.replace(/\(\d+\)$/, '')] : []))));
    const kinds: DeltaErrorKind[] = ['Truncated', 'Varint', 'Trailing', 'Ids', 'Index', 'Change', 'Position', 'Duplicate', 'TooMany', 'Counts', 'Supplement', 'Unchanged'];
    expect([...seen].sort()).toEqual([...kinds].sort());
  });

  for (const seq of sequences) {
    it(`holds what Rust's Held holds after every frame: ${seq.name}`, () => {
      replay(seq, 0, 0);
    });
  }

  it('reads only the frame in a bigger buffer, whatever surrounds it', () => {
    for (const seq of sequences) for (const fill of [0x00, 0x01, 0x80, 0xff]) replay(seq, 9, fill);
  });

  it("refuses every malformed frame with Rust's error, and holds nothing of it", () => {
    const held = heldOf(worlds[0] as World);
    for (const f of fixture.bad_frames) {
      const bytes = bytesOf(f.hex);
      expect(verifyViewFrame(bytes)?.label, f.name).toBe(f.error);
      const refused = held.apply(bytes);
      expect([refused?.kind, refused?.error.message], f.name).toEqual(['frame', verifyViewFrame(bytes)?.message]);
      expect(heldRows(held), f.name).toEqual([]);
    }
  });

  it('never takes a byte past the frame: every cut of every frame reads as it does alone', () => {
    for (const seq of sequences) {
      for (const f of seq.frames) {
        const whole = bytesOf(f.hex);
        for (let cut = 0; cut < whole.length; cut++) {
          // The cut's continuation is right there in the buffer.
          expect(verifyViewFrame(whole, 0, cut)?.label, `${seq.name} cut at ${cut}`).toBe(verifyViewFrame(whole.slice(0, cut))?.label);
          expect(verifyViewFrame(whole, cut, whole.length)?.label).toBe(verifyViewFrame(whole.slice(cut))?.label);
        }
      }
    }
  });

  it("refuses every malformed delta with Rust's error", () => {
    const r = new Reader();
    const out = new Entries();
    for (const d of fixture.bad_deltas) {
      const body = bytesOf(d.body);
      const base = entriesOf(d.base);
      let label = 'applied';
      try {
        applyDelta(base, r.reset(body, 0, body.length), d.span, motion(worlds[d.world] as World), d.max_players, out);
      } catch (e) {
        label = e instanceof DeltaError ? e.label : String(e);
      }
      expect(label, d.name).toBe(d.error);
    }
  });

  it("refuses every malformed full form with Rust's error", () => {
    const r = new Reader();
    const out = new Entries();
    for (const d of fixture.bad_fulls) {
      const body = bytesOf(d.body);
      let label = 'decoded';
      try {
        decodeFull(r.reset(body, 0, body.length), d.max_players, out);
      } catch (e) {
        label = e instanceof DeltaError ? e.label : String(e);
      }
      expect(label, d.name).toBe(d.error);
    }
  });
});
