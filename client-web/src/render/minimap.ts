// The minimap (area of interest): the whole world in a corner, where the local
// player stands in it, its view radius and what the screen shows, and the
// players in view as dots. At the world's edge the screen's rectangle and the
// view radius reach past the world: they are cut at the world's frame. The main view shows only the view radius around the
// player, so this is how a player finds their way in a large world. A small
// 2D canvas of its own, redrawn at most ten times a second from the frame's
// draw list, so it costs no draw call of the WebGPU pass and allocates nothing.

import type { Bounds } from '../net/protocol.js';
import type { Camera } from './camera.js';
import type { DrawList } from './renderer.js';

/** The part of CanvasRenderingContext2D the minimap draws with (a fake one in tests). */
export type MinimapContext = Pick<
  CanvasRenderingContext2D,
  | 'fillStyle'
  | 'strokeStyle'
  | 'lineWidth'
  | 'setTransform'
  | 'clearRect'
  | 'fillRect'
  | 'strokeRect'
  | 'beginPath'
  | 'arc'
  | 'stroke'
  | 'save'
  | 'restore'
  | 'rect'
  | 'clip'
>;

/** Side of the minimap, CSS pixels. */
export const MINIMAP_PX = 160;
/** Least time between two redraws, ms. */
export const MINIMAP_REFRESH_MS = 100;
/** Margin inside the minimap's edge, CSS pixels. */
const PAD = 4;

const WORLD_FILL = '#141a21';
const WORLD_EDGE = '#3a4656';
const VIEW_EDGE = '#40d1ff';
const SCREEN_EDGE = '#9fb0c0';
const OTHER = '#f79929';
const OWN = '#40d1ff';

/** The minimap; see the module comment. */
export class Minimap {
  private bounds: Bounds | null = null;
  private radius = 0;
  private at = Number.NEGATIVE_INFINITY;
  /** World -> minimap: CSS pixels per world unit and the offsets of the world's minimum corner. */
  private scale = 1;
  private left = 0;
  private bottom = 0;
  private dpr = 1;
  /** Dots drawn in the last redraw (players in view, the local player included). */
  dots = 0;

  constructor(
    private readonly el: { hidden: boolean; width: number; height: number },
    private readonly ctx: MinimapContext | null,
  ) {}

  /**
   * Shows the minimap for a world of `bounds` with view radius `radius`
   * (world units), or hides it (`bounds` null: whole-shard mode, where the
   * view already shows the world).
   */
  setWorld(bounds: Bounds | null, radius = 0): void {
    this.bounds = bounds;
    this.radius = radius;
    this.el.hidden = !bounds;
    if (!bounds) return;
    const w = bounds.maxX - bounds.minX;
    const h = bounds.maxY - bounds.minY;
    const inner = MINIMAP_PX - 2 * PAD;
    this.scale = inner / Math.max(w, h, 1);
    this.left = PAD + (inner - w * this.scale) / 2;
    this.bottom = MINIMAP_PX - PAD - (inner - h * this.scale) / 2;
    this.at = Number.NEGATIVE_INFINITY;
  }

  /** Sets the device pixel ratio (the canvas is MINIMAP_PX CSS pixels a side). */
  resize(dpr: number): void {
    const px = Math.round(MINIMAP_PX * dpr);
    if (this.el.width !== px) this.el.width = px;
    if (this.el.height !== px) this.el.height = px;
    this.dpr = px / MINIMAP_PX;
  }

  /** Minimap x of world x, CSS pixels. */
  mapX(x: number): number {
    return this.left + ((x - (this.bounds?.minX ?? 0)) * this.scale);
  }

  /** Minimap y of world y, CSS pixels (world y grows upwards). */
  mapY(y: number): number {
    return this.bottom - ((y - (this.bounds?.minY ?? 0)) * this.scale);
  }

  /**
   * Redraws if shown and due at `nowMs`: the world, the screen's rectangle
   * (from `camera`), the view radius around the local player `ownId`, and a
   * dot for every player of `players`.
   */
  update(players: DrawList, ownId: number, camera: Camera, nowMs: number): void {
    const b = this.bounds;
    const c = this.ctx;
    if (!b || !c || nowMs - this.at < MINIMAP_REFRESH_MS) return;
    this.at = nowMs;
    c.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    c.clearRect(0, 0, MINIMAP_PX, MINIMAP_PX);
    this.world(c, b);
    this.screen(c, camera);
    this.dots = this.players(c, players, ownId);
    c.restore();
  }

  /** The world's rectangle and its frame, then a clip to it (undone by the caller's `restore`). */
  private world(c: MinimapContext, b: Bounds): void {
    c.fillStyle = WORLD_FILL;
    c.strokeStyle = WORLD_EDGE;
    c.lineWidth = 1;
    const x0 = this.mapX(b.minX);
    const y0 = this.mapY(b.maxY);
    const ws = (b.maxX - b.minX) * this.scale;
    const hs = (b.maxY - b.minY) * this.scale;
    c.fillRect(x0, y0, ws, hs);
    c.strokeRect(x0, y0, ws, hs);
    c.save();
    c.beginPath();
    c.rect(x0, y0, ws, hs);
    c.clip();
  }

  /** The rectangle the screen shows, and the view radius around the followed player. */
  private screen(c: MinimapContext, camera: Camera): void {
    // mapX / mapY written out: every call here passes its numbers straight to the context.
    const k = this.scale;
    const minX = this.bounds?.minX ?? 0;
    const minY = this.bounds?.minY ?? 0;
    const halfW = camera.width / camera.zoom / 2;
    const halfH = camera.height / camera.zoom / 2;
    c.strokeStyle = SCREEN_EDGE;
    c.strokeRect(this.left + (camera.x - halfW - minX) * k, this.bottom - (camera.y + halfH - minY) * k, 2 * halfW * k, 2 * halfH * k);
    if (this.radius <= 0) return;
    c.strokeStyle = VIEW_EDGE;
    c.beginPath();
    c.arc(this.left + (camera.followedX - minX) * k, this.bottom - (camera.followedY - minY) * k, Math.max(2, this.radius * k), 0, 2 * Math.PI);
    c.stroke();
  }

  /** A dot per player, the local one last and larger; returns how many. */
  private players(c: MinimapContext, players: DrawList, ownId: number): number {
    c.fillStyle = OTHER;
    const own = players.indexOf(ownId);
    for (let i = 0; i < players.count; i++) {
      if (i === own) continue;
      c.fillRect(this.mapX(players.x[i] as number) - 1, this.mapY(players.y[i] as number) - 1, 2, 2);
    }
    if (own >= 0) {
      c.fillStyle = OWN;
      c.fillRect(this.mapX(players.x[own] as number) - 2, this.mapY(players.y[own] as number) - 2, 4, 4);
    }
    return players.count;
  }
}
