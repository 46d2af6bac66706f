// The HUD line: ping, the shard the player is on (8 hex digits, as the
// server's logs and the admin console write it), players, interpolation
// delay, frame rate and CPU time per frame, the transport in use
// (WebTransport or WebSocket, and why not WebTransport), refreshed at most four times a
// second; with area of interest also the players within the view radius (the
// place's count then comes from PlaceStatus); "catching up" while the page
// skips snapshots it could not keep up with. While the connection is not live
// the figures that come from the server show a dash and the line ends with
// "disconnected", so nothing stale is shown as if current. Its DOM
// is built once per layout: fixed text and one Text node per figure. A refresh
// compares each figure as shown (rounded) with the last one and rewrites only
// the nodes whose figure changed, with strings from NumberText caches, so the
// HUD allocates nothing per frame.

import { formatShardId } from '../net/shard-id.js';
import { NumberText } from './number-text.js';

/** What the HUD shows; times are ms. */
export interface HudValues {
  pingMs: number;
  /** The shard the local player is on (0: none yet). */
  shard: number;
  /** Players in the place (NaN: not known yet). */
  players: number;
  /** With area of interest: players within the view radius of the local one, the local one included. */
  inView: number;
  delayMs: number;
  fps: number;
  frameCpuMs: number;
  /** The page skipped snapshots lately to catch up (it fell behind the network). */
  catchingUp: boolean;
  /** The connection is live (welcomed): otherwise ping, shard, players, in view and delay are not current. */
  live: boolean;
  /**
   * The transport in use as the page says it ("WebTransport", "WebSocket",
   * "WebSocket (WebTransport refused)": net/transport.ts, `transportText`),
   * shown while live; '' for none. Compared as a string: give the same
   * string each refresh, made once per connect.
   */
  transport: string;
}

/** Least time between two refreshes, ms. */
export const HUD_REFRESH_MS = 250;
/** Key of a figure that is not a finite number (shown as a dash). */
const NONE = Number.MIN_SAFE_INTEGER;
const DASH = '–';
/** Shown after the figures while the page catches up. */
export const CATCHING_UP = ' · catching up';
/** Shown after the figures while the connection is not live. */
export const DISCONNECTED = ' · disconnected';

const MS = new NumberText((k) => (k === NONE ? DASH : `${k} ms`));
const INT = new NumberText((k) => (k === NONE ? DASH : String(k)));
const HUNDREDTHS = new NumberText((k) => (k === NONE ? DASH : (k / 100).toFixed(2)));
const SHARD = new NumberText((k) => (k === NONE ? DASH : formatShardId(k)), 64);

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
 * The heads-up display: "ping 12 ms · shard 0000002a · players 6 · delay
 * 100 ms · 60 fps · cpu 0.42 ms · WebTransport", with area of interest "ping
 * 12 ms · shard 0000002a · players 1234 · in view 17 · delay ...", and at the end
 * " · disconnected" while not live, else " · catching up" while the page
 * skips snapshots. Each " · " part is a span of its own, so a narrow screen
 * wraps the line between figures, never inside one.
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
  private readonly state: Text;
  private stateShown = '';
  private readonly transport: Text;
  private transportShown = '';

  constructor(private readonly el: HTMLElement) {
    const doc = el.ownerDocument;
    const figure = (texts: NumberText): Figure => new Figure(doc.createTextNode(''), texts);
    this.ping = figure(MS);
    this.shard = figure(SHARD);
    this.players = figure(INT);
    this.inView = figure(INT);
    this.delay = figure(MS);
    this.fps = figure(INT);
    this.cpu = figure(HUNDREDTHS);
    this.state = doc.createTextNode('');
    this.transport = doc.createTextNode('');
    this.layout();
  }

  /** Shows the players in view too (area of interest) or not; rebuilds the line only when this changes. */
  setAreaOfInterest(on: boolean): void {
    if (on === this.aoi) return;
    this.aoi = on;
    this.layout();
  }

  private layout(): void {
    const doc = this.el.ownerDocument;
    const text = (s: string): Text => doc.createTextNode(s);
    const part = (...nodes: Text[]): HTMLElement => {
      const span = doc.createElement('span');
      span.append(...nodes);
      return span;
    };
    const view = this.aoi ? [part(text(' · in view '), this.inView.node)] : [];
    this.el.replaceChildren(
      part(text('ping '), this.ping.node),
      part(text(' · shard '), this.shard.node),
      part(text(' · players '), this.players.node),
      ...view,
      part(text(' · delay '), this.delay.node),
      part(text(' · '), this.fps.node, text(' fps')),
      part(text(' · cpu '), this.cpu.node, text(' ms')),
      part(this.transport),
      part(this.state),
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
    const live = v.live;
    this.ping.set(live ? key(v.pingMs) : NONE);
    this.shard.set(live && v.shard > 0 ? v.shard : NONE);
    this.players.set(live ? key(v.players) : NONE);
    if (this.aoi) this.inView.set(live ? key(v.inView) : NONE);
    this.delay.set(live ? key(v.delayMs) : NONE);
    this.fps.set(key(v.fps));
    this.cpu.set(key(v.frameCpuMs, 100));
    const transport = live ? v.transport : '';
    if (transport !== this.transportShown) {
      this.transportShown = transport;
      this.transport.data = transport ? ` · ${transport}` : '';
    }
    const state = !live ? DISCONNECTED : v.catchingUp ? CATCHING_UP : '';
    if (state !== this.stateShown) {
      this.stateShown = state;
      this.state.data = state;
    }
  }
}
