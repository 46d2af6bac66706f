// Merging shards by player id, dropping dead shards, not interpolating
// teleports, and a steady frame that allocates nothing.
import { describe, expect, it } from 'vitest';
import type { PlayerColumns, SnapshotMsg } from '../net/protocol.js';
import { FRAME_BUDGET_BYTES, MEASURED_FRAMES, WARM_FRAMES, bytesPerFrame } from '../testing/allocation.js';
import { WORLD, snapshotOf, type TestPlayer } from '../testing/snapshots.js';
import { InterpolatedWorld } from './world.js';

const EPOCH = 1_764_450_000_000;

/** Feeds ticks [from, to) of `shard` listing `players(tick)`, each arriving 10 ms after its tick. */
function feed(w: InterpolatedWorld, shard: number, from: number, to: number, players: (tick: number) => TestPlayer[]): void {
  for (let tick = from; tick < to; tick++) w.onSnapshot(snapshotOf(shard, tick, EPOCH + tick * 50, players(tick)), tick * 50 + 10);
}

function positions(w: InterpolatedWorld): Map<number, [number, number]> {
  const out = new Map<number, [number, number]>();
  const p = w.players;
  for (let i = 0; i < p.count; i++) {
    expect(out.has(p.ids[i] as number)).toBe(false);
    out.set(p.ids[i] as number, [p.x[i] as number, p.y[i] as number]);
  }
  return out;
}

describe('shard merging', () => {
  it('shows the players of every shard together', () => {
    const w = new InterpolatedWorld();
    feed(w, 1, 1, 20, () => [{ id: 10, x: 100, y: 100 }]);
    feed(w, 2, 1, 20, () => [{ id: 20, x: 200, y: 200 }, { id: 21, x: 300, y: 300 }]);
    w.update(20 * 50);
    expect([...positions(w).keys()].sort()).toEqual([10, 20, 21]);
    expect(w.shardCount).toBe(2);
  });

  it('shows a player that moved between shards once, from the shard that lists it now', () => {
    const w = new InterpolatedWorld();
    // Player 5 walks on shard 1 until tick 10, then shard 2 lists it (at x=400) while
    // shard 1 still sends its other player; both shards' snapshots overlap in time.
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

  it('drops a shard that went silent while another still sends, and keeps the view when all are silent', () => {
    const w = new InterpolatedWorld(2000);
    feed(w, 1, 1, 20, () => [{ id: 1, x: 10, y: 10 }]);
    feed(w, 2, 1, 80, () => [{ id: 2, x: 20, y: 20 }]);
    w.update(80 * 50);
    expect([...positions(w).keys()]).toEqual([2]);
    expect(w.shardCount).toBe(1);
    // Nobody sends for a minute: the last view stays.
    w.update(80 * 50 + 60_000);
    expect([...positions(w).keys()]).toEqual([2]);
  });

  it('does not slide a player across the world after a teleport', () => {
    const w = new InterpolatedWorld();
    feed(w, 1, 1, 11, (t) => [{ id: 1, x: t < 10 ? 10 : 900, y: 10 }]);
    // Render exactly between tick 9 (x=10) and tick 10 (x=900).
    const track = w.track(1);
    expect(track).toBeDefined();
    for (let now = 0; now < 1000; now += 10) {
      w.update(now);
      const x = positions(w).get(1)?.[0];
      expect(x === 10 || x === 900).toBe(true);
    }
  });

  it('ignores duplicate and out-of-order snapshots', () => {
    const w = new InterpolatedWorld();
    feed(w, 1, 1, 10, () => [{ id: 1, x: 1, y: 1 }]);
    const before = w.bufferedSnapshots();
    w.onSnapshot(snapshotOf(1, 5, EPOCH + 250, [{ id: 1, x: 999, y: 999 }]), 600);
    w.onSnapshot(snapshotOf(1, 9, EPOCH + 450, [{ id: 1, x: 999, y: 999 }]), 600);
    expect(w.bufferedSnapshots()).toBe(before);
  });

  it('starts a shard over when its ticks restart (same shard id, later time)', () => {
    const w = new InterpolatedWorld();
    feed(w, 1, 100, 110, () => [{ id: 1, x: 1, y: 1 }]);
    w.onSnapshot(snapshotOf(1, 1, EPOCH + 200 * 50, [{ id: 2, x: 5, y: 5 }]), 200 * 50 + 10);
    expect(w.bufferedSnapshots()).toBe(1);
    w.update(200 * 50 + 20);
    expect([...positions(w).keys()]).toEqual([2]);
  });
});

/** Tick `tick` of shard 1, whose `count` players walk to and fro; copies without allocating. */
class WalkSnapshot implements SnapshotMsg {
  readonly kind = 'snapshot';
  readonly shardId = 1;
  readonly tickHz = 20;
  readonly bounds = WORLD;
  readonly cell = 0;
  readonly serverTimeMs: number;

  constructor(
    readonly tick: number,
    readonly playerCount: number,
  ) {
    this.serverTimeMs = EPOCH + tick * 50;
  }

  readPlayers(out: PlayerColumns): void {
    for (let i = 0; i < this.playerCount; i++) {
      out.ids[i] = i + 1;
      out.x[i] = 350 + Math.abs(((i * 37 + this.tick * 3) % 600) - 300);
      out.y[i] = 100 + ((i * 53) % 800);
      out.heading[i] = (i % 8) * 0.7;
      out.flags[i] = 1;
    }
  }
}

describe('a steady frame', () => {
  it('allocates nothing: 500 walking players, snapshots arriving at 20 Hz, frames at 60 Hz', async () => {
    const w = new InterpolatedWorld();
    const frameMs = 16;
    const ticks = Math.ceil(((WARM_FRAMES + MEASURED_FRAMES) * frameMs) / 50) + 2;
    const snapshots = Array.from({ length: ticks }, (_, t) => new WalkSnapshot(t, 500));
    let now = 0;
    let next = 0;
    const bytes = await bytesPerFrame(() => {
      now += frameMs;
      while (next * 50 + 10 <= now) w.onSnapshot(snapshots[next++] as WalkSnapshot, now);
      w.update(now);
      w.players.indexOf(1);
    });
    expect(w.players.count).toBe(500);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});
