// A deterministic stand-in for a shard's movement and its network, for the
// prediction tests: ticks every 1/tickHz (counting scheduled ticks, a skipped
// one skipped), applies the Inputs that have arrived, moves a player one
// step of the server's integer rule along the heading of the last one
// (net/motion.ts, as server/src/sim.rs: on the wire's 16-bit grid, clamped),
// and sends each tick's sample (position and the
// echoed input bits) back after a one-way delay. Delays may jitter; the link
// keeps order, as a websocket does.

import type { Bounds } from '../net/protocol.js';
import { FLAG_MOVING, INPUT_SEQ_SHIFT } from '../net/protocol.js';
import { Motion, headingOf } from '../net/motion.js';
import { unitX, unitY } from '../predict/movement.js';

/** One authoritative sample as the page receives it. */
export interface SimSample {
  readonly arriveMs: number;
  readonly tick: number;
  readonly x: number;
  readonly y: number;
  readonly flags: number;
}

/** Settings of a [`SimServer`]. */
export interface SimOptions {
  readonly tickHz: number;
  readonly speed: number;
  readonly bounds: Bounds;
  readonly x: number;
  readonly y: number;
  /** One-way delay of a message, ms, given a uniform random 0..1 (for jitter). */
  readonly oneWayMs: (r: number) => number;
  /** Local time of tick 1, ms. */
  readonly firstTickMs?: number;
  /** Ticks that run late by a whole tick and are skipped (their numbers). */
  readonly skip?: ReadonlySet<number>;
  readonly random?: () => number;
}

/** The shard and both directions of the link. */
export class SimServer {
  /** Where the player stands, world units (its quantized position dequantized). */
  x: number;
  y: number;
  private qx: number;
  private qy: number;
  private heading = 0;
  private moving = false;
  private readonly motion: Motion;
  private ack = 0;
  private tick = 0;
  private nextTickMs: number;
  private lastUp = 0;
  private lastDown = 0;
  private readonly inbound: { at: number; seq: number; dx: number; dy: number }[] = [];
  /** Samples on their way to the page, in order. */
  readonly outbound: SimSample[] = [];
  private readonly random: () => number;

  constructor(private readonly o: SimOptions) {
    const b = o.bounds;
    this.motion = new Motion(b, o.speed, o.tickHz);
    this.qx = Math.round(((o.x - b.minX) / (b.maxX - b.minX)) * 65535);
    this.qy = Math.round(((o.y - b.minY) / (b.maxY - b.minY)) * 65535);
    this.x = b.minX + (this.qx / 65535) * (b.maxX - b.minX);
    this.y = b.minY + (this.qy / 65535) * (b.maxY - b.minY);
    this.nextTickMs = o.firstTickMs ?? 25;
    this.random = o.random ?? seeded(1);
  }

  /** The page sends Input `seq` (direction dx, dy) at local `nowMs`. */
  send(seq: number, dx: number, dy: number, nowMs: number): void {
    const at = Math.max(this.lastUp, nowMs + this.o.oneWayMs(this.random()));
    this.lastUp = at;
    this.inbound.push({ at, seq, dx, dy });
  }

  /** Runs every tick due by local `nowMs`. */
  runUntil(nowMs: number): void {
    while (this.nextTickMs <= nowMs) {
      const at = this.nextTickMs;
      this.tick++;
      this.nextTickMs += 1000 / this.o.tickHz;
      if (this.o.skip?.has(this.tick)) continue;
      while (this.inbound.length && (this.inbound[0]?.at ?? Infinity) <= at) {
        const i = this.inbound.shift();
        if (!i) break;
        const ux = unitX(i.dx, i.dy);
        const uy = unitY(i.dx, i.dy);
        this.moving = ux !== 0 || uy !== 0;
        if (this.moving) this.heading = headingOf(ux, uy);
        this.ack = i.seq & 0x7f;
      }
      const b = this.o.bounds;
      this.qx = this.motion.advanceX(this.qx, this.heading, this.moving, 1);
      this.qy = this.motion.advanceY(this.qy, this.heading, this.moving, 1);
      this.x = b.minX + (this.qx / 65535) * (b.maxX - b.minX);
      this.y = b.minY + (this.qy / 65535) * (b.maxY - b.minY);
      const moving = this.moving ? FLAG_MOVING : 0;
      const arriveMs = Math.max(this.lastDown, at + this.o.oneWayMs(this.random()));
      this.lastDown = arriveMs;
      this.outbound.push({ arriveMs, tick: this.tick, x: this.x, y: this.y, flags: moving | (this.ack << INPUT_SEQ_SHIFT) });
    }
  }

  /** Takes the samples that have arrived by local `nowMs`, oldest first. */
  arrived(nowMs: number): SimSample[] {
    let n = 0;
    while (n < this.outbound.length && (this.outbound[n]?.arriveMs ?? Infinity) <= nowMs) n++;
    return this.outbound.splice(0, n);
  }
}

/** A small seeded random in [0, 1) (mulberry32), so runs repeat. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
