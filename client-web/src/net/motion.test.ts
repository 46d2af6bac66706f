// The movement rule against the shared fixture the server's own rule wrote
// (schema/tests/motion.rs): every heading's step and some walks must agree
// bit for bit, since the delta frames predict walkers with it on both sides.

import { describe, expect, it } from 'vitest';
import fixture from '../../../schema/fixtures/motion.json';
import { Motion, headingOf } from './motion.js';

interface World {
  bounds: { min_x: number; min_y: number; max_x: number; max_y: number };
  speed: number;
  tick_hz: number;
  steps: number[][];
  walks: { from: number[]; heading: number; moving: boolean; ticks: number; to: number[] }[];
}

const worlds: World[] = fixture.worlds;

describe('the movement rule', () => {
  it('has worlds to check', () => {
    expect(worlds.length).toBeGreaterThanOrEqual(5);
  });

  for (const w of worlds) {
    const b = { minX: w.bounds.min_x, minY: w.bounds.min_y, maxX: w.bounds.max_x, maxY: w.bounds.max_y };
    const name = `${w.bounds.max_x - w.bounds.min_x} units, ${w.speed} units/s, ${w.tick_hz} Hz`;
    it(`steps every heading as the server does (${name})`, () => {
      const m = new Motion(b, w.speed, w.tick_hz);
      const got = w.steps.map((_, h) => [m.stepX(h), m.stepY(h)]);
      expect(got).toEqual(w.steps);
    });
    it(`walks as the server does (${name})`, () => {
      const m = new Motion(b, w.speed, w.tick_hz);
      for (const walk of w.walks) {
        const to = [
          m.advanceX(walk.from[0] ?? Number.NaN, walk.heading, walk.moving, walk.ticks),
          m.advanceY(walk.from[1] ?? Number.NaN, walk.heading, walk.moving, walk.ticks),
        ];
        expect(to).toEqual(walk.to);
      }
    });
  }

  it('gives a direction the heading the server gives it', () => {
    expect(headingOf(1, 0)).toBe(0);
    expect(headingOf(0, 1)).toBe(64);
    expect(headingOf(-1, 0)).toBe(128);
    expect(headingOf(0, -1)).toBe(192);
    expect(headingOf(Math.SQRT1_2, Math.SQRT1_2)).toBe(32);
    expect(headingOf(1, -1e-9)).toBe(0);
  });
});
