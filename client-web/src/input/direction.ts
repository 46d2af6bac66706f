// Turning what the player presses or drags into the direction to walk in: a
// unit vector in world axes (+x right, +y up) or (0, 0) to stand still. Pure
// functions; keyboard.ts and touch.ts feed them.

/** A walking direction: unit length, or (0, 0) for standing still. */
export interface Direction {
  readonly x: number;
  readonly y: number;
}

/** Standing still. */
export const STILL: Direction = { x: 0, y: 0 };

/** Key codes (KeyboardEvent.code, so any layout's keys in the WASD place work) and their axis. */
const KEY_AXES: ReadonlyMap<string, readonly [number, number]> = new Map([
  ['KeyW', [0, 1]],
  ['ArrowUp', [0, 1]],
  ['KeyS', [0, -1]],
  ['ArrowDown', [0, -1]],
  ['KeyA', [-1, 0]],
  ['ArrowLeft', [-1, 0]],
  ['KeyD', [1, 0]],
  ['ArrowRight', [1, 0]],
]);

/** Whether `code` (KeyboardEvent.code) is a movement key. */
export function isMovementKey(code: string): boolean {
  return KEY_AXES.has(code);
}

/** The direction of the movement keys held (opposite keys cancel; diagonals are normalized). */
export function keysToDirection(held: Iterable<string>): Direction {
  let x = 0;
  let y = 0;
  const seen = new Set<string>();
  for (const code of held) {
    const axis = KEY_AXES.get(code);
    // W and ArrowUp together still mean "up", once.
    const key = axis ? `${axis[0]},${axis[1]}` : '';
    if (!axis || seen.has(key)) continue;
    seen.add(key);
    x += axis[0];
    y += axis[1];
  }
  return normalize(x, y);
}

/** (x, y) scaled to unit length; STILL when shorter than 1e-6. */
export function normalize(x: number, y: number): Direction {
  const len = Math.hypot(x, y);
  if (!(len > 1e-6)) return STILL;
  return { x: x / len, y: y / len };
}

/**
 * The direction of a drag from its start by (dx, dy) CSS pixels (screen y grows
 * downwards). Inside `deadZonePx` it is STILL; outside, the angle snaps to one
 * of `sectors` directions so a wobbling finger does not send a stream of inputs.
 */
export function dragToDirection(dx: number, dy: number, deadZonePx = 12, sectors = 16): Direction {
  if (Math.hypot(dx, dy) < deadZonePx) return STILL;
  const step = (2 * Math.PI) / sectors;
  const angle = Math.round(Math.atan2(-dy, dx) / step) * step;
  const x = Math.cos(angle);
  const y = Math.sin(angle);
  // Exact zeros for the axis directions (cos(pi/2) is 6e-17, not 0).
  return { x: Math.abs(x) < 1e-9 ? 0 : x, y: Math.abs(y) < 1e-9 ? 0 : y };
}

/** Whether two directions are the same (within float noise). */
export function sameDirection(a: Direction, b: Direction): boolean {
  return Math.abs(a.x - b.x) < 1e-6 && Math.abs(a.y - b.y) < 1e-6;
}
