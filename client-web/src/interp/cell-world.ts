// The interpolated place: the cells the page holds in, the players in view
// out, once a frame, in one set of columns for the one instanced draw. With
// area of interest the cells are the grid's near the player; without it each
// shard is one cell: one mechanism.
//
// Each cell a view frame changed (net/inbox hands it over as held after the
// frame) feeds the tracks of the players it lists (interp/player-tracks: a
// short ring of positions per player in server time: its tick's time,
// unwrapped against the Welcome's, interp/server-time) and is compared with
// the previous state taken of its (shard, cell) (interp/cell-listings): a
// held cell is complete, so a player it listed before and not now has left
// the cell. A cell that is forgotten (it left the view) or reset (its shard
// resynced or left), and every cell at a new socket's Welcome (which holds
// nothing), is left by all its players. Whether a player that left entered
// another cell, another shard or left the place shows in the next frames: it
// is hidden only when it has been in no held cell for a few of its own update
// intervals (interp/view-grace), so a border crossing, whose two cells come in
// one tick or a few, never blinks, and forgotten after the view grace. A
// player whose cell still holds it stays, however long nothing is new (a
// reconnect, a frozen tab, or just a still place: a still cell is sent
// nothing, its players stand where they were held); the graces run on local
// time from when the frame that left the cell arrived (a still place sends
// no frame after it).
//
// A delta says its players that stayed were held unchanged until its span
// before its tick; one whose newest sample is older (it stood) gets that
// sample again there, so a player that starts walking walks from then, not
// across the whole time it stood.
//
// A player is drawn at its shard's render time (interp/shard-clocks: about
// 100 ms behind the newest tick), further back by its extra delay when it is
// updated less often than every tick, so it stays between two samples; one
// who enters view is drawn from the next frame, at its first position. When a
// walking player's sample is late it waits at its newest (never drawn past
// it: the next sample may show a stop, a turn or a stalled server), its delay
// stretched, and goes on from there (then catches up at the slew rate), so a
// late frame costs a pause, never a jump; a standing one simply stands, and
// when it sets off it walks from where it is drawn (`started`).

import type { Bounds, CellState, PlayerColumns, WelcomeMsg } from '../net/protocol.js';
import { CellListings, FORGETS_KEPT_MS, type CellListing } from './cell-listings.js';
import { DEFAULT_CLOCK, type ClockOptions } from './clock.js';
import { DRAWN, HIDDEN, PlayerTracks } from './player-tracks.js';
import { ServerTimeline } from './server-time.js';
import { ShardClocks } from './shard-clocks.js';
import { EXTRA_DELAY_SLEW, MAX_EXTRA_DELAY_MS, extraDelayMs, forgetAfterMs, hideAfterMs } from './view-grace.js';
import { MergedPlayers } from './world.js';

/** Told about each player when it enters view (is first listed), e.g. to ask for its name. */
export interface ViewListener {
  entered(id: number): void;
  /**
   * The own player ([`CellWorld.ownId`]) is listed by a frame taken: its
   * shard, the frame's tick (low 32 bits), its position (world units), its
   * flags as on the wire, and the frame's arrival (local ms).
   */
  own?(shardId: number, tick: number, x: number, y: number, flags: number, arrivalMs: number): void;
}

/** Largest gap between two updates of a player counted into its interval, ticks. */
const MAX_INTERVAL_TICKS = 64;
/** Weight of a new gap in a player's interval estimate. */
const INTERVAL_WEIGHT = 0.5;
/** Most a frame's time step counts for slewing, ms (a long gap moves nothing further). */
const MAX_FRAME_STEP_MS = 250;
/** Clocks of shards silent and no longer held are forgotten, checked this often, ms. */
const PURGE_EVERY_MS = 5000;

