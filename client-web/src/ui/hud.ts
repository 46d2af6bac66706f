// The HUD line: ping, the shard the player is on, players, interpolation
// delay, frame rate and CPU time per frame, refreshed at most four times a
// second; with area of interest also the players in view (the place's count
// then comes from PlaceStatus); and "catching up" while the page skips
// snapshots it could not keep up with. Its DOM
// is built once per layout: fixed text and one Text node per figure. A refresh
// compares each figure as shown (rounded) with the last one and rewrites only
// the nodes whose figure changed, with strings from NumberText caches, so the
// HUD allocates nothing per frame.

import { NumberText } from './number-text.js';

/** What the HUD shows; times are ms. */
export interface HudValues {
  pingMs: number;
  /** The shard the local player is on (0: none yet). */
  shard: number;
  /** Players in the place (NaN: not known yet). */
  players: number;
  /** With area of interest: players drawn (in view), the local one included. */
  inView: number;
  delayMs: number;
  fps: number;
  frameCpuMs: number;
  /** The page skipped snapshots lately to catch up (it fell behind the network). */
  catchingUp: boolean;
}

/** Least time between two refreshes, ms. */
export const HUD_REFRESH_MS = 250;
/** Key of a figure that is not a finite number (shown as a dash). */
const NONE = Number.MIN_SAFE_INTEGER;
const DASH = '–';
/** Shown after the figures while the page catches up. */
export const CATCHING_UP = ' · catching up';

const MS = new NumberText((k) => (k === NONE ? DASH : `${k} ms`));
const INT = new NumberText((k) => (k === NONE ? DASH : String(k)));
const HUNDREDTHS = new NumberText((k) => (k === NONE ? DASH : (k / 100).toFixed(2)));

/** One figure: its Text node and the key it shows now. */
class Figure {
  /** NaN until the first refresh, so that one always writes. */
  private shown = Number.NaN;

  constructor(
    readonly node: Text,
    private readonly texts: NumberText,
  ) {}

  /** Shows `key` (an integer, or NONE), touching the DOM only if it changed. */
  set(key: number): void {
    if (key === this.shown) return;
    this.shown = key;
    this.node.data = this.texts.text(key);
  }
}

/** Integer key of `v` scaled by `scale`, or NONE. */
function key(v: number, scale = 1): number {
  return Number.isFinite(v) ? Math.round(v * scale) : NONE;
}

/**
 * The heads-up display: "ping 12 ms · shard 1 · players 6 · delay 100 ms ·
 * 60 fps · cpu 0.42 ms", with area of interest "ping 12 ms · shard 1 ·
 * players 1234 · in view 17 · delay ...", and " · catching up" at the end
 * while the page skips snapshots.
 */
export class Hud {
  private at = Number.NEGATIVE_INFINITY;
  private readonly ping: Figure;
  private readonly shard: Figure;
  private readonly players: Figure;
  private readonly inView: Figure;
  private readonly delay: Figure;
  private readonly fps: Figure;
  private readonly cpu: Figure;
  private aoi = false;
  private readonly behind: Text;
  private behindShown = false;

  constructor(private readonly el: HTMLElement) {
    const doc = el.ownerDocument;
    const figure = (texts: NumberText): Figure => new Figure(doc.createTextNode(''), texts);
    this.ping = figure(MS);
    this.shard = figure(INT);
    this.players = figure(INT);
    this.inView = figure(INT);
    this.delay = figure(MS);
    this.fps = figure(INT);
    this.cpu = figure(HUNDREDTHS);
    this.behind = doc.createTextNode('');
    this.layout();
  }

  /** Shows the players in view too (area of interest) or not; rebuilds the line only when this changes. */
  setAreaOfInterest(on: boolean): void {
    if (on === this.aoi) return;
    this.aoi = on;
    this.layout();
  }

  private layout(): void {
    const text = (s: string): Text => this.el.ownerDocument.createTextNode(s);
    const view = this.aoi ? [text(' · in view '), this.inView.node] : [];
    this.el.replaceChildren(
      text('ping '),
      this.ping.node,
      text(' · shard '),
      this.shard.node,
      text(' · players '),
      this.players.node,
      ...view,
      text(' · delay '),
      this.delay.node,
      text(' · '),
      this.fps.node,
      text(' fps · cpu '),
      this.cpu.node,
      text(' ms'),
      this.behind,
    );
  }

  /**
   * Whether a refresh is due at `nowMs` (HUD_REFRESH_MS after the last one).
   * When it says true it counts as the refresh time: call [`show`] then.
   */
  due(nowMs: number): boolean {
    if (nowMs - this.at < HUD_REFRESH_MS) return false;
    this.at = nowMs;
    return true;
  }

  /** Shows `v`, rewriting only the figures that changed as shown. */
  show(v: HudValues): void {
    this.ping.set(key(v.pingMs));
    this.shard.set(v.shard > 0 ? key(v.shard) : NONE);
    this.players.set(key(v.players));
    if (this.aoi) this.inView.set(key(v.inView));
    this.delay.set(key(v.delayMs));
    this.fps.set(key(v.fps));
    this.cpu.set(key(v.frameCpuMs, 100));
    if (v.catchingUp !== this.behindShown) {
      this.behindShown = v.catchingUp;
      this.behind.data = v.catchingUp ? CATCHING_UP : '';
    }
  }
}
