// Player names, drawn the cheapest way that leaves the bodies in one draw
// call: a fixed pool of DOM labels over the canvas, for the local player, the
// few players nearest to it, and the one under the mouse. Each frame moves the
// labels with a transform and sets text only when a label changes player; the
// text is set with textContent, never parsed as HTML.

import { BODY_RADIUS, type DrawList } from './renderer.js';
import type { Camera } from './camera.js';

/** Names shown besides the local player's and the hovered one. */
const NEAREST = 6;

/** The pool of name labels over the canvas. */
export class NameLabels {
  private readonly els: HTMLElement[] = [];
  private readonly shownId: number[] = [];
  private readonly shownText: string[] = [];
  private readonly pick = new Int32Array(NEAREST + 2);
  private readonly pickDist = new Float64Array(NEAREST);
  private mouse: [number, number] | null = null;
  /** Id of the player under the mouse, or -1. */
  hovered = -1;

  constructor(container: HTMLElement) {
    const doc = container.ownerDocument;
    for (let i = 0; i < NEAREST + 2; i++) {
      const el = doc.createElement('div');
      el.className = 'label';
      el.hidden = true;
      container.append(el);
      this.els.push(el);
      this.shownId.push(-1);
      this.shownText.push('');
    }
  }

  /** The mouse is at CSS pixel (x, y) of the canvas, or gone (null). */
  setMouse(pos: [number, number] | null): void {
    this.mouse = pos;
  }

  /** Places the labels for this frame; `name` gives a player's display name. */
  update(players: DrawList, ownId: number, camera: Camera, name: (id: number) => string | undefined): void {
    let n = 0;
    const own = this.indexOf(players, ownId);
    if (own >= 0) this.pick[n++] = own;
    this.hovered = -1;
    const hover = this.hoverIndex(players, camera, ownId);
    if (hover >= 0) {
      this.pick[n++] = hover;
      this.hovered = players.ids[hover] as number;
    }
    n = this.nearest(players, own, hover, camera, n);
    for (let k = 0; k < this.els.length; k++) {
      if (k < n) this.show(k, players, this.pick[k] as number, camera, name, k === 0 && own >= 0);
      else this.hide(k);
    }
  }

  private indexOf(players: DrawList, id: number): number {
    for (let i = 0; i < players.count; i++) if (players.ids[i] === id) return i;
    return -1;
  }

  private hoverIndex(players: DrawList, camera: Camera, ownId: number): number {
    if (!this.mouse) return -1;
    const [wx, wy] = camera.screenToWorld(this.mouse[0], this.mouse[1]);
    const reach = Math.max(BODY_RADIUS, 4 / camera.zoom) * 1.3;
    let best = -1;
    let bestD = reach * reach;
    for (let i = 0; i < players.count; i++) {
      if (players.ids[i] === ownId) continue;
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

  private show(k: number, players: DrawList, i: number, camera: Camera, name: (id: number) => string | undefined, own: boolean): void {
    const el = this.els[k] as HTMLElement;
    const id = players.ids[i] as number;
    const text = name(id) ?? `#${id}`;
    if (this.shownId[k] !== id || this.shownText[k] !== text) {
      el.textContent = text;
      el.classList.toggle('own', own);
      this.shownId[k] = id;
      this.shownText[k] = text;
    }
    const [sx, sy] = camera.worldToScreen(players.x[i] as number, players.y[i] as number);
    const lift = Math.max(BODY_RADIUS, 3 / camera.zoom) * camera.zoom * 1.4 + 2;
    el.style.transform = `translate(${sx.toFixed(1)}px, ${(sy - lift).toFixed(1)}px) translate(-50%, -100%)`;
    if (el.hidden) el.hidden = false;
  }

  private hide(k: number): void {
    const el = this.els[k] as HTMLElement;
    if (!el.hidden) el.hidden = true;
    this.shownId[k] = -1;
  }
}