/** The players in view, interpolated; see the module comment. */
export class CellWorld {
  /** The players drawn this frame; [0, count) valid, found by id in O(1). */
  readonly players = new MergedPlayers();
  /** Every tracked player (drawn, new or hidden). */
  readonly tracks = new PlayerTracks();
  readonly clocks: ShardClocks;
  /** Bumped whenever the set of drawn players changes (someone entered, left or was hidden). */
  viewVersion = 0;
  /** Cells taken (one a cell a view frame changed), and refused as older than or the same as one already taken, or as forgotten since. */
  cellFrames = 0;
  staleFrames = 0;
  /** The own player's id (0: none yet): its entries go to the listener's `own` too. */
  ownId = 0;
  /** Tick interval, ms; walking speed, world units/s; view grace, ms (from the Welcome). */
  tickMs = 50;
  speed = 120;
  graceMs = 900;
  private bounds: Bounds | null = null;
  private readonly listings = new CellListings();
  private readonly scratch: PlayerColumns = {
    ids: new Uint32Array(64),
    x: new Float32Array(64),
    y: new Float32Array(64),
    heading: new Float32Array(64),
    flags: new Uint8Array(64),
  };
  /**
   * Frame times, unwrapped against the Welcome's server time. Every server
   * time kept here is ms since its base (the first Welcome's): whole numbers
   * that stay small integers, which JavaScript engines never box.
   */
  readonly timeline = new ServerTimeline();

  private lastUpdateMs = Number.NaN;
  private purgedAt = Number.NEGATIVE_INFINITY;
  /** The current update's step for slewing, ms. */
  private stepMs = 0;
  /**
   * The cell being taken: its frame's tick's scheduled server time (ms from the
   * timeline's base; see interp/shard-clocks) and its arrival (local ms).
   * Fields rather than arguments, so the per-player calls pass no fractional
   * number (none is boxed).
   */
  private frameMs = 0;
  private frameArrivalMs = 0;
  /** The delta's base: until this server time (ms from the timeline's base) its players stood as held; NaN: unknown. */
  private baseMs = Number.NaN;
  /** The shard (a u32, often past the small integers: a field, never an argument) and cell being taken. */
  private frameShard = 0;
  private frameCell = 0;

  constructor(
    private readonly listener?: ViewListener,
    clock: ClockOptions = DEFAULT_CLOCK,
  ) {
    this.clocks = new ShardClocks(clock);
  }

  /**
   * Takes a Welcome that arrived at local `arrivalMs`: the world's bounds
   * (cells are quantized over them), the tick rate, the speed, the grace, and
   * the server time ticks are unwrapped against. A Welcome from a different
   * world starts the view over; otherwise (a reconnect) the last view stays,
   * but the new socket holds nothing: every cell is left by its players until
   * the new socket's frames list them again (see the module comment).
   */
  welcome(w: WelcomeMsg, arrivalMs: number): void {
    const b = this.bounds;
    if (b && (b.minX !== w.bounds.minX || b.minY !== w.bounds.minY || b.maxX !== w.bounds.maxX || b.maxY !== w.bounds.maxY)) this.clear();
    this.bounds = w.bounds;
    this.tickMs = 1000 / Math.max(1, w.tickHz);
    this.speed = w.speed;
    this.graceMs = w.viewGraceMs;
    this.timeline.anchor(w.serverTimeMs, w.tickHz);
    this.arrived(arrivalMs);
    this.listings.dropAll(this.leftAll);
  }

  /** Forgets every player, listing and clock. */
  clear(): void {
    while (this.tracks.count) this.tracks.remove(this.tracks.count - 1);
    this.listings.dropAll(() => undefined);
    this.clocks.purge(Number.POSITIVE_INFINITY);
    this.timeline.reset();
    this.viewVersion++;
  }

  /**
   * Takes a cell a view frame changed, as held after it, that arrived at
   * local time `arrivalMs`; `span` ticks: its players that stayed were held
   * unchanged until `span` ticks before its tick (0: unknown). A state older
   * than, or the same as, one already taken for its (shard, cell) is
   * dropped, as is one older than a forget of its cell; so is any before the first Welcome (nothing to unwrap its time
   * against, no bounds).
   */
  onCell(msg: CellState, span: number, arrivalMs: number): void {
    if (!this.bounds || !this.timeline.anchored) {
      this.staleFrames++;
      return;
    }
    const t = this.timeline.relative(msg);
    if (this.listings.outdated(msg.shard, msg.cell, t)) {
      this.staleFrames++;
      return;
    }
    const listing = this.listings.of(msg.shard, msg.cell);
    if (!listing.isNewer(msg, t)) {
      this.staleFrames++;
      return;
    }
    this.cellFrames++;
    const clock = this.clocks.observe(msg, t, arrivalMs, this.tickMs);
    const n = msg.playerCount;
    this.reserve(n);
    msg.readPlayers(this.scratch, this.bounds);
    this.frameMs = clock.frameMs;
    this.frameArrivalMs = arrivalMs;
    this.baseMs = span > 0 ? clock.frameMs - span * this.tickMs : Number.NaN;
    this.frameShard = msg.shard;
    this.frameCell = msg.cell;
    for (let i = 0; i < n; i++) this.listed(i);
    this.ownListed(msg, n, arrivalMs);
    this.leavers(listing);
    listing.record(msg, t, arrivalMs, this.scratch.ids, n);
    this.arrived(arrivalMs);
  }

