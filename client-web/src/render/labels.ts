// Player names, drawn the cheapest way that leaves the bodies in one draw
// call: a fixed pool of DOM labels over the canvas, for the local player, the
// few players nearest to it, and the one under the mouse.
//
// Labels never cover each other, the own player's body or the page's panels
// (the side panels, the HUD, the minimap: a label under a see-through panel
// would show through it): they are placed in order (the own player's, the
// hovered one's, then the nearest first), each at the first free spot of a few
// around its body (above, below, right, left, higher, lower); one with no free
// spot is not shown this frame. With area of interest only players within the
// view radius get one (the bodies beyond it fade out, render/bodies.wgsl). A
// label's size is measured when its text changes (estimated where there is no
// layout).
//
// Every frame runs this, so it allocates nothing: the local player is found by
// id through the draw list's index; each label keeps one Text node whose data
// is set (never parsed as HTML) only when the label changes player or the
// roster changes; its position is two CSS custom properties (--x, --y, whole
// CSS pixels, see style.css) set only when they change, from cached strings.

import { NumberText } from '../ui/number-text.js';
import type { Camera } from './camera.js';
import { BODY_RADIUS, type DrawList } from './renderer.js';

/** Names shown besides the local player's and the hovered one. */
const NEAREST = 6;
/** Room kept between two labels, and between a label and the own body, CSS pixels. */
const GAP = 2;
/** A label's size where nothing measures it: pixels per character and padding (12 px text), and its height. */
const CHAR_PX = 7;
const PAD_PX = 8;
const LABEL_PX = 17;
/** Candidate spots around a body, tried in order (see [`NameLabels.spot`]). */
const SPOTS = 6;
/** Labels in the pool: the local player, the hovered one, the nearest. */
const POOL = NEAREST + 2;
/** Most panel rectangles labels keep clear of. */
export const MAX_COVERED = 8;

/** A rectangle of the canvas, CSS pixels from its top left. */
export interface ScreenRect {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}
/** Whole CSS pixels as the value of a length property. */
const PX = new NumberText((n) => `${n}px`, 8192);

/** Where labels get names from (the Roster). `version` changes whenever a name may have. */
export interface NameSource {
  readonly version: number;
  name(id: number): string | undefined;
}

/** One label of the pool and what it shows now. */
class Label {
  readonly el: HTMLElement;
  private readonly text: Text;
  /** Player shown (-1: none), the roster version its text was taken at, and the text. */
  private id = -1;
  private version = -1;
  private shownText = '';
  private own = false;
  /** Size of the text shown, CSS pixels (measured when it changes). */
  width = 0;
  height = LABEL_PX;
  /** Position as last set, whole CSS pixels (NaN: never set). */
  private x = Number.NaN;
  private y = Number.NaN;

  constructor(doc: Document) {
    this.el = doc.createElement('div');
    this.el.className = 'label';
    this.el.hidden = true;
    this.text = doc.createTextNode('');
    this.el.append(this.text);
  }

  /**
   * Shows player `id` at whole CSS pixel (`x`, `y`) of the canvas. Whole
   * numbers, so that the call passes small integers, never boxed numbers.
   */
  show(id: number, names: NameSource, own: boolean, x: number, y: number): void {
    if (id !== this.id || names.version !== this.version) {
      this.id = id;
      this.version = names.version;
      const text = names.name(id) ?? `#${id}`;
      if (text !== this.shownText) {
        this.shownText = text;
        this.text.data = text;
        this.measure();
      }
    }
    if (own !== this.own) {
      this.own = own;
      this.el.classList.toggle('own', own);
    }
    if (x !== this.x) {
      this.x = x;
      this.el.style.setProperty('--x', PX.text(x));
    }
    if (y !== this.y) {
      this.y = y;
      this.el.style.setProperty('--y', PX.text(y));
    }
    if (this.el.hidden) this.el.hidden = false;
  }

  /**
   * Sets the text (as for [`show`]) of player `id` without showing it, so
   * its size is known before it is placed; returns whether it changed.
   */
  prepare(id: number, names: NameSource): void {
    if (id === this.id && names.version === this.version) return;
    this.id = id;
    this.version = names.version;
    const text = names.name(id) ?? `#${id}`;
    if (text === this.shownText) return;
    this.shownText = text;
    this.text.data = text;
    this.measure();
  }

  /** Takes the label's size from the layout (shown), or estimates it. */
  private measure(): void {
    const wasHidden = this.el.hidden;
    const w = wasHidden ? 0 : this.el.offsetWidth;
    const h = wasHidden ? 0 : this.el.offsetHeight;
    this.width = w > 0 ? w : this.shownText.length * CHAR_PX + PAD_PX;
    this.height = h > 0 ? h : LABEL_PX;
  }

