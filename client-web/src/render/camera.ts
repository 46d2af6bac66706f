// The camera: follows the local player, zooms between "whole world" and close
// up, and keeps the view from wandering off the world: on an axis where the
// view is wider than the world it centres the world, otherwise it stops where
// the world's edge (drawn by the floor shader) is a margin (8 % of the world)
// inside the edge of the screen. World y grows upwards; screen y downwards.
//
// With area of interest (a view radius) the server sends only what is near
// the player: the camera is centred on the player (no stop at the world's
// edge, which would show the far side of the view unsent) and starts with the
// screen's corners at the view radius. The player may zoom out (wheel, `-`)
// until the whole circle of the view radius fits in the part of the screen
// the panels leave free, with a small margin: the floor outside that circle
// is dimmed and bodies fade out at it (render/floor.wgsl, bodies.wgsl; the
// circle's centre and radius are in the view uniform), so what is drawn is
// what the view radius covers, and nobody pops in on screen.
//
// Panels may cover the right of the screen (the player list and the chat):
// the followed player is kept at the centre of the part they leave free, and
// at the world's edge the view may go that much further, so the own player is
// never under a panel.

import type { Bounds } from '../net/protocol.js';

/** Floats the camera writes into the shared uniform buffer (see render/view.wgsl). */
export const VIEW_FLOATS = 16;

/** Camera state and world <-> screen mapping. */
export class Camera {
  /** View centre, world units. */
  x = 0;
  y = 0;
  /** CSS pixels per world unit: [`chosen`] or the default, within the zoom limits. */
  zoom = 1;
  /**
   * The zoom the player chose (wheel, `+`, `-`), CSS pixels per world unit;
   * `null` until they do, or since the world or the view radius changed: the
   * default zoom for the current viewport. So a viewport measured late (the
   * page laid out after the Welcome) starts at the default, not at a zoom
   * computed for a 1 x 1 viewport and clamped to the farthest out.
   */
  private chosen: number | null = null;
  /** Viewport, CSS pixels, and device pixels per CSS pixel. */
  width = 1;
  height = 1;
  dpr = 1;
  private bounds: Bounds = { minX: 0, minY: 0, maxX: 1000, maxY: 1000 };
  private placed = false;
  private hasBounds = false;
  /** Area of interest: the view radius (world units) the screen stays within; 0 without. */
  private viewRadius = 0;
  /** CSS pixels at the right of the screen covered by panels. */
  private insetRight = 0;
  /** World units shown across the shorter side at the default zoom. */
  static readonly DEFAULT_SPAN = 600;
  /** Closest zoom: world units across the shorter side. */
  static readonly MIN_SPAN = 120;
  /** Margin beyond the world's edge the view may show, as a fraction of the world's size. */
  static readonly EDGE_MARGIN = 0.08;
  /** Area of interest: margin around the view radius's circle at the farthest zoom out, as a fraction of the radius. */
  static readonly VIEW_MARGIN = 0.06;
  /** Where the followed player was last put, world units: the centre of the view radius's circle. */
  private focusWorldX = 0;
  private focusWorldY = 0;

  /** Sets the world's bounds (from Welcome or a snapshot). */
  setBounds(b: Bounds): void {
    const old = this.bounds;
    const changed = old.minX !== b.minX || old.minY !== b.minY || old.maxX !== b.maxX || old.maxY !== b.maxY;
    this.bounds = b;
    if (!changed && this.hasBounds) return;
    this.hasBounds = true;
    this.chosen = null;
    this.rezoom();
  }

  /** Sets the viewport size in CSS pixels and the device pixel ratio. */
  resize(width: number, height: number, dpr: number): void {
    const changed = width !== this.width || height !== this.height;
    this.width = Math.max(1, width);
    this.height = Math.max(1, height);
    this.dpr = dpr;
    if (changed) this.rezoom();
  }

  /**
   * Area of interest: keep the screen within `radius` world units of the
   * followed player (0: whole-shard mode, today's camera). Resets the zoom
   * to the default when it changes.
   */
  setViewRadius(radius: number): void {
    const r = Number.isFinite(radius) && radius > 0 ? radius : 0;
    if (r === this.viewRadius) return;
    this.viewRadius = r;
    this.chosen = null;
    this.rezoom();
  }

  /**
   * The right `px` CSS pixels of the screen are covered (by panels): the
   * followed player is put in the middle of the rest. At most 60 % of the
   * width counts.
   */
  setInsetRight(px: number): void {
    const inset = Number.isFinite(px) ? Math.max(0, Math.min(px, this.width * 0.6)) : 0;
    if (inset === this.insetRight) return;
    this.insetRight = inset;
    this.rezoom();
  }

  /** Where the followed player is put, CSS pixels from the left: the middle of the part panels leave free. */
  get focusX(): number {
    return (this.width - this.insetRight) / 2;
  }

  /** Where the followed player was last put, world units (the centre of the view radius's circle). */
  get followedX(): number {
    return this.focusWorldX;
  }

  get followedY(): number {
    return this.focusWorldY;
  }

  /** The view radius the camera keeps to, world units (0: whole-shard mode). */
  get radius(): number {
    return this.viewRadius;
  }

