// mino's wire protocol at the client's edge: every server frame is verified
// (see verify.ts) and turned into a domain value here, once; client messages
// are encoded here with the code flatc generated from schema/mino.fbs. Free of
// DOM and timers, so bots in the end-to-end tests speak through it too.

import * as flatbuffers from 'flatbuffers';
import {
  Busy,
  ChatMessage,
  ChatSend,
  ClientBody,
  ClientMessage,
  Error as WireError,
  Hello,
  Input,
  Limit,
  Move,
  Names,
  NamesRequest,
  Ping,
  PlaceStatus,
  Pong,
  Presence,
  ProtocolVersion,
  Roster,
  ServerBody,
  ServerMessage,
  ServerVerifierLimit,
  Snapshot,
  Welcome,
  type PlayerInfo,
} from '../generated/mino/wire.js';
import { SERVER_MESSAGE } from '../generated/mino/wire-layout.js';
import { copyEntries } from './entries.js';
import { UnknownUnionError, verifyRoot, type VerifyLimits } from './verify.js';
import { decodeView } from './view-frame.js';

export { FLAG_MOVING, INPUT_SEQ_SHIFT, dequantize, headingRadians } from './entries.js';

// The protocol's numbers are constants of schema/mino.fbs (generated, shared
// with the Rust crate's mino_protocol::limits and PROTOCOL_VERSION).

/** The protocol version every Hello carries. */
export const PROTOCOL_VERSION: number = ProtocolVersion.Current;
/** Longest display name, characters (Unicode scalar values). */
export const MAX_NAME_CHARS: number = Limit.MaxNameChars;
/** Longest chat line, characters. */
export const MAX_CHAT_CHARS: number = Limit.MaxChatChars;
/** Largest server frame the client reads, bytes (a 100,000-player snapshot). */
export const MAX_SERVER_MESSAGE_BYTES: number = Limit.MaxServerMessageBytes;
/** Longest access token a Hello may carry, bytes. */
export const MAX_ACCESS_TOKEN_BYTES: number = Limit.MaxAccessTokenBytes;
/** Most player ids one NamesRequest may carry. */
export const MAX_NAMES_REQUEST_IDS: number = Limit.MaxNamesRequestIds;
/** What the verifier allows in a server frame (mino_protocol::limits::server_verifier). */
const SERVER_LIMITS: VerifyLimits = { maxDepth: ServerVerifierLimit.MaxDepth, maxTables: ServerVerifierLimit.MaxTables };

/** The world's rectangle, world units. */
export interface Bounds {
  readonly minX: number;
  readonly minY: number;
  readonly maxX: number;
  readonly maxY: number;
}

/** A player id with a display name. */
export interface PlayerName {
  readonly id: number;
  readonly name: string;
}

/**
 * Column storage that snapshot players are copied into: index i of every array
 * is one player. Positions are world units, heading radians counter-clockwise
 * from +x, flags as on the wire. Each array holds at least the players copied.
 */
export interface PlayerColumns {
  ids: Uint32Array;
  x: Float32Array;
  y: Float32Array;
  heading: Float32Array;
  flags: Uint8Array;
}

/**
 * Area of interest as the Welcome describes it: the server sends view frames
 * (one per shard a tick, a run per cell near the player) instead of
 * whole-shard snapshots.
 */
export interface AoiSettings {
  /** Side of a grid cell, world units (> 0). */
  readonly cellSize: number;
  /** Columns of the grid: cell = 1 + row * gridColumns + column. */
  readonly gridColumns: number;
  /**
   * View radius, world units: players within it come at least every second
   * tick; a prefetch ring one cell beyond it every fourth.
   */
  readonly viewRadius: number;
  /** A player in none of the cells received for this long has left the view, ms. */
  readonly viewGraceMs: number;
}

/** The server admitted the player. */
export interface WelcomeMsg {
  readonly kind: 'welcome';
  readonly playerId: number;
  readonly shardId: number;
  /** Snapshot rate, Hz. */
  readonly tickHz: number;
  readonly bounds: Bounds;
  /** Walking speed, world units per second. */
  readonly speed: number;
  /** Secret; presented in a later Hello to resume. A copy, not a view. */
  readonly resumeTicket: Uint8Array;
  /** Server wall clock, ms since the Unix epoch. */
  readonly serverTimeMs: number;
  readonly name: string;
  /** Position now, world units. */
  readonly x: number;
  readonly y: number;
  readonly resumed: boolean;
  /** Area of interest, or null when the server sends whole-shard snapshots (cell_size 0). */
  readonly aoi: AoiSettings | null;
}