  /**
   * The cell (`shard`, `cell`) left the view: a frame of tick `tick` (low 32
   * bits) that arrived at local `arrivalMs` forgot it. Its players left it,
   * and a state of it older than the forget is refused from now on (over
   * WebTransport one may come after it: see interp/cell-listings).
   */
  onForget(shard: number, cell: number, tick: number, arrivalMs: number): void {
    this.frameArrivalMs = arrivalMs;
    const t = this.timeline.anchored ? this.timeline.relative({ tick }) : Number.NEGATIVE_INFINITY;
    this.listings.drop(shard, cell, t, arrivalMs, this.leftAll);
    this.arrived(arrivalMs);
  }

  /** Every cell of `shard` was dropped (a resync, or the shard left): their players left them. */
  onReset(shard: number, arrivalMs: number): void {
    this.frameArrivalMs = arrivalMs;
    this.listings.dropShard(shard, this.leftAll);
    this.arrived(arrivalMs);
  }

  /** Marks every player a dropped cell listed, still in it, as having left it at the frame's arrival. Made once. */
  private readonly leftAll = (listing: CellListing): void => {
    const tr = this.tracks;
    for (let k = 0; k < listing.count; k++) {
      const slot = tr.slotOf(listing.ids[k] as number);
      if (slot < 0 || tr.cell[slot] !== listing.cell || tr.shard[slot] !== listing.shard) continue;
      if (Number.isNaN(tr.leftAt[slot])) tr.leftAt[slot] = this.frameArrivalMs;
    }
  };

  /** A frame arrived at local `arrivalMs`: the periodic purge. */
  private arrived(arrivalMs: number): void {
    if (arrivalMs - this.purgedAt > PURGE_EVERY_MS) this.purge(arrivalMs);
  }

  /** Tells the listener about the own player's entry among the `n` of the cell being taken, if it has one. */
  private ownListed(msg: CellState, n: number, arrivalMs: number): void {
    const listener = this.listener;
    if (!listener?.own || !this.ownId) return;
    const s = this.scratch;
    for (let i = 0; i < n; i++) {
      if (s.ids[i] !== this.ownId) continue;
      listener.own(msg.shard, msg.tick, s.x[i] as number, s.y[i] as number, s.flags[i] as number, arrivalMs);
      return;
    }
  }

  /** Player i of the scratch columns is listed by the cell being taken. */
  private listed(i: number): void {
    const shard = this.frameShard;
    const cell = this.frameCell;
    const tr = this.tracks;
    const t = this.frameMs;
    const s = this.scratch;
    const id = s.ids[i] as number;
    let slot = tr.slotOf(id);
    if (slot < 0) {
      slot = tr.add(id, this.tickMs);
      this.listener?.entered(id);
    } else {
      // A listing older than one taken (a datagram overtaken on the path):
      // nothing in it is news, and its cell is not where the player is.
      if (t < (tr.seenMs[slot] as number)) return;
      // Back after being hidden: it starts over where it is now.
      if (tr.hidden[slot] === HIDDEN) tr.clearSamples(slot);
      if (tr.shard[slot] !== shard) this.changedShard(slot);
      // It stayed in the cell: it stood where it was held until the delta's base.
      else if (tr.cell[slot] === cell && this.baseMs === this.baseMs && tr.newestMs(slot) < this.baseMs) tr.repeatNewest(slot, this.baseMs);
    }
    const gap = t - tr.newestMs(slot);
    this.started(slot, t, s.x[i] as number, s.y[i] as number);
    if (tr.push(slot, t, s.x[i] as number, s.y[i] as number, s.heading[i] as number, s.flags[i] as number)) this.measure(slot, gap);
    tr.shard[slot] = shard;
    tr.cell[slot] = cell;
    tr.seenMs[slot] = t;
    tr.seenAt[slot] = this.frameArrivalMs;
    tr.leftAt[slot] = Number.NaN;
  }

