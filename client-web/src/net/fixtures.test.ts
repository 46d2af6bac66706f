// Decodes the real server frames that mino_protocol's Rust encoders wrote to
// schema/fixtures/server-frames.json (schema/tests/fixtures.rs) and checks every
// value (a view frame applied to held cells), then checks that damaged copies
// of them are refused, not misread.
import { describe, expect, it } from 'vitest';
import { formatShardId } from './shard-id.js';
import fixture from '../../../schema/fixtures/server-frames.json';
import { Held } from './held.js';
import { Motion } from './motion.js';
import { decodeServer, type Bounds, type PlayerColumns, type ServerMsg, type ViewMsg } from './protocol.js';

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

/** What each body decodes as; null: refused (a snapshot goes between shards only, never to a page). */
const KIND: Record<string, ServerMsg['kind'] | null> = {
  Welcome: 'welcome',
  Snapshot: null,
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

/** Held cells over `b` at the walk game's speed and 20 Hz (the fixture's frame has full forms and forgets only). */
function heldOf(b: { min_x: number; min_y: number; max_x: number; max_y: number }): Held {
  return new Held(new Motion(boundsOf(b), 300, 20), 1000);
}

describe('server frames from the Rust encoders', () => {
  it('covers every server message kind', () => {
    expect(new Set(frames.map((f) => f.kind))).toEqual(new Set(Object.keys(KIND)));
  });

  it.each(frames.map((f) => [f.name, f] as const))('%s decodes as its kind (a snapshot is refused)', (_name, f) => {
    const d = decodeServer(bytesOf(f.hex));
    if (KIND[f.kind] === null) expect(d).toEqual({ ok: false, error: 'a Snapshot is never sent to a page' });
    else expect(d.ok && d.msg.kind).toBe(KIND[f.kind]);
  });

  it('welcome carries every field', () => {
    const w = decoded('welcome');
    const e = frame('welcome').expect;
    if (w.kind !== 'welcome') throw new Error('not a welcome');
    // The shard id as the server writes it for people (ShardId's Display).
    expect(formatShardId(w.shardId)).toBe((e as { shard_id_text: string }).shard_id_text);
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
    expect(w.viewGraceMs).toBe(0);
    expect(w.capabilities).toBe((e as { capabilities: number }).capabilities);
    expect(w.cellExpiryMs).toBe((e as { cell_expiry_ms: number }).cell_expiry_ms);
  });

  it('a welcome with area of interest carries the grid, the view radius and the grace', () => {
    const w = decoded('welcome-aoi');
    const e = frame('welcome-aoi').expect as {
      server_time_ms: number;
      bounds: { min_x: number; min_y: number; max_x: number; max_y: number };
      aoi: { cell_size: number; grid_columns: number; view_radius: number; view_grace_ms: number };
      cell_expiry_ms: number;
    };
    if (w.kind !== 'welcome') throw new Error('not a welcome');
    expect(w.bounds).toEqual(boundsOf(e.bounds));
    expect([w.speed, w.resumed, w.serverTimeMs]).toEqual([300, true, e.server_time_ms]);
    expect(w.aoi).toEqual({
      cellSize: e.aoi.cell_size,
      gridColumns: e.aoi.grid_columns,
      viewRadius: e.aoi.view_radius,
      wireViewRadius: e.aoi.view_radius,
      viewGraceMs: e.aoi.view_grace_ms,
    });
    expect(w.viewGraceMs).toBe(e.aoi.view_grace_ms);
    expect(w.capabilities).toBe(1);
    expect(w.cellExpiryMs).toBe(e.cell_expiry_ms);
  });

  it("a view frame's sections apply to held cells: each cell with its players, dequantized over the welcome bounds", () => {
    const v = decoded('view');
    const e = frame('view').expect as {
      bounds: { min_x: number; min_y: number; max_x: number; max_y: number };
      sections: { shard_id: number; tick: number; cells: { cell: number; items: { kind: string; players?: EntryExpect[] }[] }[] }[];
    };
    if (v.kind !== 'view') throw new Error('not a view frame');
    const held = heldOf(e.bounds);
    expect(held.apply(v.bytes, v.start, v.end)).toBeNull();
    const section = e.sections[0] as (typeof e.sections)[number];
    const full = section.cells[0] as (typeof section.cells)[number];
    const u = held.update(0);
    expect([u.kind, u.shard, u.cell, u.tick]).toEqual(['cell', section.shard_id, full.cell, section.tick]);
    const players = (full.items[0] as { players: EntryExpect[] }).players;
    const c = held.cell(section.shard_id, full.cell);
    expect(c?.playerCount).toBe(players.length);
    const out = columns(players.length);
    c?.readPlayers(out, boundsOf(e.bounds));
    expectEntries(out, players);
    // Bit 0 moving, bits 1-7 the input sequence echo.
    expect(Array.from(out.flags)).toEqual([127 << 1, 1, (5 << 1) | 1]);
  });

  it("a view frame's forget drops its cell (it left the view)", () => {
    const v = decoded('view') as ViewMsg;
    const held = heldOf({ min_x: 0, min_y: 0, max_x: 2000, max_y: 2000 });
    expect(held.apply(v.bytes, v.start, v.end)).toBeNull();
    const forgot = held.update(held.updateCount - 1);
    expect([forgot.kind, forgot.shard, forgot.cell, forgot.tick]).toEqual(['forgot', 7, 55, 5]);
    expect(held.cell(7, 55)).toBeUndefined();
  });

  it('names and place status carry their fields', () => {
    const n = decoded('names');
    if (n.kind !== 'names') throw new Error('not names');
    expect(n.players).toEqual(frame('names').expect.players);
    expect(decoded('place-status')).toEqual({ kind: 'place-status', players: 12345, shards: 3 });
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
    const re = frame('roster').expect as { players: { id: number; name: string; shard_id: number }[] };
    expect(r.players).toEqual(re.players.map((x) => ({ id: x.id, name: x.name, shard: x.shard_id })));
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
 * schema/mino.fbs (body's type 2, view 0).
 */
const ROOT_BODY_TYPE = 8;
const ROOT_VIEW = 4;

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

  it("a view frame whose view's length points past the end is refused", () => {
    for (const past of [1, 100_000]) {
      const bytes = bytesOf(frame('view').hex);
      const view = new DataView(bytes.buffer);
      const field = rootField(view, ROOT_VIEW);
      expect(field).toBeGreaterThan(0);
      const vector = field + view.getUint32(field, true);
      view.setUint32(vector, view.getUint32(vector, true) + past, true);
      expect(decodeServer(bytes)).toMatchObject({ ok: false });
    }
  });

  it("a view frame whose view is a byte short verifies as a message but its held cells refuse it, saying why", () => {
    const bytes = bytesOf(frame('view').hex);
    const view = new DataView(bytes.buffer);
    const vector = rootField(view, ROOT_VIEW) + view.getUint32(rootField(view, ROOT_VIEW), true);
    view.setUint32(vector, view.getUint32(vector, true) - 1, true);
    const d = decodeServer(bytes);
    if (!d.ok || d.msg.kind !== 'view') throw new Error('a view frame');
    const held = heldOf({ min_x: 0, min_y: 0, max_x: 2000, max_y: 2000 });
    expect(held.apply(d.msg.bytes, d.msg.start, d.msg.end)?.message).toBe('view frame: truncated');
    expect(held.cell(7, 54)).toBeUndefined();
  });

  it('a message with no body and no view (or an empty one) is refused as having no body', () => {
    const bytes = bytesOf(frame('view').hex);
    const view = new DataView(bytes.buffer);
    expect(rootField(view, ROOT_VIEW)).toBeGreaterThan(0);
    view.setUint16(rootVtable(view) + ROOT_VIEW, 0, true);
    expect(decodeServer(bytes)).toEqual({ ok: false, error: 'server message without a body' });
    const empty = bytesOf(frame('view').hex);
    const ev = new DataView(empty.buffer);
    ev.setUint32(rootField(ev, ROOT_VIEW) + ev.getUint32(rootField(ev, ROOT_VIEW), true), 0, true);
    expect(decodeServer(empty)).toEqual({ ok: false, error: 'server message without a body' });
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
