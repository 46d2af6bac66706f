// View frames waiting to be applied and taken, so that a page that falls
// behind the network catches up instead of showing the world seconds late.
//
// Every frame must be applied to what the page holds (net/held.ts), in order:
// a delta needs the state before it. Applying is cheap; taking a changed cell
// (copying its players into the interpolation) is what costs at thousands of
// players. So frames are offered here as they arrive (with their arrival
// time), and applied and taken once per animation frame, before the world is
// drawn. A page that keeps up finds the frames of the last frame interval
// waiting and takes every cell they changed, in order. A page that fell
// behind finds a backlog: a cell a frame changed at a tick more than
// BACKLOG_MS older than the newest tick of its shard waiting is applied but
// not taken then; it is taken once, as it is held by then, before its shard's
// first frame that is not a backlog (or at the end), so what a skipped frame
// said is never lost (a cell that went still is not changed again), only
// the steps between. (Server time, not arrival: a backlog the browser held
// arrives all at once.) Forgets and resets are always taken. So that a page
// that draws no frames (a hidden tab) stays bounded, a full inbox is applied
// at once. A frame that does not apply breaks the chain: the rest are
// dropped, and so is every frame until the next Welcome (a new socket, which
// holds nothing). Chat, presence, pongs and the rest never wait here.
//
// A Welcome that granted datagram deltas (WebTransport) makes the page hold
// frames by the lossy rule (net/held.ts): a datagram lost or late costs its
// cells' changes until the next that applies, not the chain. A frame with a
// cell whose change was missed (an update 'broken': the cell stays as it
// was) has the page ask for a resync (a Resync message: the server sends
// each cell of the view whole at its next due step, on the same session).
// Cells found missed for a round trip and RESYNC_MARGIN_TICKS more after
// it was asked (on the page's clock: frames are applied at the animation
// frame, and a hidden tab's backlog is applied at once) are the frames the
// server sent before it took the resync, mended by it; a cell found missed
// later is a delta sent after its whole form, which was lost too: the page
// asks again at once (waiting a fixed 500 ms, as first built, drew a walker
// still for 550 ms now and then behind a link losing 2 %: e2e/lossy).

import { CellGrid } from './grid.js';
import { Held, type HeldCell, type HeldError, type Update } from './held.js';
import type { ViewMsg, WelcomeMsg } from './messages.js';
import { Motion } from './motion.js';
import { DATAGRAM_DELTAS } from './protocol.js';
import { Stencil } from './stencil.js';
import { ViewCursor } from './view.js';

/** What the inbox tells the page, in the order the frames said it. */
export interface FrameTaker {
  /**
   * A cell a frame changed, as held after that frame, arrived at local
   * `arrivalMs`; `span` ticks: its players that stayed were held unchanged
   * until `span` ticks before the cell's tick (0: unknown, a full form or a
   * skipped backlog).
   */
  cell(cell: HeldCell, span: number, arrivalMs: number): void;
  /** The cell left the view (its section's tick, low 32 bits). */
  forgot(shard: number, cell: number, tick: number, arrivalMs: number): void;
  /** Every cell of the shard was dropped (a resync, or the shard left); `tick` is the reset section's, 0 on the wire (a reset has none). */
  reset(shard: number, tick: number, arrivalMs: number): void;
  /** A frame did not apply: the page must resync (a new socket); nothing more is taken until a Welcome. */
  broken(error: HeldError): void;
  /** A lossy page missed a change of a cell: it asks for its view whole (a Resync message) now. */
  resync(): void;
}

/** How long after the last skip the page still says it is catching up, ms. */
export const CATCHING_UP_MS = 1000;
/**
 * A cell changed this much earlier (server time, ms) than the newest tick of
 * its shard waiting is a backlog: four ticks at 20 Hz, so a page drawing 5
 * frames a second or more skips nothing.
 */
export const BACKLOG_MS = 200;
/** Frames waiting at most: more are applied at once (a page drawing no frames). */
export const INBOX_CAP = 1024;
/**
 * Most players a cell may hold: more is a broken frame. A frame is at most
 * Limit.MaxServerMessageBytes (1,100,000) and a player takes at least 7
 * bytes of a full form, so no honest cell comes near it.
 */
