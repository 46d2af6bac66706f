// Client-side prediction of the own player: drawn where the server will have
// it once the inputs sent so far are applied, from the frame a key goes down,
// while every other player is drawn about 100 ms in the past.
//
// The server moves a player one fixed step (speed / tick rate) a tick in the
// direction of the last Input it applied, clamped to the world (predict/
// movement.ts), and echoes in the player's own entry of every snapshot and
// view frame the low 7 bits of that input's sequence number. So an
// authoritative sample is (tick T, position P, input a applied). The first
// sample showing a is the tick T_a the server started walking a's way; the
// page started walking it at local time t_a (the start of a's stretch in
// predict/inputs.ts). At tick T the server has walked T - T_a + 1 steps of a,
// as the page did by local time tau = t_a + (T - T_a + 1) ticks; so now the
// player is at P plus the page's own walk from tau to now: every stretch sent
// since, replayed with the server's rule. Before any input is applied (just
// welcomed) the server stands still, and the replay starts at the Welcome.
//
// A new sample moves the prediction by however much the server differed (an
// input applied a tick earlier or later than the page guessed, a skipped
// tick, a wall). That correction is the prediction error. A small one is
// smoothed: the drawn position keeps an offset that fades to nothing over
// smoothMs (100 ms); a big one (a resume elsewhere, a new spot, a teleport:
// over snapSeconds of walking) snaps. Without a live socket the player stays
// where it was drawn; a Welcome starts over from its position.
//
// No DOM, no clock reads: the caller passes local times (ms). The per-frame
// call allocates nothing.

import type { Bounds } from '../net/protocol.js';
import { INPUT_SEQ_SHIFT } from '../net/protocol.js';
import { InputTimeline } from './inputs.js';
import { Motion, headingOf } from '../net/motion.js';
import { unitX, unitY, walkAxis } from './movement.js';

/** Tuning of an [`OwnPrediction`]. */
export interface PredictionOptions {
  /** A small correction fades over this long, ms. */
  readonly smoothMs: number;
  /** A correction longer than this much walking (s at the Welcome's speed) snaps. */
  readonly snapSeconds: number;
}

/** The defaults: corrections fade over 100 ms; over a quarter second of walking snaps. */
export const DEFAULT_PREDICTION: PredictionOptions = { smoothMs: 100, snapSeconds: 0.25 };

/** A sample that moves the prediction by less than this agrees with it, world units (the wire's 16 bits over 1,000 units are 0.015). */
const SAME_UNITS = 1e-3;

/** Prediction errors kept for the statistics. */
const ERROR_WINDOW = 512;

/** What a Welcome tells the prediction. */
export interface PredictionWelcome {
  readonly shardId: number;
  readonly tickHz: number;
  /** World units per second. */
  readonly speed: number;
  readonly bounds: Bounds;
  /** Where the player stands, world units. */
  readonly x: number;
  readonly y: number;
}

