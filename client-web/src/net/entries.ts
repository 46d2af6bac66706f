// Players on the wire: the 10-byte PlayerState entries that snapshots and cell
// frames carry (id in two halves, a 16-bit position quantized over the world's
// bounds, an 8-bit heading, flags), copied into column arrays in world units.
// One copy loop for both messages, with one reused accessor, so reading a
// frame's players allocates nothing.

import { PlayerState } from '../generated/mino/wire.js';
import type { Bounds, PlayerColumns } from './protocol.js';

/** Bit 0 of a player's flags: walking this tick. */
export const FLAG_MOVING = 1;
/**
 * Bits 1-7 of a player's flags echo the low 7 bits of the last Input.seq the
 * server applied (for client-side prediction): `flags >> INPUT_SEQ_SHIFT`.
 */
export const INPUT_SEQ_SHIFT = 1;

/** World coordinate of a 16-bit quantized one over [min, max]. */
export function dequantize(q: number, min: number, max: number): number {
  return min + (q / 65535) * (max - min);
}

/** Radians of an 8-bit heading (a full turn, counter-clockwise from +x). */
export function headingRadians(h: number): number {
  return (h / 256) * 2 * Math.PI;
}

/** The accessor every copy reuses (reading is synchronous, so one is enough). */
const entry = new PlayerState();

/**
 * Copies `count` entries into `out[0..count)`: ids, positions dequantized over
 * `b` (world units), headings in radians, flags as on the wire. `at(i, into)`
 * points `into` at entry i of the verified message and returns it. The arrays
 * of `out` must hold `count` players.
 */
export function copyEntries(count: number, at: (i: number, into: PlayerState) => PlayerState | null, b: Bounds, out: PlayerColumns): void {
  const sx = (b.maxX - b.minX) / 65535;
  const sy = (b.maxY - b.minY) / 65535;
  for (let i = 0; i < count; i++) {
    const p = at(i, entry);
    if (!p) continue;
    out.ids[i] = p.idLo() + p.idHi() * 65536;
    out.x[i] = b.minX + p.x() * sx;
    out.y[i] = b.minY + p.y() * sy;
    out.heading[i] = headingRadians(p.heading());
    out.flags[i] = p.flags();
  }
}