  hide(): void {
    if (!this.el.hidden) this.el.hidden = true;
    this.id = -1;
  }
}

/** The pool of name labels over the canvas. */
export class NameLabels {
  private readonly labels: Label[] = [];
  /** Draw-list indices of the players to label this frame, the local player first. */
  private readonly pick = new Int32Array(POOL);
  private readonly pickDist = new Float64Array(NEAREST);
  /** Rectangles taken this frame (left, top, right, bottom, CSS pixels): the panels, the own body, then each label placed. */
  private readonly taken = new Float64Array((MAX_COVERED + POOL + 1) * 4);
  private takenCount = 0;
  /** The panels' rectangles (left, top, right, bottom), set on layout changes. */
  private readonly covered = new Float64Array(MAX_COVERED * 4);
  private coveredCount = 0;
  /** The spot chosen by [`spot`]: the label's bottom-centre, CSS pixels. */
  private spotX = 0;
  private spotY = 0;
  /** The body being labelled (CSS pixels), a label's lift above a body, and the rectangle being tried or taken. */
  private bx = 0;
  private by = 0;
  private lift = 0;
  private rl = 0;
  private rt = 0;
  private rr = 0;
  private rb = 0;
  private hasMouse = false;
  private mouseX = 0;
  private mouseY = 0;
  /** Id of the player under the mouse, or -1. */
  hovered = -1;

  constructor(container: HTMLElement) {
    for (let i = 0; i < POOL; i++) {
      const label = new Label(container.ownerDocument);
      container.append(label.el);
      this.labels.push(label);
    }
  }

  /** The mouse is at CSS pixel (x, y) of the canvas. */
  setMouse(x: number, y: number): void {
    this.hasMouse = true;
    this.mouseX = x;
    this.mouseY = y;
  }

  /** The mouse left the canvas. */
  clearMouse(): void {
    this.hasMouse = false;
  }

  /** The rectangles (canvas CSS pixels) the page's panels cover: no label goes there. At most MAX_COVERED; empty ones are skipped. */
  setCovered(rects: readonly ScreenRect[]): void {
    this.coveredCount = 0;
    for (const r of rects) {
      if (this.coveredCount === MAX_COVERED) break;
      if (!(r.right > r.left && r.bottom > r.top)) continue;
      const o = this.coveredCount++ * 4;
      this.covered[o] = r.left;
      this.covered[o + 1] = r.top;
      this.covered[o + 2] = r.right;
      this.covered[o + 3] = r.bottom;
    }
  }

  /** Places the labels for this frame; names come from `names`. */
  update(players: DrawList, ownId: number, camera: Camera, names: NameSource): void {
    let n = 0;
    const own = players.indexOf(ownId);
    if (own >= 0) this.pick[n++] = own;
    this.hovered = -1;
    const hover = this.hoverIndex(players, camera, own);
    if (hover >= 0) {
      this.pick[n++] = hover;
      this.hovered = players.ids[hover] as number;
    }
    n = this.nearest(players, own, hover, camera, n);
    // The own body's extent (its ring) and the lift of a label above a body, CSS pixels.
    const body = Math.max(BODY_RADIUS, 3 / camera.zoom) * camera.zoom * 1.4;
    this.lift = body + 2;
    this.takenCount = 0;
    for (let r = 0; r < this.coveredCount * 4; r++) this.taken[r] = this.covered[r] as number;
    this.takenCount = this.coveredCount;
    if (own >= 0) {
      const ox = camera.screenX(players.x[own] as number);
      const oy = camera.screenY(players.y[own] as number);
      this.rl = ox - body;
      this.rt = oy - body;
      this.rr = ox + body;
      this.rb = oy + body;
      this.take();
    }
    for (let k = 0; k < POOL; k++) {
      const label = this.labels[k] as Label;
      if (k >= n) {
        label.hide();
        continue;
      }
      const i = this.pick[k] as number;
      label.prepare(players.ids[i] as number, names);
      this.bx = camera.screenX(players.x[i] as number);
      this.by = camera.screenY(players.y[i] as number);
      if (!this.place(label)) {
        label.hide();
        continue;
      }
      label.show(players.ids[i] as number, names, k === 0 && own >= 0, Math.round(this.spotX), Math.round(this.spotY));
    }
  }

  /**
   * Finds the first free spot for `label` around the body at (bx, by), takes
   * it and returns true; false when none is free. Positions are fields, not
   * arguments, so the per-frame calls box no number.
   */
  private place(label: Label): boolean {
    for (let s = 0; s < SPOTS; s++) {
      this.spot(s, label.width, label.height);
      this.rl = this.spotX - label.width / 2;
      this.rt = this.spotY - label.height;
      this.rr = this.rl + label.width;
      this.rb = this.spotY;
      if (this.free()) {
        this.take();
        return true;
      }
    }
    return false;
  }