  /**
   * The player of `slot` is now listed by `shard` (it resumed there). Its next
   * draw takes up the difference between the two shards' render times (see
   * [`rebase`]). Another shard's clock may run a little behind: samples not
   * newer than the old shard's start a new timeline.
   */
  private changedShard(slot: number): void {
    const tr = this.tracks;
    if (Number.isNaN(tr.previousShard[slot])) tr.previousShard[slot] = tr.shard[slot] as number;
    if (this.frameMs <= tr.newestMs(slot)) tr.clearSamples(slot);
  }

  /**
   * Moves the player of `slot`, which changed shards, onto its new shard's
   * clock at the render time it had on the old one: its extra delay takes up
   * the difference (and closes it at the slew rate), so it does not jump.
   * Runs at draw time, when both clocks have been advanced to the same now.
   */
  private rebase(slot: number): void {
    const tr = this.tracks;
    const from = this.clocks.of(tr.previousShard[slot] as number);
    const to = this.clocks.of(tr.shard[slot] as number);
    tr.previousShard[slot] = Number.NaN;
    if (!from?.clock.ready || !to?.clock.ready) return;
    const extra = (tr.extra[slot] as number) + to.clock.renderMs - from.clock.renderMs;
    tr.extra[slot] = Math.max(-MAX_EXTRA_DELAY_MS, Math.min(MAX_EXTRA_DELAY_MS, extra));
  }

  /** Folds a gap of `gap` ms between two updates of `slot` into its interval. */
  private measure(slot: number, gap: number): void {
    const tr = this.tracks;
    if (tr.samples(slot) < 2 || !(gap > 0) || gap > MAX_INTERVAL_TICKS * this.tickMs) return;
    const old = tr.interval[slot] as number;
    tr.interval[slot] = tr.samples(slot) === 2 ? gap : old + (gap - old) * INTERVAL_WEIGHT;
  }

  /**
   * A player whose newest sample stands moved by its next one, at server
   * time `t` (ms), to (`x`, `y`): it set off at the latest when a walk at
   * [`speed`] still gets it there, and stood until then (that sample again,
   * when it is later than the newest). If it was drawn standing later than
   * that (a frame whose base is older than the render time: its first step
   * came from another cell, or a slow tier), its extra delay stretches by
   * the difference, so it walks on from where it is drawn instead of jumping
   * ahead; the delay slews back as for a late frame. A move longer than
   * a walk since the newest is a teleport and is left to [`PlayerTracks.emit`].
   */
  private started(slot: number, t: number, x: number, y: number): void {
    const tr = this.tracks;
    if (tr.samples(slot) === 0 || tr.newestMoving(slot) || !(this.speed > 0)) return;
    const tn = tr.newestMs(slot);
    if (!(tn < t)) return;
    const walkMs = (Math.hypot(x - tr.newestX(slot), y - tr.newestY(slot)) / this.speed) * 1000;
    if (walkMs === 0 || walkMs > t - tn + this.tickMs) return;
    // Server times are whole ms.
    const from = Math.max(tn, Math.floor(t - walkMs));
    if (from > tn) tr.repeatNewest(slot, from);
    const drawnMs = tr.drawnMs[slot] as number;
    if (tr.hidden[slot] === DRAWN && drawnMs > from) {
      tr.extra[slot] = Math.min(MAX_EXTRA_DELAY_MS, (tr.extra[slot] as number) + drawnMs - from);
    }
  }

  /** Marks the players the previous state of the cell being taken listed, and this one does not, as having left it. */
  private leavers(previous: CellListing): void {
    const shard = this.frameShard;
    const cell = this.frameCell;
    const tr = this.tracks;
    const t = this.frameMs;
    for (let k = 0; k < previous.count; k++) {
      const slot = tr.slotOf(previous.ids[k] as number);
      if (slot < 0 || tr.shard[slot] !== shard || tr.cell[slot] !== cell) continue;
      if ((tr.seenMs[slot] as number) < t && Number.isNaN(tr.leftAt[slot])) tr.leftAt[slot] = this.frameArrivalMs;
    }
  }