/** The own player, predicted; see the module comment. */
export class OwnPrediction {
  /** The inputs sent since the Welcome (index 0: the one the server applied last, or the Welcome's stillness). */
  readonly inputs = new InputTimeline();
  /** Drawn position (world units), heading (radians) and whether walking, as of the last [`update`]. */
  x = 0;
  y = 0;
  heading = 0;
  moving = false;
  /** Prediction errors measured (one per authoritative sample), and snaps among the corrections. */
  samples = 0;
  snaps = 0;
  private readonly errors = new Float64Array(ERROR_WINDOW);
  private live = false;
  private anchored = false;
  private shard = 0;
  private speed = 0;
  private tickMs = 50;
  private bounds: Bounds = { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  /** The server's movement rule for the Welcome's world (net/motion.ts). */
  private motion: Motion | null = null;
  /** The last authoritative position and its tick (NaN: the Welcome's). */
  private ax = 0;
  private ay = 0;
  private aTick = Number.NaN;
  /** Tick of the first sample that showed the input at index 0 applied (NaN: none applied since the Welcome). */
  private baseTick = Number.NaN;
  /** The smoothing offset at `offsetAt` (local ms), world units. */
  private ox = 0;
  private oy = 0;
  private offsetAt = 0;
  /** Scratch result of [`predict`]. */
  private px = 0;
  private py = 0;

  constructor(private readonly opts: PredictionOptions = DEFAULT_PREDICTION) {}

  /** Whether there is a position to draw (after the first Welcome). */
  get active(): boolean {
    return this.anchored;
  }

  /** Whether inputs are predicted (a welcomed socket); otherwise the player stays where it was drawn. */
  get predicting(): boolean {
    return this.live;
  }

  /**
   * A Welcome at local `nowMs`: the player stands at (x, y) on `shardId`,
   * still, no input applied. A small move from where it was drawn (a resume
   * in place) is smoothed; a large one (a new spot) snaps.
   */
  welcome(w: PredictionWelcome, nowMs: number): void {
    const wasDrawn = this.anchored;
    if (wasDrawn) this.update(nowMs);
    const bx = this.x;
    const by = this.y;
    this.shard = w.shardId;
    this.speed = w.speed;
    this.tickMs = 1000 / Math.max(1, w.tickHz);
    this.bounds = w.bounds;
    this.motion = new Motion(w.bounds, w.speed, w.tickHz);
    this.inputs.reset(nowMs);
    this.baseTick = Number.NaN;
    this.ax = w.x;
    this.ay = w.y;
    this.aTick = Number.NaN;
    this.anchored = true;
    this.live = true;
    this.ox = this.oy = 0;
    if (wasDrawn) this.correct(bx, by, w.x, w.y, nowMs);
    this.update(nowMs);
  }

  /** The socket closed at local `nowMs`: the player stays where it is drawn until the next Welcome. */
  disconnected(nowMs: number): void {
    if (this.live && this.anchored) this.update(nowMs);
    this.live = false;
  }

  /**
   * Input `seq` was sent at local `nowMs`: walk (dirX, dirY) from now on, as
   * the server will: along the heading it makes of the direction, at its
   * step's exact speed (net/motion.ts), or stand for a still direction.
   */
  input(seq: number, dirX: number, dirY: number, nowMs: number): void {
    if (!this.live) return;
    const ux = unitX(dirX, dirY);
    const uy = unitY(dirX, dirY);
    if ((ux === 0 && uy === 0) || this.motion === null || this.speed <= 0) {
      this.inputs.push(nowMs, 0, 0, seq);
      return;
    }
    // The server's step a tick, in world units a second, over the speed: the
    // direction scaled so that walking `speed` units takes the server's time.
    const h = headingOf(ux, uy);
    const b = this.bounds;
    const perSecond = 1000 / this.tickMs / this.speed;
    const vx = ((this.motion.stepX(h) * (b.maxX - b.minX)) / 65535) * perSecond;
    const vy = ((this.motion.stepY(h) * (b.maxY - b.minY)) / 65535) * perSecond;
    this.inputs.push(nowMs, vx, vy, seq);
  }

  /**
   * An authoritative sample of the own player, received at local `nowMs`:
   * its position at `tick` of `shardId` (world units) and its flags as on the
   * wire (bits 1-7: the last input applied). Samples of another shard than
   * the Welcome's, and samples not newer than the last, are ignored.
   */
  authoritative(shardId: number, tick: number, x: number, y: number, flags: number, nowMs: number): void {
    if (!this.live || shardId !== this.shard) return;
    if (!Number.isNaN(this.aTick)) {
      const ahead = tick - this.aTick;
      if (ahead <= 0 && ahead > -(2 ** 31)) return; // a repeat or out of order (a view frame's tick wraps at 2^32)
    }
    this.update(nowMs);
    const drawnX = this.x;
    const drawnY = this.y;
    this.predict(nowMs);
    const oldX = this.px;
    const oldY = this.py;
    const applied = this.inputs.findAck(flags >> INPUT_SEQ_SHIFT, 1);
    if (applied > 0) {
      this.inputs.dropOldest(applied);
      this.baseTick = tick;
    }
    this.ax = x;
    this.ay = y;
    this.aTick = tick;
    this.predict(nowMs);
    const error = Math.hypot(this.px - oldX, this.py - oldY);
    this.record(error);
    // An agreeing sample leaves a fading correction to fade on.
    if (error > SAME_UNITS) this.correct(drawnX, drawnY, this.px, this.py, nowMs);
    this.update(nowMs);
  }

  /** Computes [`x`], [`y`], [`heading`] and [`moving`] for local `nowMs`; allocates nothing. */
  update(nowMs: number): void {
    if (!this.anchored || !this.live) {
      this.moving = false;
      return;
    }
    this.predict(nowMs);
    const fade = 1 - (nowMs - this.offsetAt) / this.opts.smoothMs;
    const k = fade > 0 ? Math.min(1, fade) : 0;
    this.x = this.px + this.ox * k;
    this.y = this.py + this.oy * k;
    const last = this.inputs.count - 1;
    const dx = last >= 0 ? this.inputs.dirX(last) : 0;
    const dy = last >= 0 ? this.inputs.dirY(last) : 0;
    this.moving = dx !== 0 || dy !== 0;
    if (this.moving) this.heading = Math.atan2(dy, dx);
  }

  /** Prediction error below which `share` (0..1) of the samples fall, world units (NaN before any). */
  errorQuantile(share: number): number {
    const n = Math.min(this.samples, ERROR_WINDOW);
    if (!n) return Number.NaN;
    const sorted = Array.from(this.errors.subarray(0, n)).sort((a, b) => a - b);
    return sorted[Math.min(n - 1, Math.floor(share * n))] as number;
  }

  /** Largest prediction error of the kept samples, world units (NaN before any). */
  errorMax(): number {
    const n = Math.min(this.samples, ERROR_WINDOW);
    let max = Number.NaN;
    for (let i = 0; i < n; i++) max = Number.isNaN(max) ? (this.errors[i] as number) : Math.max(max, this.errors[i] as number);
    return max;
  }

  /** Forgets the error statistics (e.g. before a measurement). */
  resetStats(): void {
    this.samples = 0;
    this.snaps = 0;
  }

  /** Local time the server's last sample corresponds to on the page's input timeline, ms. */
  private replayFrom(): number {
    const base = this.inputs.start(0);
    if (Number.isNaN(this.baseTick) || Number.isNaN(this.aTick)) return base;
    let ticks = this.aTick - this.baseTick;
    if (ticks < 0) ticks += 2 ** 32; // a view frame's 32-bit tick wrapped
    return base + (ticks + 1) * this.tickMs;
  }

  /** The authoritative position plus the page's walk since the server's sample, into (px, py). */
  private predict(nowMs: number): void {
    const inputs = this.inputs;
    let x = this.ax;
    let y = this.ay;
    let t = this.replayFrom();
    const b = this.bounds;
    for (let k = Math.max(0, inputs.at(t)); k < inputs.count && t < nowMs; k++) {
      const end = k + 1 < inputs.count ? Math.min(nowMs, inputs.start(k + 1)) : nowMs;
      if (end <= t) continue;
      const d = (this.speed * (end - t)) / 1000;
      x = walkAxis(x, inputs.dirX(k), d, b.minX, b.maxX);
      y = walkAxis(y, inputs.dirY(k), d, b.minY, b.maxY);
      t = end;
    }
    this.px = x;
    this.py = y;
  }

  /** The drawn position moves from (fromX, fromY) to a prediction of (toX, toY): fade the difference, or snap a big one. */
  private correct(fromX: number, fromY: number, toX: number, toY: number, nowMs: number): void {
    const dx = fromX - toX;
    const dy = fromY - toY;
    const snap = Math.max(2 * this.speed * (this.tickMs / 1000), this.speed * this.opts.snapSeconds);
    if (Math.hypot(dx, dy) > snap) {
      this.ox = this.oy = 0;
      this.snaps++;
    } else {
      this.ox = dx;
      this.oy = dy;
    }
    this.offsetAt = nowMs;
  }

  private record(error: number): void {
    this.errors[this.samples % ERROR_WINDOW] = error;
    this.samples++;
  }
}
