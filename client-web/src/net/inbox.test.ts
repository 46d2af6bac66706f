import { describe, expect, it } from 'vitest';
import { FRAME_BUDGET_BYTES, bytesPerFrame } from '../testing/allocation.js';
import { fullBody, frameOf, item, section, walkerScene, type WirePlayer } from '../testing/delta-frames.js';
import type { HeldCell } from './held.js';
import { FrameInbox, type FrameTaker } from './inbox.js';
import type { ViewMsg, WelcomeMsg } from './protocol.js';

/** Ticks as the server numbers them: past 2^30 (as real ones are), the low 32 bits near their wrap. */
const T0 = 0xffff_fff0;
const tick = (t: number): number => (T0 + t) % 2 ** 32;

const WELCOME: WelcomeMsg = {
  kind: 'welcome',
  playerId: 1,
  shardId: 1,
  tickHz: 20,
  bounds: { minX: 0, minY: 0, maxX: 4000, maxY: 4000 },
  speed: 120,
  resumeTicket: new Uint8Array(16),
  serverTimeMs: 1_764_450_000_000,
  name: 'p1',
  x: 0,
  y: 0,
  resumed: false,
  aoi: null,
  viewGraceMs: 0,
  capabilities: 1,
  cellExpiryMs: 0,
};

function view(bytes: Uint8Array): ViewMsg {
  return { kind: 'view', bytes, start: 0, end: bytes.length };
}

const standing = (id: number): WirePlayer => ({ id, x: 1000 + id, y: 1000, heading: 0, flags: 0 });

/** A frame of `shard` at tick `t` whose cells each hold one standing player (full forms). */
function fullFrame(shard: number, t: number, ...cells: number[]): ViewMsg {
  return view(frameOf(section(shard, tick(t), cells.map((c) => [c, [item(0, fullBody([standing(c)]))]] as const))));
}

/** A frame of `shard` at tick `t` where `cells` each changed by an empty delta over one tick. */
function deltaFrame(shard: number, t: number, ...cells: number[]): ViewMsg {
  return view(frameOf(section(shard, tick(t), cells.map((c) => [c, [item(1, [])]] as const))));
}

/** An inbox welcomed, recording what it takes as `s<shard>c<cell>@<tick>` (`~` forgot, `!` reset, `span` after a colon); its clock reads `clock.ms`. */
function inbox(cap?: number, welcome: WelcomeMsg = WELCOME): { box: FrameInbox; taken: string[]; errors: string[]; clock: { ms: number } } {
  const clock = { ms: 0 };
  const taken: string[] = [];
  const errors: string[] = [];
  const taker: FrameTaker = {
    cell: (c: HeldCell, span) => taken.push(`s${c.shard}c${c.cell}@${(c.tick - T0 + 2 ** 32) % 2 ** 32}:${span}`),
    forgot: (shard, cell, t) => taken.push(`~s${shard}c${cell}@${(t - T0 + 2 ** 32) % 2 ** 32}`),
    reset: (shard, t) => taken.push(`!s${shard}@${(t - T0 + 2 ** 32) % 2 ** 32}`),
    broken: (e) => errors.push(e.message),
    resync: () => taken.push('resync'),
  };
  const box = new FrameInbox(taker, cap, () => clock.ms);
  box.welcome(welcome);
  return { box, taken, errors, clock };
}