  /**
   * Interpolates every player in view at local time `nowMs` into
   * [`players`], hiding and forgetting as the graces say. Hot path: allocates
   * nothing.
   */
  update(nowMs: number): void {
    this.clocks.advance(nowMs);
    const step = nowMs - this.lastUpdateMs;
    this.stepMs = step > 0 ? Math.min(step, MAX_FRAME_STEP_MS) : 0;
    this.lastUpdateMs = nowMs;
    this.players.begin();
    const tr = this.tracks;
    tr.tickMs = this.tickMs;
    tr.speed = this.speed;
    const now = nowMs;
    for (let slot = tr.count - 1; slot >= 0; slot--) {
      const left = tr.leftAt[slot] as number;
      if (left === left) {
        const interval = tr.interval[slot] as number;
        if (now - left > forgetAfterMs(interval, this.tickMs, this.graceMs)) {
          if (tr.hidden[slot] === DRAWN) this.viewVersion++;
          tr.remove(slot); // the last slot, already done this frame, moves here
          continue;
        }
        if (now - left > hideAfterMs(interval, this.tickMs, this.graceMs)) {
          if (tr.hidden[slot] === DRAWN) this.viewVersion++;
          tr.hidden[slot] = HIDDEN;
          continue;
        }
      }
      this.draw(slot);
    }
  }

  /** Draws the player of `slot` at its render time. */
  private draw(slot: number): void {
    const tr = this.tracks;
    const target = extraDelayMs(tr.interval[slot] as number, this.tickMs);
    if (tr.previousShard[slot] === tr.previousShard[slot]) this.rebase(slot);
    let extra = tr.extra[slot] as number;
    if (tr.hidden[slot] !== DRAWN) {
      extra = target;
    } else if (tr.samples(slot) < 3) {
      // Its interval is not measured yet: the target as it is, but never
      // less than a stretch `started` made (that would jump it ahead).
      extra = Math.max(target, extra);
    } else {
      const most = EXTRA_DELAY_SLEW * this.stepMs;
      extra += Math.max(-most, Math.min(most, target - extra));
    }
    const c = this.clocks.of(tr.shard[slot] as number);
    let t = Number.NaN;
    if (c?.clock.ready) {
      t = c.clock.renderMs - extra;
      // Its next sample is late: it waits at its newest with its delay
      // stretched, so it goes on from there when the sample comes rather
      // than jumping ahead to where the render time has got to. (A standing
      // player's next sample is not late: a still cell sends nothing.)
      const most = tr.newestMs(slot);
      if (t > most && extra < MAX_EXTRA_DELAY_MS && tr.newestMoving(slot)) {
        extra = Math.min(MAX_EXTRA_DELAY_MS, extra + t - most);
        t = c.clock.renderMs - extra;
      }
    }
    tr.extra[slot] = extra;
    tr.drawnMs[slot] = t;
    tr.drawMs = t;
    tr.emit(slot, this.players);
    if (tr.hidden[slot] !== DRAWN) {
      tr.hidden[slot] = DRAWN;
      this.viewVersion++;
    }
  }

  /** Interpolation delay of `shardId`'s clock, or the largest of all when it has none; ms (NaN when none). */
  delayMs(shardId: number): number {
    const own = this.clocks.of(shardId);
    if (own?.clock.ready) return own.clock.delayMs;
    let d = Number.NaN;
    for (const c of this.clocks.list) if (c.clock.ready) d = Number.isNaN(d) ? c.clock.delayMs : Math.max(d, c.clock.delayMs);
    return d;
  }

  /** Render-time jumps of every shard's clock so far. */
  snaps(): number {
    let n = 0;
    for (const c of this.clocks.list) n += c.clock.snaps;
    return n;
  }

  /** Players tracked but not drawn in the last frame (new, or hidden after leaving). */
  get hiddenCount(): number {
    return this.tracks.count - this.players.count;
  }

  private reserve(n: number): void {
    const s = this.scratch;
    if (n <= s.ids.length) return;
    let cap = s.ids.length;
    while (cap < n) cap *= 2;
    s.ids = new Uint32Array(cap);
    s.x = new Float32Array(cap);
    s.y = new Float32Array(cap);
    s.heading = new Float32Array(cap);
    s.flags = new Uint8Array(cap);
  }

  private purge(nowMs: number): void {
    this.purgedAt = nowMs;
    this.clocks.purge(nowMs, this.holdsShard);
    this.listings.pruneForgets(nowMs - FORGETS_KEPT_MS);
  }

  /** Whether a cell of the shard is listed (its clock is kept). Made once. */
  private readonly holdsShard = (shard: number): boolean => this.listings.hasShard(shard);
}