export const MAX_CELL_PLAYERS = 200_000;

/** Ticks past a round trip after a resync during which cells missed are still the frames sent before it (the server takes it at its next tick; jitter). */
export const RESYNC_MARGIN_TICKS = 2;
/** The round trip assumed before the first Pong, ms. */
export const UNKNOWN_ROUND_TRIP_MS = 250;
/** Most a resync waits before another, ms (a round trip of seconds). */
export const MOST_RESYNC_WAIT_MS = 1000;

/** Ticks are 32-bit on the wire; one within 2^31 after another is newer. */
const HALF_TICKS = 2 ** 31;

/** The frames waiting, what the page holds, and the backlog rule; see the module comment. */
export class FrameInbox {
  /**
   * The frames waiting, [0, count), and the lists being taken, swapped at
   * each flush. Emptied by count and by clearing the slots (setting an
   * array's length to 0 drops its storage), so a steady flush allocates
   * nothing.
   */
  private waiting: (ViewMsg | null)[] = [];
  private arrivals: number[] = [];
  private count = 0;
  private taking: (ViewMsg | null)[] = [];
  private takingArrivals: number[] = [];
  /** The newest tick waiting of each shard at the running flush: [0, shardCount). */
  private shardIds = new Float64Array(8);
  private shardTicks = new Float64Array(8);
  private shardCount = 0;
  /** Cells of a backlog not taken yet, (shard, cell) (rare: plain arrays). */
  private readonly pendingShards: number[] = [];
  private readonly pendingCells: number[] = [];
  private readonly cursor = new ViewCursor();
  /** What the page holds (null before the first Welcome: frames are dropped). */
  private heldCells: Held | null = null;
  /** A frame did not apply: nothing is applied until the next Welcome. */
  private brokenChain = false;
  /** Backlog threshold, ticks (from the Welcome's tick rate). */
  private backlogTicks = 4;
  /** Cells skipped so far, and the local time of the last skip (ms; -Infinity before any). */
  skipped = 0;
  lastSkipMs = Number.NEGATIVE_INFINITY;
  /** Most frames found waiting at one flush. */
  mostWaiting = 0;
  /** View frames applied so far. */
  applied = 0;
  /** Cells whose change a lossy page missed (updates 'broken'), and the resyncs it asked for. */
  cellsMissed = 0;
  resyncsAsked = 0;
  /** When the last resync was asked, ms on `now` (-Infinity before any on this transport). */
  private resyncAt = Number.NEGATIVE_INFINITY;
  /** The Welcome's tick period, ms. */
  private tickMs = 50;
  /** The transport's smoothed round trip, ms (NaN: not known yet); the page sets it from its pings. */
  roundTripMs = Number.NaN;

