import { describe, expect, it } from 'vitest';
import { bodyRgb, hueIndex, HUES } from './hue.js';

/** The own player's body colour (bodies.wgsl). */
const OWN: readonly number[] = [64, 209, 255];

describe('player hues', () => {
  it('are stable per id and spread neighbouring ids over the wheel', () => {
    expect(hueIndex(42)).toBe(hueIndex(42));
    const hues = new Set(Array.from({ length: 64 }, (_, i) => hueIndex(i + 1)));
    expect(hues.size).toBeGreaterThan(55);
    for (let id = 1; id < 2000; id++) expect(hueIndex(id)).toBeLessThan(HUES);
  });

  it('never come near the own player cyan', () => {
    for (let h = 0; h < HUES; h++) {
      const c = bodyRgb(h);
      const near = c.every((v, i) => Math.abs(v - (OWN[i] as number)) <= 40);
      expect(near, `hue ${h}: ${c.join(',')}`).toBe(false);
    }
  });

  it('match the shader: hue 0 is 225 degrees (a blue), saturated and bright', () => {
    expect(bodyRgb(0)).toEqual([62, 108, 247]);
    // Orange, about 30 degrees: (30 - 225 + 360) / 300 * 256.
    const orange = bodyRgb(Math.round(((30 - 225 + 360) / 300) * 256));
    expect(orange[0]).toBe(247);
    expect(orange[2]).toBe(62);
  });
});
