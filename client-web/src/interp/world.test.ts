// Without area of interest each shard is one cell: every shard's players
// merged by id (a player that moved between shards shown once), a reset
// shard's players taken off, teleports not interpolated, and a steady frame of
// one big cell that allocates nothing.
import { describe, expect, it } from 'vitest';
import type { CellState, PlayerColumns } from '../net/protocol.js';
import { FRAME_BUDGET_BYTES, MEASURED_FRAMES, WARM_FRAMES, bytesPerFrame } from '../testing/allocation.js';
import { AOI_TICK0, aoiWelcome, viewCell, type TestPlayer } from '../testing/cells.js';
import { CellWorld } from './cell-world.js';

/** Without area of interest: the whole shard is cell 1. */
const WHOLE = 1;

function world(): CellWorld {
  const w = new CellWorld();
  w.welcome({ ...aoiWelcome(99), aoi: null }, 0);
  return w;
}

/** Feeds ticks [from, to) of `shard`'s one cell listing `players(tick)`, each arriving 10 ms after its tick. */
function feed(w: CellWorld, shard: number, from: number, to: number, players: (tick: number) => TestPlayer[]): void {
  for (let tick = from; tick < to; tick++) w.onCell(viewCell(shard, WHOLE, tick, players(tick)), 1, tick * 50 + 10);
}

function positions(w: CellWorld): Map<number, [number, number]> {
  const out = new Map<number, [number, number]>();
  const p = w.players;
  for (let i = 0; i < p.count; i++) {
    expect(out.has(p.ids[i] as number)).toBe(false);
    out.set(p.ids[i] as number, [p.x[i] as number, p.y[i] as number]);
  }
  return out;
}

describe('shards merged (each shard one cell)', () => {
  it('shows the players of every shard together', () => {
    const w = world();
    feed(w, 1, 1, 20, () => [{ id: 10, x: 100, y: 100 }]);
    feed(w, 2, 1, 20, () => [{ id: 20, x: 200, y: 200 }, { id: 21, x: 300, y: 300 }]);
    w.update(20 * 50);
    expect([...positions(w).keys()].sort()).toEqual([10, 20, 21]);
    expect(w.clocks.list.length).toBe(2);
  });

  it('shows a player that moved between shards once, from the shard that lists it now', () => {
    const w = world();
    // Player 5 stands on shard 1 until tick 10, then shard 2 lists it (at x=400) while
    // shard 1 still lists its other player; both shards' cells overlap in time.
    feed(w, 1, 1, 30, (t) => (t < 10 ? [{ id: 5, x: 300, y: 0 }, { id: 6, x: 0, y: 0 }] : [{ id: 6, x: 0, y: 0 }]));
    feed(w, 2, 8, 30, () => [{ id: 5, x: 400, y: 0 }]);
    for (let now = 9 * 50; now <= 30 * 50; now += 16) {
      w.update(now);
      const pos = positions(w);
      if (pos.has(5) && now > 13 * 50) expect(pos.get(5)).toEqual([400, 0]);
    }
    expect(positions(w).get(5)).toEqual([400, 0]);
    expect(positions(w).get(6)).toEqual([0, 0]);
  });

  it("takes a shard's players off at its reset (it left the place), and keeps the view when nothing comes", () => {
    const w = world();
    feed(w, 1, 1, 20, () => [{ id: 1, x: 10, y: 10 }]);
    feed(w, 2, 1, 80, () => [{ id: 2, x: 20, y: 20 }]);
    w.onReset(1, 20 * 50 + 10);
    w.update(80 * 50);
    expect([...positions(w).keys()]).toEqual([2]);
    // Nothing comes for a minute (a still place sends nothing): the last view stays.
    w.update(80 * 50 + 60_000);
    expect([...positions(w).keys()]).toEqual([2]);
  });

  it('does not slide a player across the world after a teleport', () => {
    const w = world();
    feed(w, 1, 1, 11, (t) => [{ id: 1, x: t < 10 ? 10 : 900, y: 10, flags: 1 }]);
    // Render exactly between tick 9 (x=10) and tick 10 (x=900).
    for (let now = 0; now < 1000; now += 10) {
      w.update(now);
      const x = positions(w).get(1)?.[0];
      expect(x === 10 || x === 900).toBe(true);
    }
  });

  it('ignores a repeated and an older state of a cell', () => {
    const w = world();
    feed(w, 1, 1, 10, () => [{ id: 1, x: 1, y: 1 }]);
    const slot = w.tracks.slotOf(1);
    const before = w.tracks.samples(slot);
    w.onCell(viewCell(1, WHOLE, 5, [{ id: 1, x: 999, y: 999 }]), 1, 600);
    w.onCell(viewCell(1, WHOLE, 9, [{ id: 1, x: 999, y: 999 }]), 1, 600);
    expect(w.tracks.samples(slot)).toBe(before);
    expect(w.staleFrames).toBe(2);
  });
});

/** Tick `t` of shard 1's one cell, whose `playerCount` players walk to and fro; copies without allocating. */
class WalkShard implements CellState {
  readonly shard = 0xc0ff_ee00;
  readonly cell = WHOLE;
  readonly tick: number;

  constructor(
    private readonly t: number,
    readonly playerCount: number,
  ) {
    this.tick = (AOI_TICK0 + t) % 2 ** 32;
  }

  readPlayers(out: PlayerColumns): void {
    for (let i = 0; i < this.playerCount; i++) {
      out.ids[i] = i + 1;
      out.x[i] = 350 + Math.abs(((i * 37 + this.t * 3) % 600) - 300);
      out.y[i] = 100 + ((i * 53) % 800);
      out.heading[i] = (i % 8) * 0.7;
      out.flags[i] = 1;
    }
  }
}

describe('a steady frame', () => {
  it('allocates nothing: 500 walking players in one shard, its cell changed every tick at 20 Hz, frames at 60 Hz', async () => {
    const w = world();
    const frameMs = 16;
    const ticks = Math.ceil(((WARM_FRAMES + 3 * MEASURED_FRAMES) * frameMs) / 50) + 2;
    const cells = Array.from({ length: ticks }, (_, t) => new WalkShard(t, 500));
    let now = 0;
    let next = 0;
    const bytes = await bytesPerFrame(() => {
      now += frameMs;
      while (next * 50 + 10 <= now) w.onCell(cells[next++] as WalkShard, 1, now);
      w.update(now);
      w.players.indexOf(1);
    });
    expect(w.players.count).toBe(500);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  }, 30_000);
});
