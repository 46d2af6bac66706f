import { describe, expect, it } from 'vitest';
import { MergedPlayers } from '../interp/world.js';
import { FRAME_BUDGET_BYTES, bytesPerFrame } from '../testing/allocation.js';
import { seeded, SimServer, type SimOptions } from '../testing/sim-server.js';
import { ACK_MASK, InputTimeline } from './inputs.js';
import { stepLength, unitX, unitY, walkAxis } from './movement.js';
import { Motion } from '../net/motion.js';
import { OwnPrediction } from './prediction.js';

const BOUNDS = { minX: 0, minY: 0, maxX: 1000, maxY: 1000 };
const SPEED = 120;
const STEP = SPEED / 20; // 6 world units a tick at 20 Hz, nominally
/** The server's step east a tick on the 16-bit grid (393 of 65535 over 1,000 units: 5.9968 units). */
const STEP_EAST = (new Motion(BOUNDS, SPEED, 20).stepX(0) * 1000) / 65535;
/** Walking east, world units a second, as the server walks. */
const SPEED_EAST = STEP_EAST * 20;
/** Where the sim server puts a player asked to stand at 500: the nearest point of the grid. */
const START = (Math.round(0.5 * 65535) / 65535) * 1000;
const FRAME_MS = 16;

/** An input the page sends at `at` ms: a direction. */
type Press = readonly [at: number, dx: number, dy: number];

interface Run {
  readonly prediction: OwnPrediction;
  readonly server: SimServer;
  /** Drawn position at every frame: [t, x, y]. */
  readonly drawn: [number, number, number][];
}

/**
 * Plays `presses` against a simulated shard for `untilMs`, drawing a frame
 * every 16 ms, and returns what was drawn. The Welcome comes at 0 ms.
 */
function play(presses: readonly Press[], untilMs: number, opts: Partial<SimOptions> = {}): Run {
  const server = new SimServer({ tickHz: 20, speed: SPEED, bounds: BOUNDS, x: 500, y: 500, oneWayMs: () => 50, ...opts });
  const prediction = new OwnPrediction();
  prediction.welcome({ shardId: 1, tickHz: 20, speed: SPEED, bounds: BOUNDS, x: server.x, y: server.y }, 0);
  const drawn: [number, number, number][] = [];
  let seq = 0;
  let next = 0;
  for (let t = 1; t <= untilMs; t++) {
    while (next < presses.length && (presses[next] as Press)[0] <= t) {
      const [, dx, dy] = presses[next] as Press;
      seq++;
      if ((seq & ACK_MASK) === 0) seq++;
      prediction.input(seq, dx, dy, t);
      server.send(seq, dx, dy, t);
      next++;
    }
    server.runUntil(t);
    for (const s of server.arrived(t)) prediction.authoritative(1, s.tick, s.x, s.y, s.flags, t);
    if (t % FRAME_MS === 0) {
      prediction.update(t);
      drawn.push([t, prediction.x, prediction.y]);
    }
  }
  return { prediction, server, drawn };
}

/** Largest distance between two consecutive drawn frames. */
function largestFrameMove(drawn: readonly [number, number, number][]): number {
  let most = 0;
  for (let i = 1; i < drawn.length; i++) {
    const [, ax, ay] = drawn[i - 1] as [number, number, number];
    const [, bx, by] = drawn[i] as [number, number, number];
    most = Math.max(most, Math.hypot(bx - ax, by - ay));
  }
  return most;
}

describe('movement rule', () => {
  it('normalizes like the server and calls anything shorter than 1e-3 still', () => {
    expect(unitX(3, 4)).toBeCloseTo(0.6, 9);
    expect(unitY(3, 4)).toBeCloseTo(0.8, 9);
    expect(unitX(1e-4, 0)).toBe(0);
    expect(unitY(Number.NaN, 1)).toBe(0);
    expect(stepLength(120, 20)).toBe(6);
  });

  it('clamps each axis, so a walk into a wall slides along it', () => {
    expect(walkAxis(995, 1, 12, 0, 1000)).toBe(1000);
    expect(walkAxis(5, -1, 12, 0, 1000)).toBe(0);
    expect(walkAxis(500, 0.6, 10, 0, 1000)).toBeCloseTo(506, 9);
  });
});

