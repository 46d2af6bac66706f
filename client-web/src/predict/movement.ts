// Walking in world units, for drawing the own player between ticks: a
// wanted direction normalized as the server normalizes it
// (schema/src/client.rs `Direction::new`), walked a distance and clamped per
// axis to the world's bounds (so a player walking into a wall slides along
// it). The server's exact rule, a fixed integer step a tick on the wire's
// grid, is net/motion.ts; the prediction walks at that step's velocity.
// Pure functions.

import type { Bounds } from '../net/protocol.js';

/** Below this length a wanted direction is "stand still" on the server. */
export const STILL_BELOW = 1e-3;

/**
 * Unit x of the direction the server makes of (`x`, `y`): the vector scaled
 * to length 1, or 0 for one shorter than STILL_BELOW or not finite.
 */
export function unitX(x: number, y: number): number {
  const len = Math.hypot(x, y);
  return Number.isFinite(len) && len >= STILL_BELOW ? x / len : 0;
}

/** Unit y of the direction the server makes of (`x`, `y`); see [`unitX`]. */
export function unitY(x: number, y: number): number {
  const len = Math.hypot(x, y);
  return Number.isFinite(len) && len >= STILL_BELOW ? y / len : 0;
}

/** One fixed step, world units: `speed` (world units/s) over one tick of `tickHz`. */
export function stepLength(speed: number, tickHz: number): number {
  return tickHz > 0 ? speed / tickHz : 0;
}

/** `v` within [min, max]. */
export function clamp(v: number, min: number, max: number): number {
  return v < min ? min : v > max ? max : v;
}

/**
 * Where a coordinate ends after walking `distance` world units along unit
 * component `unit` from `from`, clamped to [min, max]. Walking one way along
 * an axis, clamping once at the end is the same as clamping after each step,
 * so a stretch of constant direction takes one call per axis.
 */
export function walkAxis(from: number, unit: number, distance: number, min: number, max: number): number {
  return clamp(from + unit * distance, min, max);
}

/** Whether (x, y) lies inside `b` (edges included). */
export function inside(b: Bounds, x: number, y: number): boolean {
  return x >= b.minX && x <= b.maxX && y >= b.minY && y <= b.maxY;
}