describe('frame inbox', () => {
  it('applies and takes every frame of a page that keeps up, even one drawing only 5 frames a second', () => {
    const { box, taken } = inbox();
    box.offer(fullFrame(1, 10, 5), 100);
    expect(taken).toEqual([]);
    box.flush();
    // 200 ms of frames (ticks every 50 ms) waiting: a slow page, not a backlog.
    for (let t = 11; t <= 15; t++) box.offer(deltaFrame(1, t, 5), 100 + 50 * (t - 10));
    box.offer(fullFrame(2, 15, 5), 350);
    box.flush();
    expect(taken).toEqual(['s1c5@10:0', 's1c5@11:1', 's1c5@12:1', 's1c5@13:1', 's1c5@14:1', 's1c5@15:1', 's2c5@15:0']);
    expect(box.skipped).toBe(0);
    expect(box.catchingUp(400)).toBe(false);
    expect(box.held?.shardCount).toBe(2);
  });

  it('behind, applies everything but takes only what is within 200 ms of the newest of its shard, and says so for a second', () => {
    const { box, taken } = inbox();
    // Two seconds of shard 1 arrive in one burst (the browser held them), one tick of shard 2.
    box.offer(fullFrame(1, 9, 5), 1049);
    for (let t = 10; t < 50; t++) box.offer(deltaFrame(1, t, 5), 1049);
    box.offer(fullFrame(2, 49, 5), 1049);
    box.flush();
    // The skipped cell is taken again from its shard's first frame that is current, with no span.
    expect(taken).toEqual(['s1c5@45:0', 's1c5@46:1', 's1c5@47:1', 's1c5@48:1', 's1c5@49:1', 's2c5@49:0']);
    expect(box.skipped).toBe(36);
    expect(box.applied).toBe(42);
    expect(box.catchingUp(1049 + 999)).toBe(true);
    expect(box.catchingUp(1049 + 1000)).toBe(false);
    expect(box.length).toBe(0);
  });

  it('judges each cell of each shard by its shard\'s newest, across the 32-bit wrap, and never loses a cell\'s last change', () => {
    const { box, taken } = inbox();
    box.offer(fullFrame(1, 0, 5, 6), 0);
    // Ticks 0..9 wrap the low 32 bits between them (T0 + 16 is 0).
    for (let t = 1; t < 10; t++) box.offer(deltaFrame(1, t, 5), t);
    box.offer(deltaFrame(1, 10, 5), 10);
    box.flush();
    // Cell 6 changed at tick 0 only (then stood): its last change is taken, late but not lost.
    // The first of cell 5 taken after skipped ones has no span: what it held before is unknown.
    expect(taken).toEqual(['s1c6@0:0', 's1c5@6:0', 's1c5@7:1', 's1c5@8:1', 's1c5@9:1', 's1c5@10:1']);
    expect(box.skipped).toBe(7);
  });

  it("takes a cell the Welcome's expiry dropped (sent nothing for that long, by arrival time) as forgotten", () => {
    const { box, taken } = inbox(undefined, { ...WELCOME, cellExpiryMs: 5000 });
    box.offer(fullFrame(1, 1, 5, 6), 1000);
    box.offer(deltaFrame(1, 2, 5), 3000);
    box.flush();
    box.offer(deltaFrame(1, 3, 5), 7001);
    box.flush();
    expect(taken).toEqual(['s1c5@1:0', 's1c6@1:0', 's1c5@2:1', '~s1c6@1', 's1c5@3:1']);
    expect(box.held?.cell(1, 6)).toBeUndefined();
    // A Welcome without one (a websocket) keeps every cell.
    const still = inbox();
    still.box.offer(fullFrame(1, 1, 5, 6), 1000);
    still.box.offer(deltaFrame(1, 2, 5), 1_000_000);
    still.box.flush();
    expect(still.taken).toEqual(['s1c5@1:0', 's1c6@1:0', 's1c5@2:1']);
  });

  it('always takes forgets and resets, and a chain of items of a cell once, with their spans added', () => {
    const { box, taken } = inbox();
    box.offer(fullFrame(1, 1, 5, 6, 7), 0);
    box.offer(view(frameOf(section(1, tick(2), [[5, [item(1, []), item(2, [])]], [6, [item(8, [])]]]))), 1);
    box.offer(view(frameOf(section(1, tick(3), []), section(1, tick(3), [[7, [item(0, fullBody([standing(9)]))]]]))), 2);
    box.flush();
    expect(taken).toEqual(['s1c5@1:0', 's1c6@1:0', 's1c7@1:0', 's1c5@2:3', '~s1c6@2', '!s1@3', 's1c7@3:0']);
  });

  it('takes a delta and the supplements after it with the delta\'s span (a supplement only adds players)', () => {
    const { box, taken } = inbox();
    box.offer(fullFrame(1, 1, 5), 0);
    box.offer(view(frameOf(section(1, tick(3), [[5, [item(2, []), item(9, fullBody([standing(8)]))]]]))), 1);
    box.flush();
    expect(taken).toEqual(['s1c5@1:0', 's1c5@3:2']);
  });

  it('stays bounded without animation frames (a hidden tab): a full inbox is applied at once', () => {
    const { box, taken } = inbox(64);
    box.offer(fullFrame(1, 0, 5), 0);
    for (let t = 1; t < 640; t++) box.offer(deltaFrame(1, t, 5), t);
    expect(box.length).toBeLessThan(64);
    expect(box.applied).toBe(640 - box.length);
    expect(taken.at(-1)).toBe(`s1c5@${639 - box.length}:1`);
  });

  it('stops at a frame that does not apply, says why once, and drops every frame until the next Welcome', () => {
    const { box, taken, errors } = inbox();
    box.offer(fullFrame(1, 0, 5), 0);
    // A delta of a cell it never held whose leave names a player it does not have.
    box.offer(view(frameOf(section(1, tick(1), [[6, [item(1, [1, 0])]]]))), 1);
    box.offer(deltaFrame(1, 2, 5), 2);
    box.flush();
    box.offer(deltaFrame(1, 3, 5), 3);
    box.flush();
    expect(taken).toEqual(['s1c5@0:0']);
    expect(errors).toEqual(['cell 6 of shard 1: index out of range']);
    box.welcome(WELCOME);
    box.offer(fullFrame(1, 4, 5), 4);
    box.flush();
    expect(taken).toEqual(['s1c5@0:0', 's1c5@4:0']);
    expect(box.held?.cell(1, 5)?.playerCount).toBe(1);
  });

  it("reads implied cells with the stencil of the Welcome's view radius as sent, over its grid", () => {
    // 1000-unit cells over the 4000-unit world: a 4 x 4 grid. Sent a view
    // radius of 0 (the page draws a default of two cells): the stencil is
    // the own cell, its ring, and a prefetch ring two cells out (12 cells,
    // period 4 at rung 0); seen from cell 6, due exponent 2: cells 1 to 15
    // (4, 8, 12, 13, 14 and 15 of the prefetch ring; with the drawn radius
    // of two cells, 16 too).
    const aoi = { cellSize: 1000, gridColumns: 4, viewRadius: 2000, wireViewRadius: 0, viewGraceMs: 0 };
    const { box, taken, errors } = inbox(undefined, { ...WELCOME, aoi });
    const order = Array.from({ length: 15 }, (_, i) => i + 1);
    box.offer(fullFrame(1, 1, 5, 6, 8), 0);
    // Cells 5, 6 (near, over one tick) and 8 (prefetch, over four) implied.
    const bits = [5, 6, 8].map((c) => order.indexOf(c));
    box.offer(view(frameOf(section(1, tick(4), [], { k: 2, rung: 0, view: { key: 6, previous: 0 }, count: order.length, bits }))), 1);
    box.flush();
    expect(errors).toEqual([]);
    expect(taken).toEqual(['s1c5@1:0', 's1c6@1:0', 's1c8@1:0', 's1c5@4:1', 's1c6@4:1', 's1c8@4:4']);
    // The same frame read with the drawn radius (two cells: more candidates) would not fit.
    box.offer(view(frameOf(section(1, tick(5), [], { k: 2, rung: 0, view: { key: 6, previous: 0 }, count: 16, bits: [0] }))), 2);
    box.flush();
    expect(errors).toEqual(['view frame: bad implied cells']);
    // Without area of interest implied cells are refused.
    const plain = inbox();
    plain.box.offer(view(frameOf(section(1, tick(4), [], { k: 0, rung: 0, view: { key: 6, previous: 0 }, count: 1, bits: [0] }))), 1);
    plain.box.flush();
    expect(plain.errors).toEqual(['view frame: bad implied cells']);
  });

  it('holds frames by the lossy rule when the Welcome granted datagram deltas, and asks a resync for cells missed once the last one had time to mend them', () => {
    const { box, taken, errors, clock } = inbox(undefined, { ...WELCOME, capabilities: 3, cellExpiryMs: 12_800 });
    expect(box.held?.delivery).toBe('lossy');
    // A round trip and two ticks: 40 + 2 x 50 ms; 250 ms assumed before the first Pong; at most a second.
    expect(box.resyncWaitMs).toBe(350);
    box.roundTripMs = 5000;
    expect(box.resyncWaitMs).toBe(1000);
    box.roundTripMs = 40;
    expect(box.resyncWaitMs).toBe(140);
    box.offer(fullFrame(1, 10, 5, 6), 0);
    // Tick 11's frame lost: 12's deltas start from 11. Cell 6's, applied 100 ms after the resync, was sent before the server took it.
    box.offer(deltaFrame(1, 12, 5), 100);
    clock.ms = 100;
    box.flush();
    box.offer(deltaFrame(1, 12, 6), 200);
    clock.ms = 200;
    box.flush();
    // 160 ms after it: the resync's whole form of cell 5 was lost too, another is asked.
    box.offer(deltaFrame(1, 13, 5), 260);
    clock.ms = 260;
    box.flush();
    expect(taken).toEqual(['s1c5@10:0', 's1c6@10:0', 'resync', 'resync']);
    // 11's frame late: cell 6 mended by it, and 12's then applies.
    box.offer(deltaFrame(1, 11, 6), 300);
    box.offer(deltaFrame(1, 12, 6), 310);
    box.flush();
    // Cell 5 whole (the resync's answer): the chain goes on, and an older datagram is passed over.
    box.offer(fullFrame(1, 15, 5), 350);
    box.offer(deltaFrame(1, 16, 5), 400);
    box.offer(deltaFrame(1, 15, 5), 410);
    box.flush();
    expect(taken.slice(4)).toEqual(['s1c6@11:1', 's1c6@12:1', 's1c5@15:0', 's1c5@16:1']);
    expect([box.cellsMissed, box.resyncsAsked, errors]).toEqual([3, 2, []]);
    // A hidden tab's backlog, applied at once: cells missed over seconds of arrivals ask one resync.
    for (let t = 20; t < 80; t++) box.offer(deltaFrame(1, t, 6), 500 + 50 * t);
    clock.ms = 5000;
    box.flush();
    expect([box.cellsMissed, box.resyncsAsked]).toEqual([63, 3]);
    // A Welcome without it (a websocket): in order, the same frames apply, no resync.
    const ws = inbox();
    expect(ws.box.held?.delivery).toBe('in-order');
    ws.box.offer(fullFrame(1, 10, 5), 0);
    ws.box.offer(deltaFrame(1, 12, 5), 100);
    ws.box.flush();
    expect([ws.taken, ws.box.cellsMissed]).toEqual([['s1c5@10:0', 's1c5@12:1'], 0]);
  });

  it.each([
    ['a websocket', 0, 1],
    ['a WebTransport session, its cells expiring, at fractional arrival times', 12_800, 16.7],
  ])('allocates nothing in a steady frame that applies and takes a frame of 165 walkers: %s', async (_, cellExpiryMs, frameMs) => {
    let read = 0;
    const out = { ids: new Uint32Array(256), x: new Float32Array(256), y: new Float32Array(256), heading: new Float32Array(256), flags: new Uint8Array(256) };
    const s = walkerScene(165, 3);
    const box = new FrameInbox({
      cell: (c) => {
        c.readPlayers(out, s.bounds);
        read += c.playerCount;
      },
      forgot: () => undefined,
      reset: () => undefined,
      broken: (e) => {
        throw new Error(e.message);
      },
      resync: () => {
        throw new Error('a resync asked in order');
      },
    });
    box.welcome({ ...WELCOME, bounds: s.bounds, speed: s.speed, tickHz: s.tickHz, cellExpiryMs });
    box.offer(view(s.setup), 0);
    box.flush();
    const steady = [view(s.steady[0]), view(s.steady[1])];
    let f = 0;
    const bytes = await bytesPerFrame(() => {
      box.offer(steady[f & 1] as ViewMsg, f * frameMs);
      box.flush();
      f++;
    });
    expect(read).toBeGreaterThan(1000 * 165);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  }, 30_000);
});