/** One tick of one shard. Players are read on demand into reusable columns. */
export interface SnapshotMsg {
  readonly kind: 'snapshot';
  readonly shardId: number;
  readonly tick: number;
  /** Server wall clock of the tick, ms since the Unix epoch. */
  readonly serverTimeMs: number;
  readonly tickHz: number;
  readonly bounds: Bounds;
  readonly cell: number;
  readonly playerCount: number;
  /** Copies the players (dequantized to world units) into `out[0..playerCount)`. */
  readPlayers(out: PlayerColumns): void;
}

/**
 * One cell of one shard at one tick (area of interest): a run of a view
 * frame ([`ViewMsg`]). Complete for its (shard, cell): a player of that shard
 * missing from it has left the cell; with no players the cell was emptied.
 * Players are read on demand, dequantized over the Welcome's bounds.
 */
export interface CellMsg {
  readonly kind: 'cell';
  readonly shardId: number;
  /** 1 + row * gridColumns + column. */
  readonly cell: number;
  /** The shard's tick, low 32 bits. */
  readonly tick: number;
  /** Server wall clock of the tick: the low 32 bits of ms since the Unix epoch (unwrap it against a server time). */
  readonly timeMs: number;
  readonly playerCount: number;
  /** Copies the players (world units over `bounds`, the Welcome's) into `out[0..playerCount)`. */
  readPlayers(out: PlayerColumns, bounds: Bounds): void;
}

/**
 * One tick of one shard under area of interest: the shard's cells the socket
 * sees, each with all of that shard's players in it. Shard, tick and time
 * are the same for every cell. The players stay in the frame's bytes until
 * a cell's `readPlayers` copies them.
 */
export interface ViewMsg {
  readonly kind: 'view';
  readonly shardId: number;
  /** The shard's tick, low 32 bits. */
  readonly tick: number;
  /** Server wall clock of the tick: the low 32 bits of ms since the Unix epoch. */
  readonly timeMs: number;
  /**
   * The cells, in the frame's order: one per run, but for a cell that came as
   * consecutive runs (over 65,535 players of one shard), which is one cell.
   */
  readonly cells: readonly CellMsg[];
}

/** Names of players a NamesRequest asked about (those the server knows). */
export interface NamesMsg {
  readonly kind: 'names';
  readonly players: readonly PlayerName[];
}

/** With area of interest, once a second: the place's players and live shards. */
export interface PlaceStatusMsg {
  readonly kind: 'place-status';
  readonly players: number;
  readonly shards: number;
}

/** A chat line; the sender receives its own line too. */
export interface ChatMsg {
  readonly kind: 'chat';
  readonly fromId: number;
  readonly name: string;
  readonly text: string;
  readonly shardId: number;
  readonly serverTimeMs: number;
}

/** Players of one shard that joined or left. */
export interface PresenceMsg {
  readonly kind: 'presence';
  readonly shardId: number;
  readonly joined: readonly PlayerName[];
  readonly left: readonly number[];
}

/** Every present player, sent once after Welcome. */
export interface RosterMsg {
  readonly kind: 'roster';
  readonly players: readonly PlayerName[];
}

/** Not admitted now; the socket closes with 4011 next. */
export interface BusyMsg {
  readonly kind: 'busy';
  readonly reason: string;
  readonly retryAfterMs: number;
}

/** Why the server is about to close the socket. */
export interface ErrorMsg {
  readonly kind: 'error';
  /** A CloseCode of the schema. */
  readonly code: number;
  readonly message: string;
}

/** Answer to a Ping. */
export interface PongMsg {
  readonly kind: 'pong';
  readonly clientTimeMs: number;
  readonly serverTimeMs: number;
}

/** The shard drains: reconnect and present this ticket. */
export interface MoveMsg {
  readonly kind: 'move';
  readonly resumeTicket: Uint8Array;
  readonly reason: string;
}

/** Every server message as a domain value. */
export type ServerMsg =
  | WelcomeMsg
  | SnapshotMsg
  | ViewMsg
  | NamesMsg
  | PlaceStatusMsg
  | ChatMsg
  | PresenceMsg
  | RosterMsg
  | BusyMsg
  | ErrorMsg
  | PongMsg
  | MoveMsg;

/** The outcome of decoding one frame: a message or why it was refused. */
export type Decoded = { readonly ok: true; readonly msg: ServerMsg } | { readonly ok: false; readonly error: string };

// ------------------------------------------------------------------ decoding

