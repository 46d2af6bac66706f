// Interpolation timing: a scripted 20 Hz server and network drive the
// interpolated place frame by frame (one walker whose cell changes every
// tick), with no real clock.
import { describe, expect, it } from 'vitest';
import { AOI_EPOCH, aoiWelcome, viewCell } from '../testing/cells.js';
import { SAMPLES } from './player-tracks.js';
import { CellWorld } from './cell-world.js';

const EPOCH = AOI_EPOCH; // server clock = EPOCH + local clock
const TICK = 50;
const FRAME = 1000 / 60;
const SPEED = 120; // world units per second
const SHARD = 7;

/** Where the scripted walker stands at server time t: walking +x at SPEED from x=100. */
const walkerX = (t: number): number => 100 + (SPEED * (t - EPOCH)) / 1000;

interface FrameLog {
  now: number;
  /** The shard's render time (server ms since the epoch). */
  sample: number;
  /** The walker's own draw time: the render time less its extra delay (a late sample stretches it). */
  drawn: number;
  x: number;
  delay: number;
  newest: number;
}

/** A 20 Hz shard with one walking player, a network with scripted latency, and a 60 fps page. */
class Sim {
  readonly world = new CellWorld();
  now = 0;
  private serverNow = 0; // local time of the next tick
  private inFlight: { arrival: number; tick: number; t: number }[] = [];
  private lastTick = Number.NaN;
  newestServerTime = Number.NaN;
  log: FrameLog[] = [];

  /** `latency(tick, sentAt)` gives the one-way delay of each frame, ms. */
  constructor(private latency: (tick: number, sentAt: number) => number = () => 20) {
    this.world.welcome(aoiWelcome(2, SHARD, EPOCH), 0);
  }

  setLatency(f: (tick: number, sentAt: number) => number): void {
    this.latency = f;
  }

  /** Runs `ms` of local time; the server ticks unless `stalled`, frames render unless `hidden`. */
  run(ms: number, opts: { hidden?: boolean; stalled?: boolean } = {}): void {
    const end = this.now + ms;
    let nextFrame = this.now;
    while (this.now < end) {
      const nextArrival = this.inFlight.reduce((m, f) => Math.min(m, f.arrival), Infinity);
      const step = Math.min(end, nextFrame, this.serverNow, nextArrival) - this.now;
      this.now += Math.max(step, 0);
      if (this.now >= this.serverNow) {
        if (!opts.stalled) this.send();
        this.serverNow += TICK;
      }
      this.deliver();
      if (this.now >= nextFrame) {
        if (!opts.hidden) this.frame();
        nextFrame += FRAME;
      }
    }
  }

  private send(): void {
    const t = EPOCH + this.serverNow;
    const tick = this.serverNow / TICK; // ticks count periods since the epoch
    this.inFlight.push({ arrival: this.serverNow + this.latency(tick, this.serverNow), tick, t });
  }

  private deliver(): void {
    this.inFlight.sort((a, b) => a.arrival - b.arrival);
    while (this.inFlight.length && (this.inFlight[0]?.arrival ?? Infinity) <= this.now) {
      const m = this.inFlight.shift();
      if (!m) break;
      // A delta from the previous frame (this walker walks on through a stall: the span is the ticks between).
      const span = Number.isNaN(this.lastTick) ? 0 : m.tick - this.lastTick;
      this.lastTick = m.tick;
      this.world.onCell(viewCell(SHARD, 1, m.tick, [{ id: 1, x: walkerX(m.t), y: 500, flags: 1 }]), span, this.now);
      this.newestServerTime = Math.max(this.newestServerTime || 0, m.t);
    }
  }

  private frame(): void {
    this.world.update(this.now);
    const clock = this.world.clocks.of(SHARD)?.clock;
    const p = this.world.players;
    const i = p.indexOf(1);
    const sample = clock?.ready ? EPOCH + clock.renderMs : Number.NaN;
    const tr = this.world.tracks;
    const slot = tr.slotOf(1);
    this.log.push({
      now: this.now,
      sample,
      // As the tracks draw it: at its newest sample at most, at its oldest before that.
      drawn: slot >= 0 ? Math.max(EPOCH + tr.oldestMs(slot), Math.min(sample - (tr.extra[slot] as number), EPOCH + tr.newestMs(slot))) : Number.NaN,
      x: i >= 0 ? (p.x[i] as number) : Number.NaN,
      delay: this.world.delayMs(SHARD),
      newest: this.newestServerTime,
    });
  }

  get last(): FrameLog {
    const f = this.log[this.log.length - 1];
    if (!f) throw new Error('no frame rendered');
    return f;
  }

  /** Positions held for the walker (bounded). */
  buffered(): number {
    const slot = this.world.tracks.slotOf(1);
    return slot >= 0 ? this.world.tracks.samples(slot) : 0;
  }

  /** Frames whose render time advanced faster than 1.15x real time (a jump). */
  fastFrames(from: number): number {
    let n = 0;
    for (let i = 1; i < this.log.length; i++) {
      const [a, b] = [this.log[i - 1] as FrameLog, this.log[i] as FrameLog];
      if (b.now >= from && b.sample - a.sample > (b.now - a.now) * 1.15 + 0.01) n++;
    }
    return n;
  }
}

