// The camera: world <-> screen mapping, following, zoom limits, staying on the world.
import { describe, expect, it } from 'vitest';
import { Camera } from './camera.js';

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
    const out = new Float32Array(12);
    c.writeView(out, 9);
    expect(Array.from(out)).toEqual([500, 500, 2 / 800, 2 / 600, 0, 0, 1000, 1000, 1600, 1200, 9, 2].map(Math.fround));
  });
});
