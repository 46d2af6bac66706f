// The minimap: shown only with area of interest, the world scaled into its
// square, a dot per player in view (the local one larger), at most ten
// redraws a second, and no allocation in a steady frame.
import { describe, expect, it } from 'vitest';
import { MergedPlayers } from '../interp/world.js';
import { FRAME_BUDGET_BYTES, bytesPerFrame } from '../testing/allocation.js';
import { AOI_WORLD } from '../testing/cells.js';
import { Camera } from './camera.js';
import { MINIMAP_PX, MINIMAP_REFRESH_MS, Minimap, type MinimapContext } from './minimap.js';

/** A 2D context that keeps the rectangles filled with each colour and counts the rest, allocating nothing per call. */
class FakeContext implements MinimapContext {
  fillStyle: string | CanvasGradient | CanvasPattern = '';
  strokeStyle: string | CanvasGradient | CanvasPattern = '';
  lineWidth = 1;
  fills = 0;
  strokes = 0;
  arcs = 0;
  clears = 0;
  /** The last 4 x 4 rectangle filled (the local player): x, y. */
  ownAt: [number, number] = [Number.NaN, Number.NaN];
  setTransform(): void {}
  clearRect(): void {
    this.clears++;
  }
  fillRect(x: number, y: number, w: number): void {
    this.fills++;
    if (w === 4) {
      this.ownAt[0] = x + 2;
      this.ownAt[1] = y + 2;
    }
  }
  strokeRect(): void {
    this.strokes++;
  }
  beginPath(): void {}
  arc(): void {
    this.arcs++;
  }
  stroke(): void {}
}

function scene(): { map: Minimap; el: { hidden: boolean; width: number; height: number }; ctx: FakeContext; camera: Camera; players: MergedPlayers } {
  const el = { hidden: true, width: 0, height: 0 };
  const ctx = new FakeContext();
  const map = new Minimap(el, ctx);
  const camera = new Camera();
  camera.resize(800, 600, 1);
  camera.setBounds(AOI_WORLD);
  camera.setViewRadius(250);
  camera.follow(500, 1500, 0);
  const players = new MergedPlayers();
  players.begin();
  players.put(1, 500, 1500, 0, 0, 0);
  players.put(2, 600, 1400, 0, 0, 0);
  players.put(3, 450, 1550, 0, 0, 0);
  return { map, el, ctx, camera, players };
}

describe('minimap', () => {
  it('is shown only with area of interest, at the device pixel ratio', () => {
    const s = scene();
    s.map.setWorld(AOI_WORLD, 250);
    s.map.resize(2);
    expect([s.el.hidden, s.el.width, s.el.height]).toEqual([false, 2 * MINIMAP_PX, 2 * MINIMAP_PX]);
    s.map.setWorld(null);
    expect(s.el.hidden).toBe(true);
    s.map.update(s.players, 1, s.camera, 0);
    expect(s.ctx.clears).toBe(0);
  });

  it('draws the world in its square, the view radius, and every player in view, the local one where it stands', () => {
    const s = scene();
    s.map.setWorld(AOI_WORLD, 250);
    s.map.update(s.players, 1, s.camera, 0);
    expect(s.map.dots).toBe(3);
    // The world rectangle, two dots, the local player.
    expect(s.ctx.fills).toBe(1 + 2 + 1);
    expect(s.ctx.arcs).toBe(1);
    // (500, 1500) of a 2,000-unit world: a quarter across, three quarters up.
    const inner = MINIMAP_PX - 8;
    expect(s.ctx.ownAt[0]).toBeCloseTo(4 + inner / 4, 6);
    expect(s.ctx.ownAt[1]).toBeCloseTo(4 + inner / 4, 6);
    expect([s.map.mapX(0), s.map.mapY(0), s.map.mapX(2000), s.map.mapY(2000)]).toEqual([4, MINIMAP_PX - 4, MINIMAP_PX - 4, 4]);
  });

  it('redraws at most every MINIMAP_REFRESH_MS', () => {
    const s = scene();
    s.map.setWorld(AOI_WORLD, 250);
    s.map.update(s.players, 1, s.camera, 1000);
    s.map.update(s.players, 1, s.camera, 1000 + MINIMAP_REFRESH_MS - 1);
    expect(s.ctx.clears).toBe(1);
    s.map.update(s.players, 1, s.camera, 1000 + MINIMAP_REFRESH_MS);
    expect(s.ctx.clears).toBe(2);
  });

  it('allocates nothing in a steady frame of 500 players', async () => {
    const s = scene();
    s.map.setWorld(AOI_WORLD, 250);
    s.players.begin();
    for (let i = 0; i < 500; i++) s.players.put(i + 1, 300 + (i % 40) * 10, 1300 + Math.floor(i / 40) * 10, 0, 1, 0);
    let now = 0;
    const bytes = await bytesPerFrame(() => {
      now += MINIMAP_REFRESH_MS; // a redraw every frame, so the redraw path runs optimized
      s.map.update(s.players, 1, s.camera, now);
    });
    expect(s.map.dots).toBe(500);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});