describe('render clock', () => {
  it('settles 100 ms behind the server at 20 Hz on a steady network', () => {
    const sim = new Sim(() => 20);
    sim.run(3000);
    const f = sim.last;
    expect(f.delay).toBeCloseTo(100, 6);
    // Render time is server-now minus the delay (the latency is all in the offset).
    expect(Math.abs(f.sample - (EPOCH + f.now - 20 - 100))).toBeLessThan(0.5);
    expect(f.sample).toBeLessThanOrEqual(f.newest);
  });

  it('interpolates between the samples around the render time', () => {
    const sim = new Sim(() => 20);
    sim.run(2000);
    for (const f of sim.log.slice(60)) expect(Math.abs(f.x - walkerX(f.sample))).toBeLessThan(0.01);
    // And the walker moves every frame: interpolated, not stepping per tick.
    const xs = sim.log.slice(60).map((f) => f.x);
    for (let i = 1; i < xs.length; i++) expect((xs[i] as number) - (xs[i - 1] as number)).toBeGreaterThan(1.5);
  });

  it('never draws a walker past its newest sample', () => {
    const sim = new Sim(() => 20);
    sim.run(1000);
    sim.run(2000, { stalled: true });
    const newest = sim.last.newest;
    // The clock runs on; the walker waits at its newest, its own delay stretched.
    for (const f of sim.log.filter((l) => !Number.isNaN(l.drawn))) {
      expect(f.drawn).toBeLessThanOrEqual(f.newest + 1e-6);
    }
    expect(sim.last.x).toBeCloseTo(walkerX(newest), 3);
  });

  it('after a hidden tab it jumps straight to newest minus the delay, buffer bounded', () => {
    const sim = new Sim(() => 20);
    sim.run(1000);
    const before = sim.log.length;
    sim.run(10_000, { hidden: true });
    expect(sim.log.length).toBe(before);
    expect(sim.buffered()).toBeLessThanOrEqual(SAMPLES);
    sim.run(FRAME * 1.01);
    const f = sim.last;
    expect(Math.abs(f.sample - (EPOCH + f.now - 20 - f.delay))).toBeLessThan(0.5);
    expect(f.newest - f.sample).toBeGreaterThan(f.delay - TICK);
    expect(f.newest - f.sample).toBeLessThanOrEqual(f.delay);
    expect(Math.abs(f.x - walkerX(f.sample))).toBeLessThan(0.01);
  });

  it('after a server stall the clock is back at newest minus the delay within half a second, without fast-forwarding', () => {
    const sim = new Sim(() => 20);
    sim.run(1000);
    sim.run(2000, { stalled: true });
    const resumed = sim.now;
    sim.run(1000);
    expect(sim.fastFrames(resumed)).toBeLessThanOrEqual(1);
    for (const f of sim.log.filter((l) => l.now >= resumed + 500)) {
      expect(Math.abs(f.sample - (f.newest - f.delay))).toBeLessThanOrEqual(TICK);
      // The walker, drawn at its own time (its delay stretched while it waited, up to a second: before
      // the samples it holds, at its oldest), is where it was then.
      expect(Math.abs(f.x - walkerX(f.drawn))).toBeLessThan(0.01);
    }
  });

  it('after a late burst of frames it is back within half a second, without fast-forwarding', () => {
    const sim = new Sim(() => 20);
    sim.run(1000);
    // For 600 ms the network holds every frame, then delivers them all at once.
    const holdUntil = sim.now + 600;
    sim.setLatency((_tick, sentAt) => (sentAt < holdUntil ? holdUntil - sentAt : 20));
    sim.run(600);
    const burst = sim.now;
    sim.run(1500);
    expect(sim.fastFrames(burst - 1)).toBeLessThanOrEqual(1);
    for (const f of sim.log.filter((l) => l.now >= burst + 500)) {
      expect(Math.abs(f.sample - (f.newest - f.delay))).toBeLessThanOrEqual(TICK);
    }
    // The burst counted as jitter: the delay grew, within bounds.
    expect(sim.last.delay).toBeGreaterThan(100);
    expect(sim.last.delay).toBeLessThanOrEqual(250);
    expect(sim.buffered()).toBeLessThanOrEqual(SAMPLES);
  });

  it('after a late start it jumps ahead to newest minus the delay instead of fast-forwarding', () => {
    // The first 2 s of frames all arrive 400 ms late (a congested start), then on time:
    // the offset estimate drops by 380 ms at once.
    const sim = new Sim(() => 420);
    sim.run(2000);
    sim.setLatency(() => 20);
    const changed = sim.now;
    sim.run(1500);
    expect(sim.fastFrames(changed)).toBe(1);
    expect(sim.world.snaps()).toBeGreaterThanOrEqual(1);
    for (const f of sim.log.filter((l) => l.now >= changed + 500)) {
      expect(Math.abs(f.sample - (f.newest - f.delay))).toBeLessThanOrEqual(TICK);
    }
  });

  it('adapts the delay to jitter within bounds and returns when the network calms', () => {
    let seed = 1;
    const rand = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const sim = new Sim(() => 20 + rand() * 60);
    sim.run(10_000);
    const jittery = sim.last.delay;
    expect(jittery).toBeGreaterThan(110);
    expect(jittery).toBeLessThanOrEqual(250);
    sim.setLatency(() => 20 + rand() * 2000);
    sim.run(10_000);
    expect(sim.last.delay).toBe(250);
    sim.setLatency(() => 20);
    sim.run(60_000);
    expect(sim.last.delay).toBeLessThan(105);
    expect(sim.last.delay).toBeGreaterThanOrEqual(100);
  });

  it('slews small corrections instead of jumping', () => {
    const sim = new Sim(() => 20);
    sim.run(1000);
    // Latency falls by 20 ms: the offset estimate drops, the target moves 20 ms ahead.
    sim.setLatency(() => 0);
    const changed = sim.now;
    sim.run(1000);
    expect(sim.fastFrames(changed)).toBe(0);
    const f = sim.last;
    expect(Math.abs(f.sample - (EPOCH + f.now - f.delay))).toBeLessThan(0.5);
  });
});
