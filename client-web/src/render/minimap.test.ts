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
  save(): void {}
  restore(): void {}
  rect(): void {}
  clip(): void {}
}

/** A FakeContext that also keeps the extent of what is stroked as it shows through the clip in force (one save deep). */
class ClipContext extends FakeContext {
  private readonly clipRect = new Float64Array(4);
  private clipped = false;
  private readonly path = new Float64Array(4);
  private readonly saved = new Float64Array(4);
  private savedClipped = false;
  /** The extent of everything stroked, as it shows after the clip in force: x0, y0, x1, y1. */
  readonly reach = new Float64Array([Infinity, Infinity, -Infinity, -Infinity]);
  private drawn(x0: number, y0: number, x1: number, y1: number): void {
    const c = this.clipRect;
    const k = this.clipped;
    const r = this.reach;
    r[0] = Math.min(r[0] as number, k ? Math.max(x0, c[0] as number) : x0);
    r[1] = Math.min(r[1] as number, k ? Math.max(y0, c[1] as number) : y0);
    r[2] = Math.max(r[2] as number, k ? Math.min(x1, c[2] as number) : x1);
    r[3] = Math.max(r[3] as number, k ? Math.min(y1, c[3] as number) : y1);
  }
  override arc(x?: number, y?: number, r?: number): void {
    super.arc();
    this.drawn((x ?? 0) - (r ?? 0), (y ?? 0) - (r ?? 0), (x ?? 0) + (r ?? 0), (y ?? 0) + (r ?? 0));
  }
  override strokeRect(x?: number, y?: number, w?: number, h?: number): void {
    super.strokeRect();
    this.drawn(x ?? 0, y ?? 0, (x ?? 0) + (w ?? 0), (y ?? 0) + (h ?? 0));
  }
  override save(): void {
    this.saved.set(this.clipRect);
    this.savedClipped = this.clipped;
  }
  override restore(): void {
    this.clipRect.set(this.saved);
    this.clipped = this.savedClipped;
  }
  override rect(x?: number, y?: number, w?: number, h?: number): void {
    this.path[0] = x ?? 0;
    this.path[1] = y ?? 0;
    this.path[2] = (x ?? 0) + (w ?? 0);
    this.path[3] = (y ?? 0) + (h ?? 0);
  }
  override clip(): void {
    this.clipRect.set(this.path);
    this.clipped = true;
  }
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

  it("stays inside the world's frame at the world's corner: the screen and the view radius are cut there", () => {
    const s = scene();
    const ctx = new ClipContext();
    s.map = new Minimap(s.el, ctx);
    s.map.setWorld(AOI_WORLD, 250);
    s.camera.zoomBy(0.01); // zoomed all the way out
    s.camera.follow(0, 0, 0);
    s.players.begin();
    s.players.put(1, 0, 0, 0, 0, 0);
    s.map.update(s.players, 1, s.camera, 0);
    // The world's frame is [4, MINIMAP_PX - 4] on both axes; whatever is drawn reaches no further.
    const [x0, y0, x1, y1] = Array.from(ctx.reach);
    expect([x0, y0]).toEqual([4, 4]);
    expect([x1, y1]).toEqual([MINIMAP_PX - 4, MINIMAP_PX - 4]);
    expect(ctx.arcs).toBe(1);
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
