// Protocol 8 view frames written in the tests, for what the shared fixture
// (schema/fixtures/delta.json, written by Rust) does not need to pin: frames
// of a size a test picks (a steady frame of walkers for the allocation test
// and the decode benchmark). Only full forms, empty deltas and heading
// changes: anything subtler comes from Rust's encoders. Trusts its input.

/** A player as the wire carries it (quantized position, heading 0..255, flags). */
export interface WirePlayer {
  readonly id: number;
  readonly x: number;
  readonly y: number;
  readonly heading: number;
  readonly flags: number;
}

/** Appends `v` (a non-negative integer below 2^53) as a LEB128 varint. */
export function putVarint(out: number[], v: number): void {
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

/** The body of a full form of `players` (sorted by id): no count, the players run to the item's end. */
export function fullBody(players: readonly WirePlayer[]): number[] {
  const out: number[] = [];
  let last = 0;
  for (const p of players) {
    putVarint(out, p.id - last);
    last = p.id;
    out.push(p.x & 0xff, p.x >> 8, p.y & 0xff, p.y >> 8, p.heading, p.flags);
  }
  return out;
}

/**
 * The body of a delta whose only records are heading changes: `turns` as
 * [base index, new heading], by increasing index (fewer than 8). Every other
 * player goes where the movement rule puts it.
 */
export function turnsBody(turns: readonly (readonly [number, number])[]): number[] {
  if (turns.length === 0) return [];
  const out = [turns.length << 2];
  let last = 0;
  for (const [index, heading] of turns) {
    putVarint(out, (index - last) * 8 + 1);
    last = index;
    out.push(heading);
  }
  return out;
}

/** An item: kind 0 (full), 1..7 (a delta over 2^(kind-1) ticks), 8 (forget) or 9 (a supplement, a full form's body), and its body. */
export function item(kind: number, body: readonly number[]): number[] {
  const out: number[] = [];
  if (body.length < 15) out.push(kind | (body.length << 4));
  else {
    out.push(kind | 0xf0);
    putVarint(out, body.length - 15);
  }
  return out.concat(body);
}

/**
 * A section's implied block (protocol 7, net/view.ts), as written: the due
 * exponent `k` and the `rung` (written as given, valid or not), the view's
 * `key` and `previous` cell when named (form 1; without them form 2, the
 * frame's last named view), the candidates' `count`, and the bits of the
 * implied ones (`bits`: candidate indices; or `bytes`, written as given).
 */
export interface ImpliedBlock {
  readonly k: number;
  readonly rung: number;
  readonly view?: { readonly key: number; readonly previous: number };
  readonly count: number;
  readonly bits?: readonly number[];
  readonly bytes?: readonly number[];
}

/** The bytes of an implied block's due byte, view, count and bits. */
export function impliedBytes(b: ImpliedBlock): number[] {
  const out = [b.k | (b.rung << 3)];
  if (b.view) {
    putVarint(out, b.view.key);
    const d = b.view.previous - b.view.key;
    putVarint(out, b.view.previous === 0 ? 0 : (d >= 0 ? 2 * d : -2 * d - 1) + 1);
  }
  putVarint(out, b.count);
  if (b.bytes) out.push(...b.bytes);
  else {
    const bits = new Array<number>(Math.ceil(b.count / 8)).fill(0);
    for (const i of b.bits ?? []) {
      if (i >= b.count) throw new RangeError(`bit ${i} of ${b.count}`);
      bits[i >> 3] = (bits[i >> 3] as number) | (1 << (i & 7));
    }
    out.push(...bits);
  }
  return out;
}

/**
 * One section: a shard's cells (by increasing id) at its tick, each with its
 * items, and its implied block if any (form 0 without, else 1 or 2).
 */
export function section(
  shard: number,
  tick: number,
  cells: readonly (readonly [number, readonly (readonly number[])[]])[],
  implied?: ImpliedBlock,
): number[] {
  const out: number[] = [];
  const u32 = (v: number) => out.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
  u32(shard);
  u32(tick);
  // The head: cells << 2 | form.
  putVarint(out, cells.length * 4 + (implied ? (implied.view ? 1 : 2) : 0));
  if (implied) out.push(...impliedBytes(implied));
  let previous = 0;
  for (const [cell, items] of cells) {
    // Mode 0: one item; 1: several; 2..=7: an empty delta over 2^(mode-2)
    // ticks, said by the reference alone (its tag, 1..=6, is not written).
    const only = items.length === 1 ? items[0] : undefined;
    const emptyTag = only?.length === 1 && (only[0] as number) >= 1 && (only[0] as number) <= 6 ? (only[0] as number) : 0;
    const mode = emptyTag > 0 ? emptyTag + 1 : items.length > 1 ? 1 : 0;
    putVarint(out, (cell - previous) * 8 + mode);
    previous = cell;
    if (items.length > 1) putVarint(out, items.length);
    if (emptyTag === 0) for (const i of items) out.push(...i);
  }
  return out;
}

/** A frame of sections. */
export function frameOf(...sections: (readonly number[])[]): Uint8Array {
  return Uint8Array.from(sections.flat());
}

/**
 * The walker scene's shard and first tick: past 2^30 (V8's small integers),
 * as most are (shard ids are random u32s, ticks follow the wall clock).
 */
const SHARD = 0xdead_beef;
const TICK = 0xffff_fff0;

/** A view of walkers as the decode benchmark and the allocation test read it. */
export interface WalkerScene {
  /** The world's bounds (world units), speed (units/s) and tick rate (Hz). */
  readonly bounds: { minX: number; minY: number; maxX: number; maxY: number };
  readonly speed: number;
  readonly tickHz: number;
  /** Players in view, cells in view. */
  readonly players: number;
  readonly cells: number;
  /** The frame that tells every cell's full form. */
  readonly setup: Uint8Array;
  /**
   * Two steady frames (take them in turn): every cell an empty delta over
   * one tick (its walkers going straight), but `turning` cells where one
   * walker turns.
   */
  readonly steady: readonly [Uint8Array, Uint8Array];
}

/**
 * `players` walkers (nearly all walking) in a 3 x 3 view of cells of one
 * shard, 4,000 world units a side at 120 units/s and 20 Hz (the walk game's
 * speed); in each steady frame `turning` of the cells have a walker turn.
 */
export function walkerScene(players = 165, turning = 3): WalkerScene {
  const cells = 9;
  const byCell: WirePlayer[][] = Array.from({ length: cells }, () => []);
  for (let i = 0; i < players; i++) {
    const c = i % cells;
    byCell[c]?.push({ id: 1000 + i * 7, x: 20_000 + (i * 97) % 20_000, y: 20_000 + (i * 53) % 20_000, heading: (i * 37) & 255, flags: i % 10 === 0 ? 0 : 1 });
  }
  const cellId = (c: number) => 1 + Math.floor(c / 3) * 64 + (c % 3);
  const setup = frameOf(section(SHARD, TICK, byCell.map((ps, c) => [cellId(c), [item(0, fullBody(ps))]] as const)));
  const steady = (heading: number) =>
    frameOf(section(SHARD, TICK + 1, byCell.map((_, c) => [cellId(c), [item(1, c < turning ? turnsBody([[c, heading]]) : [])]] as const)));
  return { bounds: { minX: 0, minY: 0, maxX: 4000, maxY: 4000 }, speed: 120, tickHz: 20, players, cells, setup, steady: [steady(10), steady(200)] };
}