  /** The zoom to start at: 600 world units across the shorter side; with area of interest, the screen's corners at the view radius. */
  private defaultZoom(): number {
    if (this.viewRadius > 0) return Math.max(this.fitZoom(), Math.hypot(this.width, this.height) / 2 / this.viewRadius);
    return Math.min(this.width, this.height) / Camera.DEFAULT_SPAN;
  }

  /**
   * The farthest zoom out: the whole world (and its margin) fits the view;
   * with area of interest, the whole circle of the view radius (and
   * VIEW_MARGIN) fits the part of the screen the panels leave free.
   */
  fitZoom(): number {
    if (this.viewRadius > 0) {
      const free = Math.min(Math.max(1, this.width - this.insetRight), this.height);
      return free / (2 * this.viewRadius * (1 + Camera.VIEW_MARGIN));
    }
    const w = this.bounds.maxX - this.bounds.minX;
    const h = this.bounds.maxY - this.bounds.minY;
    const k = 1 + 2 * Camera.EDGE_MARGIN;
    return Math.min(this.width / (w * k), this.height / (h * k));
  }

  private clampZoom(z: number): number {
    const least = this.fitZoom();
    const most = Math.max(least, Math.min(this.width, this.height) / Camera.MIN_SPAN);
    return Math.min(most, Math.max(least, z));
  }

  /** Multiplies the zoom by `factor` (>1 closer), within [whole world, MIN_SPAN]. */
  zoomBy(factor: number): void {
    this.chosen = this.clampZoom(this.zoom * factor);
    this.zoom = this.chosen;
  }

  /** Derives the zoom from the viewport, the panels, the world and the player's choice. */
  private rezoom(): void {
    this.zoom = this.clampZoom(this.chosen ?? this.defaultZoom());
  }

  /**
   * Follows the player at (`px`, `ty`), keeping it at [`focusX`] across and
   * the middle down: moves over `dtMs` about 90 % of the way in 200 ms;
   * jumps there on the first call. Without area of interest it stops at the
   * world's edge (see the module comment).
   */
  follow(px: number, ty: number, dtMs: number): void {
    this.focusWorldX = px;
    this.focusWorldY = ty;
    // The view's centre that puts the player at focusX.
    const tx = px + this.insetRight / 2 / this.zoom;
    if (!this.placed || !(dtMs < 1000)) {
      this.x = tx;
      this.y = ty;
      this.placed = true;
    } else {
      const k = 1 - Math.exp(-dtMs / 90);
      this.x += (tx - this.x) * k;
      this.y += (ty - this.y) * k;
    }
    if (this.viewRadius > 0) return;
    this.x = this.clampAxis(this.x, this.bounds.minX, this.bounds.maxX, this.width, this.insetRight);
    this.y = this.clampAxis(this.y, this.bounds.minY, this.bounds.maxY, this.height, 0);
  }

  /** Clamps a view centre on one axis; `coveredPx` at the far end of the screen (the right) do not count as view. */
  private clampAxis(c: number, min: number, max: number, viewPx: number, coveredPx: number): number {
    const half = viewPx / this.zoom / 2;
    const covered = coveredPx / this.zoom;
    const margin = (max - min) * Camera.EDGE_MARGIN;
    if (2 * half - covered >= max - min + 2 * margin - 1e-6) return (min + max) / 2 + covered / 2;
    return Math.min(max + margin - half + covered, Math.max(min - margin + half, c));
  }

  /** CSS pixel x (from the viewport's left edge) of world x. One number per call, so per-frame code allocates nothing. */
  screenX(x: number): number {
    return this.width / 2 + (x - this.x) * this.zoom;
  }

  /** CSS pixel y (from the viewport's top edge, growing downwards) of world y. */
  screenY(y: number): number {
    return this.height / 2 - (y - this.y) * this.zoom;
  }

  /** World x under CSS pixel x `px`. */
  worldX(px: number): number {
    return this.x + (px - this.width / 2) / this.zoom;
  }

  /** World y under CSS pixel y `py`. */
  worldY(py: number): number {
    return this.y - (py - this.height / 2) / this.zoom;
  }

  /**
   * Writes the view uniform: centre, clip units per world unit, bounds, the
   * viewport in device pixels, the body radius (world units), device pixels
   * per world unit, and the view radius's circle (the followed player's
   * position and the radius, world units; 0 without area of interest), in
   * the layout of `struct View` in the shaders.
   */
  writeView(out: Float32Array, radius: number): void {
    out[0] = this.x;
    out[1] = this.y;
    out[2] = (2 * this.zoom) / this.width;
    out[3] = (2 * this.zoom) / this.height;
    out[4] = this.bounds.minX;
    out[5] = this.bounds.minY;
    out[6] = this.bounds.maxX;
    out[7] = this.bounds.maxY;
    out[8] = this.width * this.dpr;
    out[9] = this.height * this.dpr;
    out[10] = radius;
    out[11] = this.zoom * this.dpr;
    out[12] = this.focusWorldX;
    out[13] = this.focusWorldY;
    out[14] = this.viewRadius;
    out[15] = 0;
  }
}