function bounds(b: { minX(): number; minY(): number; maxX(): number; maxY(): number } | null): Bounds {
  return b ? { minX: b.minX(), minY: b.minY(), maxX: b.maxX(), maxY: b.maxY() } : { minX: 0, minY: 0, maxX: 0, maxY: 0 };
}

function infos(len: number, at: (i: number) => PlayerInfo | null): PlayerName[] {
  const out: PlayerName[] = [];
  for (let i = 0; i < len; i++) {
    const p = at(i);
    if (p) out.push({ id: p.id(), name: p.name() ?? '' });
  }
  return out;
}

/**
 * The Welcome's area of interest, or null without one. A cell size that is
 * not a positive finite number, or no grid, means whole-shard snapshots.
 */
function aoiSettings(w: Welcome): AoiSettings | null {
  const cellSize = w.cellSize();
  if (!(cellSize > 0 && Number.isFinite(cellSize)) || w.gridColumns() === 0) return null;
  const viewRadius = w.viewRadius();
  return {
    cellSize,
    gridColumns: w.gridColumns(),
    viewRadius: Number.isFinite(viewRadius) && viewRadius > 0 ? viewRadius : 2 * cellSize,
    viewGraceMs: w.viewGraceMs(),
  };
}

function snapshotMsg(s: Snapshot): SnapshotMsg {
  const b = bounds(s.bounds());
  return {
    kind: 'snapshot',
    shardId: s.shardId(),
    tick: Number(s.tick()),
    serverTimeMs: Number(s.serverTimeMs()),
    tickHz: s.tickHz(),
    bounds: b,
    cell: s.cell(),
    playerCount: s.playersLength(),
    readPlayers(out: PlayerColumns): void {
      copyEntries(s.playersLength(), (i, into) => s.players(i, into), b, out);
    },
  };
}

function body(msg: ServerMessage): ServerMsg {
  switch (msg.bodyType()) {
    case ServerBody.Welcome: {
      const w = msg.body(new Welcome()) as Welcome;
      return {
        kind: 'welcome',
        playerId: w.playerId(),
        shardId: w.shardId(),
        tickHz: w.tickHz(),
        bounds: bounds(w.bounds()),
        speed: w.speed(),
        resumeTicket: (w.resumeTicketArray() ?? new Uint8Array()).slice(),
        serverTimeMs: Number(w.serverTimeMs()),
        name: w.name() ?? '',
        x: w.x(),
        y: w.y(),
        resumed: w.resumed(),
        aoi: aoiSettings(w),
      };
    }
    case ServerBody.Snapshot:
      return snapshotMsg(msg.body(new Snapshot()) as Snapshot);
    case ServerBody.ChatMessage: {
      const c = msg.body(new ChatMessage()) as ChatMessage;
      const serverTimeMs = Number(c.serverTimeMs());
      return { kind: 'chat', fromId: c.fromId(), name: c.name() ?? '', text: c.text() ?? '', shardId: c.shardId(), serverTimeMs };
    }
    case ServerBody.Presence: {
      const p = msg.body(new Presence()) as Presence;
      const left = Array.from(p.leftArray() ?? []);
      return { kind: 'presence', shardId: p.shardId(), joined: infos(p.joinedLength(), (i) => p.joined(i)), left };
    }
    case ServerBody.Roster: {
      const r = msg.body(new Roster()) as Roster;
      return { kind: 'roster', players: infos(r.playersLength(), (i) => r.players(i)) };
    }
    case ServerBody.Busy: {
      const b = msg.body(new Busy()) as Busy;
      return { kind: 'busy', reason: b.reason() ?? '', retryAfterMs: b.retryAfterMs() };
    }
    case ServerBody.Error: {
      const e = msg.body(new WireError()) as WireError;
      return { kind: 'error', code: e.code(), message: e.message() ?? '' };
    }
    case ServerBody.Pong: {
      const p = msg.body(new Pong()) as Pong;
      return { kind: 'pong', clientTimeMs: p.clientTimeMs(), serverTimeMs: Number(p.serverTimeMs()) };
    }
    case ServerBody.Move: {
      const m = msg.body(new Move()) as Move;
      return { kind: 'move', resumeTicket: (m.resumeTicketArray() ?? new Uint8Array()).slice(), reason: m.reason() ?? '' };
    }
    case ServerBody.Names: {
      const n = msg.body(new Names()) as Names;
      return { kind: 'names', players: infos(n.playersLength(), (i) => n.players(i)) };
    }
    case ServerBody.PlaceStatus: {
      const p = msg.body(new PlaceStatus()) as PlaceStatus;
      return { kind: 'place-status', players: p.players(), shards: p.shards() };
    }
    default:
      throw new UnknownUnionError(msg.bodyType());
  }
}

