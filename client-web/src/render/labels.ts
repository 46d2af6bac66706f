// Player names, drawn the cheapest way that leaves the bodies in one draw
// call: a fixed pool of DOM labels over the canvas, for the local player, the
// few players nearest to it, and the one under the mouse.
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
/** Labels in the pool: the local player, the hovered one, the nearest. */
const POOL = NEAREST + 2;
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
    const lift = Math.max(BODY_RADIUS, 3 / camera.zoom) * camera.zoom * 1.4 + 2;
    for (let k = 0; k < POOL; k++) {
      const label = this.labels[k] as Label;
      if (k >= n) {
        label.hide();
        continue;
      }
      const i = this.pick[k] as number;
      const x = Math.round(camera.screenX(players.x[i] as number));
      const y = Math.round(camera.screenY(players.y[i] as number) - lift);
      label.show(players.ids[i] as number, names, k === 0 && own >= 0, x, y);
    }
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
      if (i === own) continue;
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
