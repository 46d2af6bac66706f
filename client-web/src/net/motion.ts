// The movement rule, integer-exact, as the server computes it
// (schema/src/motion.rs): a walking player moves each tick by its heading's
// step, a fixed integer vector on the wire's 16-bit grid, each axis clamped
// to 0..65535. So a walker's position after n ticks of one heading is
// clamp(start + n * step): the delta frames predict it and the server sends
// nothing while it walks straight.
//
// The step of heading h is round(cos(h * 2pi / 256) * s_x), round(sin(...) *
// s_y), s the speed in quantized units a tick. Cosine and sine come from the
// same fixed polynomial the server evaluates, in the same order of IEEE-754
// double operations (no Math.sin/Math.cos, whose last bit differs between
// engines), so both sides get the same table; schema/fixtures/motion.json
// pins it and both languages test against it (net/motion.test.ts).

import type { Bounds } from './messages.js';

/** The largest quantized coordinate. */
export const Q_MAX = 65535;

/** Headings a player can face. */
export const HEADINGS = 256;

/** The per-tick step of every heading for one world, speed and tick rate. */
export class Motion {
  private readonly sx = new Int32Array(HEADINGS);
  private readonly sy = new Int32Array(HEADINGS);

  /**
   * The rule of a world spanning `b` (world units, the Welcome's f32
   * values), players walking `speed` world units a second (an f32 value),
   * `tickHz` ticks a second.
   */
  constructor(b: Bounds, speed: number, tickHz: number) {
    const perTick = (span: number): number =>
      span > 0 && tickHz > 0 && Number.isFinite(speed) ? (speed * 65535) / tickHz / span : 0;
    const qx = perTick(Math.fround(b.maxX - b.minX));
    const qy = perTick(Math.fround(b.maxY - b.minY));
    for (let h = 0; h < HEADINGS; h++) {
      unit(h);
      this.sx[h] = roundHalfAway(unitCos * qx);
      this.sy[h] = roundHalfAway(unitSin * qy);
    }
  }

  /** X step of `heading` (0..255), quantized units a tick. */
  stepX(heading: number): number {
    return this.sx[heading & 255] as number;
  }

  /** Y step of `heading` (0..255), quantized units a tick. */
  stepY(heading: number): number {
    return this.sy[heading & 255] as number;
  }

  /** Quantized x after `ticks` ticks from `x` facing `heading`, walking if `moving`. */
  advanceX(x: number, heading: number, moving: boolean, ticks: number): number {
    return moving ? clampQ(x + this.stepX(heading) * ticks) : x;
  }

  /** Quantized y after `ticks` ticks from `y` facing `heading`, walking if `moving`. */
  advanceY(y: number, heading: number, moving: boolean, ticks: number): number {
    return moving ? clampQ(y + this.stepY(heading) * ticks) : y;
  }
}

/** `v` clamped to the grid. */
function clampQ(v: number): number {
  return v < 0 ? 0 : v > Q_MAX ? Q_MAX : v;
}

/** Rounded to the nearest integer, halves away from zero (the server's formula). */
function roundHalfAway(v: number): number {
  const r = Math.floor(Math.abs(v) + 0.5);
  return v < 0 ? -r : r;
}

/** Results of [`unit`] (no allocation). */
let unitCos = 0;
let unitSin = 0;

/** Cosine and sine of heading `h`, into unitCos / unitSin (the server's `unit`). */
function unit(h: number): void {
  const quadrant = h >> 6;
  const r = h & 63;
  let c: number;
  let s: number;
  if (r <= 32) {
    const x = r * (Math.PI / 128);
    c = cosOctant(x);
    s = sinOctant(x);
  } else {
    const x = (64 - r) * (Math.PI / 128);
    c = sinOctant(x);
    s = cosOctant(x);
  }
  switch (quadrant) {
    case 0:
      unitCos = c;
      unitSin = s;
      break;
    case 1:
      unitCos = -s;
      unitSin = c;
      break;
    case 2:
      unitCos = -c;
      unitSin = -s;
      break;
    default:
      unitCos = s;
      unitSin = -c;
  }
}

/** sin(x) on [0, pi/4]: Taylor to x^13, Horner form, the server's order. */
function sinOctant(x: number): number {
  const x2 = x * x;
  let p = 1 / 6227020800;
  p = -1 / 39916800 + x2 * p;
  p = 1 / 362880 + x2 * p;
  p = -1 / 5040 + x2 * p;
  p = 1 / 120 + x2 * p;
  p = -1 / 6 + x2 * p;
  p = 1 + x2 * p;
  return x * p;
}

/** cos(x) on [0, pi/4]: Taylor to x^14, Horner form, the server's order. */
function cosOctant(x: number): number {
  const x2 = x * x;
  let p = -1 / 87178291200;
  p = 1 / 479001600 + x2 * p;
  p = -1 / 3628800 + x2 * p;
  p = 1 / 40320 + x2 * p;
  p = -1 / 720 + x2 * p;
  p = 1 / 24 + x2 * p;
  p = -1 / 2 + x2 * p;
  return 1 + x2 * p;
}

/**
 * The heading (0..255) the server gives a wanted direction (x, y): its angle
 * counter-clockwise from +x in 256ths of a turn, rounded (the server's
 * `quantize::heading`, in f32 there: a direction within a hair of a half
 * step may round the other way; the prediction corrects that).
 */
export function headingOf(x: number, y: number): number {
  const tau = 2 * Math.PI;
  let a = Math.atan2(y, x) % tau;
  if (a < 0) a += tau;
  return Math.round((a / tau) * 256) % 256;
}