/**
 * Verifies `bytes` as a ServerMessage and returns it as a domain value, or why
 * it was refused (over the size limit, malformed, an unknown or empty body, a
 * view frame whose runs do not add up to its players). A message with no
 * body but a frame header is a view frame (see view-frame.ts). Never throws
 * and never reads outside `bytes`. A snapshot's or view frame's players stay
 * in `bytes` until `readPlayers` copies them, so keep `bytes` unchanged until
 * then.
 */
export function decodeServer(bytes: Uint8Array): Decoded {
  if (bytes.length > MAX_SERVER_MESSAGE_BYTES) return { ok: false, error: `frame of ${bytes.length} bytes is over the limit` };
  try {
    verifyRoot(bytes, SERVER_MESSAGE, SERVER_LIMITS);
    const root = ServerMessage.getRootAsServerMessage(new flatbuffers.ByteBuffer(bytes));
    if (root.bodyType() === ServerBody.NONE) {
      const header = root.frame();
      return header ? decodeView(root, header) : { ok: false, error: 'server message without a body' };
    }
    return { ok: true, msg: body(root) };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

// ------------------------------------------------------------------ encoding

function finish(b: flatbuffers.Builder, kind: ClientBody, bodyOffset: flatbuffers.Offset): Uint8Array {
  b.finish(ClientMessage.createClientMessage(b, kind, bodyOffset));
  return b.asUint8Array().slice();
}

/**
 * A Hello with `name` (1..24 characters), to resume a ticket from Welcome or
 * Move, and to sign in an access token (a JWT of at most
 * MAX_ACCESS_TOKEN_BYTES; guests send none).
 */
export function encodeHello(name: string, resumeTicket?: Uint8Array | null, accessToken?: string | null, version = PROTOCOL_VERSION): Uint8Array {
  const b = new flatbuffers.Builder(128 + (accessToken?.length ?? 0));
  const nameOffset = b.createString(name);
  const token = accessToken ? b.createString(accessToken) : 0;
  const ticket = resumeTicket?.length ? Hello.createResumeTicketVector(b, resumeTicket) : 0;
  return finish(b, ClientBody.Hello, Hello.createHello(b, version, nameOffset, token, ticket));
}

/** An Input: the direction to walk in, (0, 0) to stand still; `seq` is the client's own count. */
export function encodeInput(seq: number, dirX: number, dirY: number): Uint8Array {
  const b = new flatbuffers.Builder(64);
  return finish(b, ClientBody.Input, Input.createInput(b, seq >>> 0, dirX, dirY));
}

/** A chat line (the server refuses over MAX_CHAT_CHARS). */
export function encodeChat(text: string): Uint8Array {
  const b = new flatbuffers.Builder(64 + text.length * 3);
  const textOffset = b.createString(text);
  return finish(b, ClientBody.ChatSend, ChatSend.createChatSend(b, textOffset));
}

/** A Ping carrying the client's clock (ms); the Pong echoes it. */
export function encodePing(clientTimeMs: number): Uint8Array {
  const b = new flatbuffers.Builder(32);
  return finish(b, ClientBody.Ping, Ping.createPing(b, clientTimeMs));
}

/**
 * A NamesRequest for `ids` (at most MAX_NAMES_REQUEST_IDS; the server closes
 * a socket that sends more, and counts each request against the input rate).
 */
export function encodeNamesRequest(ids: ArrayLike<number>): Uint8Array {
  const n = Math.min(ids.length, MAX_NAMES_REQUEST_IDS);
  const b = new flatbuffers.Builder(32 + 4 * n);
  NamesRequest.startIdsVector(b, n);
  for (let i = n - 1; i >= 0; i--) b.addInt32((ids[i] as number) | 0);
  const vector = b.endVector();
  return finish(b, ClientBody.NamesRequest, NamesRequest.createNamesRequest(b, vector));
}

/**
 * A display name as the server accepts it: trimmed, 1 to MAX_NAME_CHARS
 * characters, no control characters; null otherwise.
 */
export function validName(raw: string): string | null {
  const name = raw.trim();
  const chars = [...name].length;
  // eslint-disable-next-line no-control-regex
  if (chars === 0 || chars > MAX_NAME_CHARS || /[\u0000-\u001f\u007f-\u009f]/.test(name)) return null;
  return name;
}