describe('input timeline', () => {
  it('finds the newest input by its echoed low 7 bits and the stretch in effect at a time', () => {
    const t = new InputTimeline();
    t.reset(0);
    t.push(10, 1, 0, 5);
    t.push(20, 0, 1, 133); // 133 & 127 = 5
    t.push(30, 0, 0, 134);
    expect(t.findAck(5, 1)).toBe(2);
    expect(t.findAck(5, 3)).toBe(-1);
    expect(t.findAck(99, 1)).toBe(-1);
    expect(t.at(25)).toBe(2);
    expect(t.at(-1)).toBe(-1);
    t.dropOldest(2);
    expect(t.seq(0)).toBe(133);
    expect(t.count).toBe(2);
  });
});

describe('own player prediction', () => {
  it('moves from the frame the key goes down, at the walking speed', () => {
    const run = play([[100, 1, 0]], 200);
    const before = run.drawn.find(([t]) => t === 96) as [number, number, number];
    const after = run.drawn.find(([t]) => t === 112) as [number, number, number];
    expect(before[1]).toBe(START);
    // 12 ms of walking at the server's speed east by the first frame after the key.
    expect(after[1]).toBeCloseTo(START + (SPEED_EAST * 12) / 1000, 6);
    expect(run.prediction.moving).toBe(true);
    expect(run.prediction.heading).toBeCloseTo(0, 9);
  });

  it('walking straight, every authoritative sample agrees with the prediction', () => {
    const run = play([[100, 0, 1]], 1500);
    const p = run.prediction;
    expect(p.samples).toBeGreaterThan(25);
    // Applied a tick earlier or later than guessed at most once, at the start.
    expect(p.errorQuantile(0.9)).toBeLessThan(1e-6);
    expect(p.errorMax()).toBeLessThanOrEqual(STEP + 1e-6);
    expect(p.snaps).toBe(0);
  });

  it('replays the inputs the server has not applied yet, so a stop ends where the server stops', () => {
    // Right, up, left and stop, each shorter than the 100 ms round trip.
    const run = play(
      [
        [100, 1, 0],
        [170, 0, 1],
        [240, -1, 0],
        [300, 0, 0],
      ],
      900,
    );
    const [, x, y] = run.drawn.at(-1) as [number, number, number];
    expect(x).toBeCloseTo(run.server.x, 6);
    expect(y).toBeCloseTo(run.server.y, 6);
    // The page walked for 200 ms at 120 units/s: 24 units of path; never drawn jumping.
    expect(largestFrameMove(run.drawn)).toBeLessThan((SPEED * FRAME_MS) / 1000 + STEP / 2);
  });

  it('with a 100 ms round trip and 10 % jitter the errors stay within a step and are smoothed, never jumped', () => {
    const random = seeded(42);
    const presses: Press[] = [];
    const dirs: [number, number][] = [
      [1, 0],
      [0, 1],
      [-1, 0],
      [0, -1],
      [0.7, 0.7],
      [0, 0],
    ];
    for (let i = 0; i < 60; i++) presses.push([100 + i * 170 + Math.floor(random() * 60), ...(dirs[i % dirs.length] as [number, number])]);
    const run = play(presses, 11_000, { oneWayMs: (r) => 45 + 10 * r, random: seeded(7) });
    const p = run.prediction;
    expect(p.samples).toBeGreaterThan(200);
    expect(p.errorQuantile(0.5)).toBeLessThan(1e-6);
    expect(p.errorQuantile(0.95)).toBeLessThanOrEqual(STEP + 1e-6);
    expect(p.errorMax()).toBeLessThanOrEqual(2 * STEP + 1e-6);
    expect(p.snaps).toBe(0);
    // A frame moves by at most its own walk plus a share of a step's correction.
    expect(largestFrameMove(run.drawn)).toBeLessThan((SPEED * FRAME_MS) / 1000 + STEP / 2);
    const [, x, y] = run.drawn.at(-1) as [number, number, number];
    expect(Math.hypot(x - run.server.x, y - run.server.y)).toBeLessThan(1e-6);
  });

  it('smooths a small correction over about 100 ms', () => {
    const p = new OwnPrediction();
    p.welcome({ shardId: 1, tickHz: 20, speed: SPEED, bounds: BOUNDS, x: 500, y: 500 }, 0);
    // The server says the player stands 4 units to the left of where it was drawn.
    p.authoritative(1, 10, 496, 500, 0, 1000);
    p.update(1000);
    expect(p.x).toBeCloseTo(500, 6);
    p.update(1050);
    expect(p.x).toBeCloseTo(498, 6);
    p.update(1100);
    expect(p.x).toBeCloseTo(496, 6);
    p.update(1500);
    expect(p.x).toBeCloseTo(496, 6);
    expect(p.snaps).toBe(0);
    expect(p.errorMax()).toBeCloseTo(4, 6);
  });

  it('snaps a big correction (a teleport, a resume at a new spot)', () => {
    const p = new OwnPrediction();
    p.welcome({ shardId: 1, tickHz: 20, speed: SPEED, bounds: BOUNDS, x: 500, y: 500 }, 0);
    p.authoritative(1, 10, 800, 200, 0, 1000);
    expect([p.x, p.y]).toEqual([800, 200]);
    expect(p.snaps).toBe(1);
    // A Welcome at a new spot snaps; one in place (a failover) is smoothed.
    p.welcome({ shardId: 2, tickHz: 20, speed: SPEED, bounds: BOUNDS, x: 100, y: 100 }, 2000);
    expect([p.x, p.y]).toEqual([100, 100]);
    expect(p.snaps).toBe(2);
    p.welcome({ shardId: 3, tickHz: 20, speed: SPEED, bounds: BOUNDS, x: 103, y: 100 }, 3000);
    expect(p.x).toBeCloseTo(100, 6);
    p.update(3100);
    expect(p.x).toBeCloseTo(103, 6);
    expect(p.snaps).toBe(2);
  });

  it('follows the world bounds: a walk into a wall slides along it', () => {
    const run = play([[100, 1, 1]], 1500, { x: 990, y: 500 });
    const [, x, y] = run.drawn.at(-1) as [number, number, number];
    expect(x).toBe(1000);
    expect(y).toBeGreaterThan(500 + SPEED * 1.3 * Math.SQRT1_2 - STEP);
    expect(run.prediction.errorQuantile(0.9)).toBeLessThan(1e-6);
  });

  it('counts scheduled ticks: a skipped tick costs one smoothed step, no more', () => {
    const run = play(
      [
        [100, 1, 0],
        [1500, 0, 0],
      ],
      2000,
      { skip: new Set([20]) },
    );
    const p = run.prediction;
    expect(p.errorMax()).toBeLessThanOrEqual(STEP + 1e-6);
    expect(p.snaps).toBe(0);
    // The server walked one step less; the page ends where it stopped.
    const [, x] = run.drawn.at(-1) as [number, number, number];
    expect(x).toBeCloseTo(run.server.x, 6);
    expect(run.server.x).toBeCloseTo(START + SPEED_EAST * 1.4 - STEP_EAST, 3);
  });

  it('ignores samples of another shard and repeats, and holds still without a socket', () => {
    const p = new OwnPrediction();
    p.welcome({ shardId: 1, tickHz: 20, speed: SPEED, bounds: BOUNDS, x: 500, y: 500 }, 0);
    p.input(1, 1, 0, 100);
    p.authoritative(2, 50, 10, 10, 0, 150);
    p.update(200);
    expect(p.x).toBeCloseTo(500 + SPEED_EAST * 0.1, 6);
    p.authoritative(1, 5, 500, 500, 1 << 1, 200);
    const samples = p.samples;
    p.authoritative(1, 5, 900, 900, 1 << 1, 210);
    expect(p.samples).toBe(samples);
    p.disconnected(300);
    const x = p.x;
    p.input(2, -1, 0, 350);
    p.update(1000);
    expect(p.x).toBe(x);
    expect(p.moving).toBe(false);
    expect(p.predicting).toBe(false);
  });

  it('allocates nothing in a frame: predicting and drawing the own player, a sample now and then', async () => {
    const p = new OwnPrediction();
    p.welcome({ shardId: 1, tickHz: 20, speed: SPEED, bounds: BOUNDS, x: 500, y: 500 }, 0);
    const players = new MergedPlayers();
    let f = 0;
    const bytes = await bytesPerFrame(() => {
      f++;
      const now = f * 16;
      if (f % 40 === 0) p.input(f, f % 80 ? 1 : -1, 0, now);
      if (f % 3 === 0) p.authoritative(1, f, 500, 500, 0, now);
      p.update(now);
      players.begin();
      players.put(7, p.x, p.y, p.heading, p.moving ? 1 : 0, Number.POSITIVE_INFINITY);
    });
    expect(players.count).toBe(1);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});
