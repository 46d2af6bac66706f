// A player's entry as the wire carries it (schema/mino.fbs, PlayerState; the
// same fields in protocol 4's full forms and deltas, net/delta.ts): a 16-bit
// position quantized over the world's bounds, an 8-bit heading and flags
// whose bits the schema names. The page reads them in world units, radians
// and these flag bits.

import { EntryFlag, EntryFlagShift } from '../generated/mino/wire.js';

/** Bit 0 of a player's flags: walking this tick (the schema's EntryFlag.Moving). */
export const FLAG_MOVING: number = EntryFlag.Moving;
/**
 * Bits 1-7 of a player's flags echo the low 7 bits of the last Input.seq the
 * server applied (for client-side prediction): `flags >> INPUT_SEQ_SHIFT`
 * (the schema's EntryFlagShift.InputSeqShift).
 */
export const INPUT_SEQ_SHIFT: number = EntryFlagShift.InputSeqShift;

/** World coordinate of a 16-bit quantized one over [min, max]. */
export function dequantize(q: number, min: number, max: number): number {
  return min + (q / 65535) * (max - min);
}

/** Radians of an 8-bit heading (a full turn, counter-clockwise from +x). */
export function headingRadians(h: number): number {
  return (h / 256) * 2 * Math.PI;
}