  /** Spot `s` for a `w` x `h` label of the body at (bx, by), as its bottom-centre in (spotX, spotY): above, below, right, left, higher, lower. */
  private spot(s: number, w: number, h: number): void {
    const { bx, by, lift } = this;
    switch (s) {
      case 0:
        this.spotX = bx;
        this.spotY = by - lift;
        return;
      case 1:
        this.spotX = bx;
        this.spotY = by + lift + h;
        return;
      case 2:
        this.spotX = bx + lift + w / 2 + GAP;
        this.spotY = by + h / 2;
        return;
      case 3:
        this.spotX = bx - lift - w / 2 - GAP;
        this.spotY = by + h / 2;
        return;
      case 4:
        this.spotX = bx;
        this.spotY = by - lift - h - GAP;
        return;
      default:
        this.spotX = bx;
        this.spotY = by + lift + 2 * h + GAP;
    }
  }

  /** Whether the rectangle (rl, rt, rr, rb) overlaps none taken this frame (GAP apart). */
  private free(): boolean {
    const t = this.taken;
    for (let r = 0; r < this.takenCount; r++) {
      const o = r * 4;
      if (this.rl < (t[o + 2] as number) + GAP && this.rr > (t[o] as number) - GAP && this.rt < (t[o + 3] as number) + GAP && this.rb > (t[o + 1] as number) - GAP) {
        return false;
      }
    }
    return true;
  }

  /** Takes the rectangle (rl, rt, rr, rb) for this frame. */
  private take(): void {
    const o = this.takenCount * 4;
    this.taken[o] = this.rl;
    this.taken[o + 1] = this.rt;
    this.taken[o + 2] = this.rr;
    this.taken[o + 3] = this.rb;
    this.takenCount++;
  }

  /** Whether player `i` is within the view radius of the local one (index `own`); always without area of interest or a local player. */
  private inView(players: DrawList, i: number, own: number, camera: Camera): boolean {
    const r = camera.radius;
    if (r <= 0 || own < 0) return true;
    const dx = (players.x[i] as number) - (players.x[own] as number);
    const dy = (players.y[i] as number) - (players.y[own] as number);
    return dx * dx + dy * dy <= r * r;
  }

  /** Index of the player (not the local one, index `own`) under the mouse, or -1. */
  private hoverIndex(players: DrawList, camera: Camera, own: number): number {
    if (!this.hasMouse) return -1;
    const wx = camera.worldX(this.mouseX);
    const wy = camera.worldY(this.mouseY);
    const reach = Math.max(BODY_RADIUS, 4 / camera.zoom) * 1.3;
    let best = -1;
    let bestD = reach * reach;
    for (let i = 0; i < players.count; i++) {
      if (i === own || !this.inView(players, i, own, camera)) continue;
      const dx = (players.x[i] as number) - wx;
      const dy = (players.y[i] as number) - wy;
      const d = dx * dx + dy * dy;
      if (d < bestD) {
        bestD = d;
        best = i;
      }
    }
    return best;
  }

  /** Appends the NEAREST on-screen players closest to the local player (or the view centre) to the pick list. */
  private nearest(players: DrawList, own: number, hover: number, camera: Camera, start: number): number {
    let m = 0;
    const halfW = camera.width / camera.zoom / 2;
    const halfH = camera.height / camera.zoom / 2;
    const fx = own >= 0 ? (players.x[own] as number) : camera.x;
    const fy = own >= 0 ? (players.y[own] as number) : camera.y;
    for (let i = 0; i < players.count; i++) {
      if (i === own || i === hover) continue;
      const px = players.x[i] as number;
      const py = players.y[i] as number;
      if (Math.abs(px - camera.x) > halfW || Math.abs(py - camera.y) > halfH) continue;
      if (!this.inView(players, i, own, camera)) continue;
      const d = (px - fx) * (px - fx) + (py - fy) * (py - fy);
      if (m === NEAREST && d >= (this.pickDist[m - 1] as number)) continue;
      // Insertion into the sorted top list.
      let j = m < NEAREST ? m++ : m - 1;
      while (j > 0 && (this.pickDist[j - 1] as number) > d) {
        this.pickDist[j] = this.pickDist[j - 1] as number;
        this.pick[start + j] = this.pick[start + j - 1] as number;
        j--;
      }
      this.pickDist[j] = d;
      this.pick[start + j] = i;
    }
    return start + m;
  }
}