  constructor(
    /** Told what each frame did, in arrival order. */
    private readonly taker: FrameTaker,
    private readonly cap = INBOX_CAP,
    /** The page's clock, ms (when a resync is asked). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Frames waiting now. */
  get length(): number {
    return this.count;
  }

  /** What the page holds (null before the first Welcome). */
  get held(): Held | null {
    return this.heldCells;
  }

  /**
   * A new socket was welcomed: it holds nothing, so neither does the page
   * (call [`flush`] first, for the old socket's frames). Deltas predict with
   * the Welcome's world, speed and tick rate; with area of interest, players
   * are handed off between the cells of its grid and implied cells are read
   * with its stencil (schema/src/held.rs's `Held::for_place`); frames are
   * held by the lossy rule when it granted datagram deltas.
   */
  welcome(w: WelcomeMsg): void {
    const grid = w.aoi ? CellGrid.of(w.bounds, w.aoi.cellSize) : null;
    this.heldCells = new Held(new Motion(w.bounds, w.speed, w.tickHz), MAX_CELL_PLAYERS, w.cellExpiryMs)
      .handingOff(grid)
      .seeing(grid && w.aoi ? Stencil.ofView(w.aoi.wireViewRadius, w.aoi.cellSize) : null)
      .delivered((w.capabilities & DATAGRAM_DELTAS) !== 0 ? 'lossy' : 'in-order');
    this.brokenChain = false;
    this.resyncAt = Number.NEGATIVE_INFINITY;
    this.backlogTicks = Math.max(1, Math.floor((BACKLOG_MS * Math.max(1, w.tickHz)) / 1000));
    this.tickMs = 1000 / Math.max(1, w.tickHz);
    this.count = 0;
  }

  /** Offers a frame that arrived at local `arrivalMs`; it is applied at the next [`flush`] (at once when the inbox is full). */
  offer(msg: ViewMsg, arrivalMs: number): void {
    if (this.brokenChain || !this.heldCells) return;
    const i = this.count++;
    if (i < this.waiting.length) {
      this.waiting[i] = msg;
      this.arrivals[i] = arrivalMs;
    } else {
      this.waiting.push(msg);
      this.arrivals.push(arrivalMs);
    }
    if (this.count >= this.cap) this.flush();
  }

  /**
   * Applies the waiting frames in arrival order and takes what each changed,
   * but for the backlog (see the module comment). Frames offered while taking
   * wait for the next flush.
   */
  flush(): void {
    const n = this.count;
    if (!n) return;
    if (n > this.mostWaiting) this.mostWaiting = n;
    const frames = this.waiting;
    const arrivals = this.arrivals;
    this.waiting = this.taking;
    this.arrivals = this.takingArrivals;
    this.taking = frames;
    this.takingArrivals = arrivals;
    this.count = 0;
    this.shardCount = 0;
    for (let i = 0; i < n; i++) this.note(frames[i] as ViewMsg);
    try {
      for (let i = 0; i < n && !this.brokenChain; i++) this.apply(frames[i] as ViewMsg, arrivals[i] as number);
      if (!this.brokenChain) this.takePending(-1, arrivals[n - 1] as number);
    } finally {
      frames.fill(null, 0, n);
      this.pendingShards.length = 0;
      this.pendingCells.length = 0;
    }
  }

  /** Whether cells were skipped within CATCHING_UP_MS before local `nowMs`. */
  catchingUp(nowMs: number): boolean {
    return nowMs - this.lastSkipMs < CATCHING_UP_MS;
  }

  /** Notes the ticks of `msg`'s sections as their shards' newest so far (a malformed frame: as far as it reads). */
  private note(msg: ViewMsg): void {
    const c = this.cursor;
    try {
      c.begin(msg.bytes, msg.start, msg.end);
      while (c.nextSection()) this.noteTick(c);
    } catch {
      // Held.apply refuses it, saying why.
    }
  }

  /**
   * Notes the cursor's section. (Shard ids and ticks are u32s past the small
   * integers: read from objects, never passed as numbers, which boxes them.)
   */
  private noteTick(c: ViewCursor): void {
    const shard = c.shard;
    const tick = c.tick;
    for (let i = 0; i < this.shardCount; i++) {
      if (this.shardIds[i] !== shard) continue;
      const ahead = (tick - (this.shardTicks[i] as number)) >>> 0;
      if (ahead > 0 && ahead < HALF_TICKS) this.shardTicks[i] = tick;
      return;
    }
    if (this.shardCount === this.shardIds.length) {
      const ids = new Float64Array(this.shardCount * 2);
      const ticks = new Float64Array(this.shardCount * 2);
      ids.set(this.shardIds);
      ticks.set(this.shardTicks);
      this.shardIds = ids;
      this.shardTicks = ticks;
    }
    this.shardIds[this.shardCount] = shard;
    this.shardTicks[this.shardCount] = tick;
    this.shardCount++;
  }

  /** Ticks the update's tick is behind the newest waiting of its shard (0 when not behind). */
  private behind(u: Update): number {
    const shard = u.shard;
    const tick = u.tick;
    for (let i = 0; i < this.shardCount; i++) {
      if (this.shardIds[i] !== shard) continue;
      const d = ((this.shardTicks[i] as number) - tick) >>> 0;
      return d < HALF_TICKS ? d : 0;
    }
    return 0;
  }

  /** Applies one frame and takes what it changed. */
  private apply(msg: ViewMsg, arrivalMs: number): void {
    const held = this.heldCells as Held;
    const error = held.apply(msg.bytes, msg.start, msg.end, arrivalMs);
    this.applied++;
    if (error) {
      this.brokenChain = true;
      this.taker.broken(error);
      return;
    }
    const updates = held.updateCount;
    let span = 0;
    let first = true;
    for (let i = 0; i < updates; i++) {
      const u = held.update(i);
      if (u.kind === 'broken') {
        this.missed();
        continue;
      }
      if (u.kind === 'forgot') {
        this.dropPending(u.shard, u.cell);
        this.taker.forgot(u.shard, u.cell, u.tick, arrivalMs);
        continue;
      }
      if (u.kind === 'reset') {
        this.dropPending(u.shard, -1);
        this.taker.reset(u.shard, u.tick, arrivalMs);
        continue;
      }
      // A cell's consecutive items (a chain of deltas) are taken once, with their spans added;
      // a supplement adds players after its delta and keeps the span.
      if (!u.adds) span = first ? u.span : span > 0 && u.span > 0 ? span + u.span : 0;
      const next = i + 1 < updates ? held.update(i + 1) : null;
      first = !(next && next.kind === 'cell' && next.shard === u.shard && next.cell === u.cell);
      if (!first) continue;
      const cell = u.held;
      if (!cell) continue; // the frame dropped it afterwards: its forget or reset follows
      if (this.behind(u) > this.backlogTicks) {
        this.skip(u.shard, u.cell, arrivalMs);
        continue;
      }
      // A cell whose earlier changes were skipped: what it held before is unknown to the taker.
      if (this.dropPending(u.shard, u.cell)) span = 0;
      this.takePending(u.shard, arrivalMs);
      this.taker.cell(cell, span, arrivalMs);
    }
  }

  /**
   * How long after a resync cells found missed are still frames sent before
   * the server took it, ms: the round trip and RESYNC_MARGIN_TICKS ticks
   * (at most MOST_RESYNC_WAIT_MS).
   */
  get resyncWaitMs(): number {
    const rtt = Number.isFinite(this.roundTripMs) ? this.roundTripMs : UNKNOWN_ROUND_TRIP_MS;
    return Math.min(MOST_RESYNC_WAIT_MS, rtt + RESYNC_MARGIN_TICKS * this.tickMs);
  }

  /** A lossy page missed a cell's change: a resync, unless the last one is still on its way (see `resyncWaitMs`). */
  private missed(): void {
    this.cellsMissed++;
    const now = this.now();
    if (now - this.resyncAt < this.resyncWaitMs) return;
    this.resyncAt = now;
    this.resyncsAsked++;
    this.taker.resync();
  }

  /** A backlog's cell: taken later, as held then. */
  private skip(shard: number, cell: number, arrivalMs: number): void {
    this.skipped++;
    this.lastSkipMs = arrivalMs;
    for (let i = 0; i < this.pendingShards.length; i++) if (this.pendingShards[i] === shard && this.pendingCells[i] === cell) return;
    this.pendingShards.push(shard);
    this.pendingCells.push(cell);
  }

  /** Forgets the pending (shard, cell) (-1: every cell of the shard); whether one was pending. */
  private dropPending(shard: number, cell: number): boolean {
    let dropped = false;
    for (let i = this.pendingShards.length - 1; i >= 0; i--) {
      if (this.pendingShards[i] !== shard || (cell >= 0 && this.pendingCells[i] !== cell)) continue;
      this.pendingShards.splice(i, 1);
      this.pendingCells.splice(i, 1);
      dropped = true;
    }
    return dropped;
  }

  /** Takes the pending cells of `shard` (-1: of every shard) as they are held now. */
  private takePending(shard: number, arrivalMs: number): void {
    if (this.pendingShards.length === 0) return;
    const held = this.heldCells as Held;
    for (let i = this.pendingShards.length - 1; i >= 0; i--) {
      const s = this.pendingShards[i] as number;
      if (shard >= 0 && s !== shard) continue;
      const cell = held.cell(s, this.pendingCells[i] as number);
      this.pendingShards.splice(i, 1);
      this.pendingCells.splice(i, 1);
      if (cell) this.taker.cell(cell, 0, arrivalMs);
    }
  }
}
