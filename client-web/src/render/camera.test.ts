// The camera: world <-> screen mapping, following, zoom limits, staying on the world.
import { describe, expect, it } from 'vitest';
import { Camera, VIEW_FLOATS } from './camera.js';

function camera(): Camera {
  const c = new Camera();
  c.resize(800, 600, 1);
  c.setBounds({ minX: 0, minY: 0, maxX: 1000, maxY: 1000 });
  return c;
}

describe('camera', () => {
  it('shows 600 world units across the shorter side by default', () => {
    expect(camera().zoom).toBeCloseTo(1, 9);
  });

  it('maps world to screen and back, y up', () => {
    const c = camera();
    c.follow(500, 500, 0);
    expect([c.screenX(500), c.screenY(500)]).toEqual([400, 300]);
    expect([c.screenX(510), c.screenY(510)]).toEqual([410, 290]);
    expect([c.worldX(410), c.worldY(290)]).toEqual([510, 510]);
  });

  it('follows the player but keeps the world edge in view', () => {
    const c = camera();
    c.follow(0, 0, 0);
    // The view (800 x 600 units) stops 80 units (8 % of the world) beyond its corner.
    expect(c.screenX(0)).toBeCloseTo(80, 6);
    expect(c.screenY(0)).toBeCloseTo(600 - 80, 6);
  });

  it('keeps the followed player out from under the panels on the right, at the world edge too', () => {
    const c = camera();
    c.setInsetRight(250);
    c.follow(500, 500, 0);
    expect(c.focusX).toBe(275);
    expect(c.screenX(500)).toBeCloseTo(275, 6);
    // At the world's right edge the view goes further right, so the player stays in the free part.
    c.follow(1000, 500, 5000); // a long frame: jumps there
    expect(c.screenX(1000)).toBeLessThanOrEqual(800 - 250);
    expect(c.screenX(1000)).toBeGreaterThan(400);
    // Zoomed all the way out, too.
    c.zoomBy(0.001);
    c.follow(1000, 500, 5000);
    expect(c.screenX(1000)).toBeLessThanOrEqual(800 - 250 + 1e-6);
  });

  it('zooms between the whole world and close up', () => {
    const c = camera();
    c.zoomBy(0.001);
    expect(c.zoom).toBeCloseTo(c.fitZoom(), 9);
    c.follow(900, 100, 0);
    // Whole world in view: centred on it whatever the player does.
    expect([c.x, c.y]).toEqual([500, 500]);
    c.zoomBy(1000);
    expect(c.zoom).toBeCloseTo(600 / Camera.MIN_SPAN, 9);
  });

  it('writes the view uniform: clip scale and device pixels', () => {
    const c = camera();
    c.resize(800, 600, 2);
    c.follow(500, 500, 0);
    const out = new Float32Array(VIEW_FLOATS);
    c.writeView(out, 9);
    // ... and the view radius's circle: the followed player and no radius (whole-shard mode).
    expect(Array.from(out)).toEqual([500, 500, 2 / 800, 2 / 600, 0, 0, 1000, 1000, 1600, 1200, 9, 2, 500, 500, 0, 0].map(Math.fround));
  });
});

describe('camera with area of interest', () => {
  function aoiCamera(radius = 250): Camera {
    const c = new Camera();
    c.resize(800, 600, 1);
    c.setBounds({ minX: 0, minY: 0, maxX: 2000, maxY: 2000 });
    c.setViewRadius(radius);
    return c;
  }

  /** World distance from the view centre to the screen's farthest corner. */
  function cornerReach(c: Camera): number {
    return Math.hypot(c.width, c.height) / 2 / c.zoom;
  }

  it('shows the view radius around the player: the corners at the radius, the prefetch ring off screen', () => {
    const c = aoiCamera();
    c.follow(1000, 1000, 0);
    expect(cornerReach(c)).toBeCloseTo(250, 6);
    expect([c.screenX(1000), c.screenY(1000)]).toEqual([400, 300]);
  });

  /** World distance from the view centre to the nearer edge of the part of the screen the panels leave free. */
  function freeReach(c: Camera, inset = 0): number {
    return Math.min(c.width - inset, c.height) / 2 / c.zoom;
  }

  it('zooms out from the default until the whole view radius fits the screen, with a margin, and no further', () => {
    const c = aoiCamera();
    const start = c.zoom;
    c.zoomBy(0.8); // one press of "-"
    expect(c.zoom).toBeLessThan(start);
    c.zoomBy(0.01);
    expect(freeReach(c)).toBeCloseTo(250 * (1 + Camera.VIEW_MARGIN), 6);
    expect(cornerReach(c)).toBeGreaterThan(250);
    c.zoomBy(100);
    expect(c.zoom).toBeCloseTo(600 / Camera.MIN_SPAN, 9);
    // A larger window shows the same circle, no more.
    c.zoomBy(0.01);
    c.resize(1600, 1000, 1);
    expect(freeReach(c)).toBeCloseTo(250 * (1 + Camera.VIEW_MARGIN), 6);
  });

  it('starts at the default zoom when the viewport is measured after the Welcome (the CI flake: a zoom for 1 x 1, clamped to the farthest out)', () => {
    const c = new Camera();
    c.setBounds({ minX: 0, minY: 0, maxX: 2000, maxY: 2000 });
    c.setViewRadius(250);
    c.resize(800, 600, 1);
    c.setInsetRight(200);
    expect(cornerReach(c)).toBeCloseTo(250, 6);
    // Whole shard the same: 600 world units across the shorter side, not the whole world.
    const w = new Camera();
    w.setBounds({ minX: 0, minY: 0, maxX: 1000, maxY: 1000 });
    w.resize(800, 600, 1);
    expect(w.zoom).toBeCloseTo(1, 9);
  });

  it("keeps the player's zoom through a resize, and drops it for a new view radius", () => {
    const c = aoiCamera();
    c.zoomBy(0.8);
    const chosen = c.zoom;
    c.resize(900, 700, 1);
    expect(c.zoom).toBeCloseTo(chosen, 9);
    c.setViewRadius(300);
    expect(cornerReach(c)).toBeCloseTo(300, 6);
  });

  it('fits the circle into what the panels leave free', () => {
    const c = aoiCamera();
    c.setInsetRight(300);
    c.zoomBy(0.01);
    expect(freeReach(c, 300)).toBeCloseTo(250 * (1 + Camera.VIEW_MARGIN), 6);
  });

  it('puts the view radius and its centre (the followed player) in the view uniform', () => {
    const c = aoiCamera();
    c.follow(1234, 567, 0);
    const out = new Float32Array(VIEW_FLOATS);
    c.writeView(out, 9);
    expect(Array.from(out.subarray(12))).toEqual([1234, 567, 250, 0]);
  });

  it('follows the player to the world\'s edge and past it, centred', () => {
    const c = aoiCamera();
    c.follow(0, 0, 0);
    expect([c.x, c.y]).toEqual([0, 0]);
    c.follow(2000, 10, 16);
    c.follow(2000, 10, 5000); // a long gap jumps
    expect([c.x, c.y]).toEqual([2000, 10]);
  });

  it('goes back to today\'s camera without a view radius', () => {
    const c = aoiCamera();
    c.setViewRadius(0);
    expect(c.zoom).toBeCloseTo(1, 9);
    c.follow(0, 0, 0);
    expect(c.x).toBeGreaterThan(0); // stopped at the world's edge and its margin
  });
});
