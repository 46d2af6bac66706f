// Each player's own colour: a hue drawn from its id (stable across frames,
// reconnects and pages), at one saturation and brightness, so players are
// told apart at a glance. The band of hues around the own player's cyan is
// left out, so the own player (cyan, with a white ring) stays unmistakable.
// bodies.wgsl computes the same colour from the hue index; this twin gives
// tests the colour to look for.

/** Hue indices: 0..HUES-1, packed into an instance's style above its two flag bits. */
export const HUES = 256;
/** Saturation and brightness (value) of other players' bodies, 0..1. */
export const SATURATION = 0.75;
export const VALUE = 0.97;
/** The hues used: from HUE_FROM degrees around the wheel for HUE_SPAN degrees (skips 165-225°, the own cyan's band). */
export const HUE_FROM = 225;
export const HUE_SPAN = 300;

/** The hue index (0..255) of player `id`: a multiplicative hash, so neighbouring ids get distant hues. */
export function hueIndex(id: number): number {
  return Math.imul(id >>> 0, 0x9e3779b1) >>> 24;
}

/** The body colour of hue index `hue`, sRGB 0..255 per channel, as bodies.wgsl draws it. */
export function bodyRgb(hue: number): [number, number, number] {
  const h = (((HUE_FROM + (hue / HUES) * HUE_SPAN) % 360) + 360) % 360 / 60;
  const channel = (n: number): number => {
    const k = (n + h) % 6;
    return VALUE - VALUE * SATURATION * Math.max(0, Math.min(k, 4 - k, 1));
  };
  return [Math.round(channel(5) * 255), Math.round(channel(3) * 255), Math.round(channel(1) * 255)];
}
