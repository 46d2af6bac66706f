// Decodes the real server frames that mino_protocol's Rust encoders wrote to
// schema/fixtures/server-frames.json (schema/tests/fixtures.rs) and checks every
// value, then checks that damaged copies of them are refused, not misread.
import { describe, expect, it } from 'vitest';
import fixture from '../../../schema/fixtures/server-frames.json';
import { decodeServer, type Bounds, type PlayerColumns, type ServerMsg } from './protocol.js';

interface Frame {
  name: string;
  kind: string;
  hex: string;
  expect: Record<string, unknown>;
}

const frames: Frame[] = fixture.frames;

function bytesOf(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function hexOf(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function frame(name: string): Frame {
  const f = frames.find((x) => x.name === name);
  if (!f) throw new Error(`fixture ${name} missing`);
  return f;
}

function decoded(name: string): ServerMsg {
  const d = decodeServer(bytesOf(frame(name).hex));
  if (!d.ok) throw new Error(`${name}: ${d.error}`);
  return d.msg;
}

function columns(n: number): PlayerColumns {
  return {
    ids: new Uint32Array(n),
    x: new Float32Array(n),
    y: new Float32Array(n),
    heading: new Float32Array(n),
    flags: new Uint8Array(n),
  };
}

const KIND: Record<string, ServerMsg['kind']> = {
  Welcome: 'welcome',
  Snapshot: 'snapshot',
  ChatMessage: 'chat',
  Presence: 'presence',
  Roster: 'roster',
  Busy: 'busy',
  Error: 'error',
  Pong: 'pong',
  Move: 'move',
  Names: 'names',
  PlaceStatus: 'place-status',
  View: 'view',
};

/** A decoded entry as the Rust encoder recorded it. */
interface EntryExpect {
  id: number;
  x: number;
  y: number;
  heading: number;
  flags: number;
}

/** Checks columns read back from a frame against the recorded entries. */
function expectEntries(out: PlayerColumns, players: EntryExpect[]): void {
  players.forEach((p, i) => {
    expect(out.ids[i]).toBe(p.id);
    expect(out.x[i]).toBeCloseTo(p.x, 3);
    expect(out.y[i]).toBeCloseTo(p.y, 3);
    expect(out.heading[i]).toBeCloseTo((p.heading / 256) * 2 * Math.PI, 6);
    expect(out.flags[i]).toBe(p.flags);
  });
}

function boundsOf(b: { min_x: number; min_y: number; max_x: number; max_y: number }): Bounds {
  return { minX: b.min_x, minY: b.min_y, maxX: b.max_x, maxY: b.max_y };
}

describe('server frames from the Rust encoders', () => {
  it('covers every server message kind', () => {
    expect(new Set(frames.map((f) => f.kind))).toEqual(new Set(Object.keys(KIND)));
  });

  it.each(frames.map((f) => [f.name, f] as const))('%s decodes as its kind', (_name, f) => {
    const d = decodeServer(bytesOf(f.hex));
    expect(d.ok && d.msg.kind).toBe(KIND[f.kind]);
  });

  it('welcome carries every field', () => {
    const w = decoded('welcome');
    const e = frame('welcome').expect;
    if (w.kind !== 'welcome') throw new Error('not a welcome');
    expect(w.playerId).toBe(e.player_id);
    expect(w.shardId).toBe(e.shard_id);
    expect(w.tickHz).toBe(e.tick_hz);
    expect(w.bounds).toEqual({ minX: 0, minY: 0, maxX: 1000, maxY: 1000 });
    expect(w.speed).toBe(e.speed);
    expect(hexOf(w.resumeTicket)).toBe(e.resume_ticket_hex);
    expect(w.serverTimeMs).toBe(e.server_time_ms);
    expect(w.name).toBe(e.name);
    expect([w.x, w.y, w.resumed]).toEqual([e.x, e.y, e.resumed]);
    expect(w.aoi).toBeNull();
  });

  it('a welcome with area of interest carries the grid, the view radius and the grace', () => {
    const w = decoded('welcome-aoi');
    const e = frame('welcome-aoi').expect as {
      server_time_ms: number;
      bounds: { min_x: number; min_y: number; max_x: number; max_y: number };
      aoi: { cell_size: number; grid_columns: number; view_radius: number; view_grace_ms: number };
    };
    if (w.kind !== 'welcome') throw new Error('not a welcome');
    expect(w.bounds).toEqual(boundsOf(e.bounds));
    expect([w.speed, w.resumed, w.serverTimeMs]).toEqual([300, true, e.server_time_ms]);
    expect(w.aoi).toEqual({
      cellSize: e.aoi.cell_size,
      gridColumns: e.aoi.grid_columns,
      viewRadius: e.aoi.view_radius,
      viewGraceMs: e.aoi.view_grace_ms,
    });
  });

  it('a view frame carries its header and each cell with its players, dequantized over the welcome bounds', () => {
    const v = decoded('view');
    const e = frame('view').expect as {
      shard_id: number;
      tick: number;
      time_ms: number;
      server_time_ms: number;
      bounds: { min_x: number; min_y: number; max_x: number; max_y: number };
      cells: { cell: number; players: EntryExpect[] }[];
    };
    if (v.kind !== 'view') throw new Error('not a view frame');
    expect([v.shardId, v.tick, v.timeMs]).toEqual([e.shard_id, e.tick, e.time_ms]);
    expect(v.timeMs).toBe(e.server_time_ms % 2 ** 32);
    expect(v.cells.map((c) => c.cell)).toEqual(e.cells.map((c) => c.cell));
    v.cells.forEach((c, i) => {
      const want = e.cells[i] as { cell: number; players: EntryExpect[] };
      expect([c.kind, c.shardId, c.tick, c.timeMs]).toEqual(['cell', e.shard_id, e.tick, e.time_ms]);
      expect(c.playerCount).toBe(want.players.length);
      const out = columns(c.playerCount);
      c.readPlayers(out, boundsOf(e.bounds));
      expectEntries(out, want.players);
    });
    // Bit 0 moving, bits 1-7 the input sequence echo.
    const first = v.cells[0];
    const out = columns(3);
    first?.readPlayers(out, boundsOf(e.bounds));
    expect(Array.from(out.flags)).toEqual([(5 << 1) | 1, 127 << 1, 1]);
  });

  it("a view frame's emptied cell is a cell without players (they left it)", () => {
    const v = decoded('view');
    if (v.kind !== 'view') throw new Error('not a view frame');
    const emptied = v.cells[v.cells.length - 1];
    expect(emptied && [emptied.shardId, emptied.cell, emptied.tick, emptied.playerCount]).toEqual([7, 55, 5, 0]);
  });

  it('names and place status carry their fields', () => {
    const n = decoded('names');
    if (n.kind !== 'names') throw new Error('not names');
    expect(n.players).toEqual(frame('names').expect.players);
    expect(decoded('place-status')).toEqual({ kind: 'place-status', players: 12345, shards: 3 });
  });

  it('snapshot players dequantize to the Rust positions', () => {
    const s = decoded('snapshot');
    const e = frame('snapshot').expect as {
      shard_id: number;
      tick: number;
      server_time_ms: number;
      tick_hz: number;
      cell: number;
      players: EntryExpect[];
    };
    if (s.kind !== 'snapshot') throw new Error('not a snapshot');
    expect([s.shardId, s.tick, s.serverTimeMs, s.tickHz, s.cell]).toEqual([
      e.shard_id,
      e.tick,
      e.server_time_ms,
      e.tick_hz,
      e.cell,
    ]);
    expect(s.playerCount).toBe(e.players.length);
    const out = columns(s.playerCount);
    s.readPlayers(out);
    expectEntries(out, e.players);
  });

  it('an empty snapshot keeps its header and bounds', () => {
    const s = decoded('snapshot-empty');
    if (s.kind !== 'snapshot') throw new Error('not a snapshot');
    expect(s.playerCount).toBe(0);
    expect(s.bounds).toEqual({ minX: -500, minY: -250, maxX: 500, maxY: 250 });
    expect([s.tickHz, s.cell]).toEqual([30, 3]);
  });

  it('chat text arrives verbatim, markup and all', () => {
    const c = decoded('chat');
    const e = frame('chat').expect;
    if (c.kind !== 'chat') throw new Error('not chat');
    expect([c.fromId, c.name, c.text, c.shardId, c.serverTimeMs]).toEqual([
      e.from_id,
      e.name,
      e.text,
      e.shard_id,
      e.server_time_ms,
    ]);
  });

  it('presence and roster list players', () => {
    const p = decoded('presence');
    const r = decoded('roster');
    if (p.kind !== 'presence' || r.kind !== 'roster') throw new Error('wrong kinds');
    const pe = frame('presence').expect as { shard_id: number; joined: { id: number; name: string }[]; left: number[] };
    expect(p.shardId).toBe(pe.shard_id);
    expect(p.joined).toEqual(pe.joined);
    expect(p.left).toEqual(pe.left);
    expect(r.players).toEqual(frame('roster').expect.players);
  });

  it('busy, error, pong and move carry their fields', () => {
    const busy = decoded('busy');
    const error = decoded('error');
    const pong = decoded('pong');
    const move = decoded('move');
    expect(busy).toEqual({ kind: 'busy', reason: 'ticks are late', retryAfterMs: 2500 });
    expect(error).toEqual({ kind: 'error', code: 4013, message: 'opened elsewhere' });
    expect(pong).toEqual({ kind: 'pong', clientTimeMs: 12345.678, serverTimeMs: 1764450000300 });
    if (move.kind !== 'move') throw new Error('not a move');
    expect(hexOf(move.resumeTicket)).toBe(frame('move').expect.resume_ticket_hex);
    expect(move.reason).toBe('shard draining');
  });
});

/**
 * Vtable offsets of the root ServerMessage's fields: 4 + 2 × the field id of
 * schema/mino.fbs (players 1, body's type 2, frame 4, runs 5; id 0 is protocol
 * 2's cell header, deprecated).
 */
const ROOT_PLAYERS = 6;
const ROOT_BODY_TYPE = 8;
const ROOT_FRAME = 12;
const ROOT_RUNS = 14;

/** Where the root table's vtable starts. */
function rootVtable(view: DataView): number {
  const root = view.getUint32(0, true);
  return root - view.getInt32(root, true);
}

/** Where the root table's field of vtable offset `vo` is, or 0 when it is absent. */
function rootField(view: DataView, vo: number): number {
  const root = view.getUint32(0, true);
  const vtable = rootVtable(view);
  const at = vo < view.getUint16(vtable, true) ? view.getUint16(vtable + vo, true) : 0;
  return at ? root + at : 0;
}

describe('damaged frames are refused', () => {
  it.each(frames.map((f) => [f.name, f] as const))('every truncation of %s is refused', (_name, f) => {
    const bytes = bytesOf(f.hex);
    for (let cut = 0; cut < bytes.length; cut++) {
      const d = decodeServer(bytes.subarray(0, cut));
      // A cut that only drops trailing padding may still verify; it must then read the same.
      if (d.ok) expect(d.msg.kind).toBe(KIND[f.kind]);
    }
    expect(decodeServer(bytes.subarray(0, 3)).ok).toBe(false);
  });

  it('a snapshot whose player count points past the end is refused', () => {
    const bytes = bytesOf(frame('snapshot').hex);
    const view = new DataView(bytes.buffer);
    // The players vector length is the u32 right before the first 10-byte entry; find it by value.
    const n = (frame('snapshot').expect.players as unknown[]).length;
    let at = -1;
    for (let i = 0; i + 4 <= bytes.length; i += 4) if (view.getUint32(i, true) === n) at = i;
    expect(at).toBeGreaterThan(0);
    view.setUint32(at, 1_000_000, true);
    expect(decodeServer(bytes)).toMatchObject({ ok: false });
  });

  it("a view frame whose players' or runs' length points past the end is refused", () => {
    for (const vo of [ROOT_PLAYERS, ROOT_RUNS]) {
      const bytes = bytesOf(frame('view').hex);
      const view = new DataView(bytes.buffer);
      const field = rootField(view, vo);
      expect(field).toBeGreaterThan(0);
      const vector = field + view.getUint32(field, true);
      view.setUint32(vector, 100_000, true);
      expect(decodeServer(bytes)).toMatchObject({ ok: false });
    }
  });

  it("a view frame whose runs count one player more or less than it carries is refused, saying so", () => {
    for (const delta of [1, -1]) {
      const bytes = bytesOf(frame('view').hex);
      const view = new DataView(bytes.buffer);
      const field = rootField(view, ROOT_RUNS);
      const firstRun = field + view.getUint32(field, true) + 4;
      view.setUint16(firstRun + 4, view.getUint16(firstRun + 4, true) + delta, true); // its count
      expect(decodeServer(bytes)).toEqual({ ok: false, error: `view frame runs count ${3 + delta} players but it carries 3` });
    }
  });

  it('a message with no body is refused: without a frame header as having no body, without runs or players as a bad view frame', () => {
    const cases: [number[], string][] = [
      [[ROOT_PLAYERS], 'view frame without runs or players'],
      [[ROOT_RUNS], 'view frame without runs or players'],
      [[ROOT_FRAME], 'server message without a body'],
      [[ROOT_FRAME, ROOT_RUNS, ROOT_PLAYERS], 'server message without a body'],
    ];
    for (const [dropped, error] of cases) {
      const bytes = bytesOf(frame('view').hex);
      const view = new DataView(bytes.buffer);
      for (const vo of dropped) {
        expect(rootField(view, vo)).toBeGreaterThan(0);
        view.setUint16(rootVtable(view) + vo, 0, true);
      }
      expect(decodeServer(bytes)).toEqual({ ok: false, error });
    }
  });

  it('an unknown body type is refused as unknown', () => {
    const bytes = bytesOf(frame('pong').hex);
    const view = new DataView(bytes.buffer);
    const typeAt = rootField(view, ROOT_BODY_TYPE);
    expect(bytes[typeAt]).toBe(8); // Pong
    bytes[typeAt] = 42;
    const d = decodeServer(bytes);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.error).toBe('unknown union member 42');
  });

  it('invalid UTF-8 in a string is refused', () => {
    const bytes = bytesOf(frame('busy').hex);
    const text = new TextEncoder().encode('ticks are late');
    let at = -1;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === text[0] && bytes[i + 1] === text[1]) at = i;
    bytes[at] = 0xff;
    expect(decodeServer(bytes)).toMatchObject({ ok: false });
  });

  it('garbage and oversized frames are refused without throwing', () => {
    expect(decodeServer(new Uint8Array())).toMatchObject({ ok: false });
    expect(decodeServer(new Uint8Array(64).fill(0xff))).toMatchObject({ ok: false });
    expect(decodeServer(new Uint8Array(1_100_001))).toMatchObject({ ok: false });
    let seed = 7;
    for (let round = 0; round < 200; round++) {
      const junk = new Uint8Array(32 + (round % 64));
      for (let i = 0; i < junk.length; i++) junk[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
      expect(() => decodeServer(junk)).not.toThrow();
    }
  });
});
