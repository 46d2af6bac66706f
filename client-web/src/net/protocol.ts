// mino's wire protocol at the client's edge: every server frame is verified
// (see verify.ts) and turned into a domain value here, once; client messages
// are encoded here with the code flatc generated from schema/mino.fbs. Free of
// DOM and timers, so bots in the end-to-end tests speak through it too.

import * as flatbuffers from 'flatbuffers';
import {
  Busy,
  Capability,
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
  Resync,
  Roster,
  ServerBody,
  ServerMessage,
  ServerVerifierLimit,
  Welcome,
  type PlayerInfo,
} from '../generated/mino/wire.js';
import { SERVER_MESSAGE } from '../generated/mino/wire-layout.js';
import type { AoiSettings, Bounds, Decoded, PlayerName, RosterEntry, ServerMsg } from './messages.js';
import { UnknownUnionError, verifyRoot, type VerifyLimits } from './verify.js';

export { FLAG_MOVING, INPUT_SEQ_SHIFT, dequantize, headingRadians } from './entries.js';
export type {
  AoiSettings,
  Bounds,
  BusyMsg,
  CellState,
  ChatMsg,
  Decoded,
  ErrorMsg,
  MoveMsg,
  NamesMsg,
  PlaceStatusMsg,
  PlayerColumns,
  PlayerName,
  PongMsg,
  PresenceMsg,
  RosterEntry,
  RosterMsg,
  ServerMsg,
  ViewMsg,
  WelcomeMsg,
} from './messages.js';

// The protocol's numbers are constants of schema/mino.fbs (generated, shared
// with the Rust crate's mino_protocol::limits and PROTOCOL_VERSION).

/** The protocol version every Hello carries. */
export const PROTOCOL_VERSION: number = ProtocolVersion.Current;
/**
 * What the page takes (Hello.capabilities): view frames with deltas
 * (net/held.ts applies them), and over WebTransport deltas in datagrams
 * (held by the lossy rule; a server grants it to a WebTransport session
 * only, and says so in the Welcome's capabilities).
 */
export const CAPABILITIES: number = Capability.Deltas | Capability.DatagramDeltas;
/** The Welcome's capability bit that says the view frames' deltas come as datagrams, held by the lossy rule (net/held.ts's `Delivery`). */
export const DATAGRAM_DELTAS: number = Capability.DatagramDeltas;
/** Longest display name, characters (Unicode scalar values). */
export const MAX_NAME_CHARS: number = Limit.MaxNameChars;
/** Longest chat line, characters. */
export const MAX_CHAT_CHARS: number = Limit.MaxChatChars;
/** Largest server frame the client reads, bytes. */
export const MAX_SERVER_MESSAGE_BYTES: number = Limit.MaxServerMessageBytes;
/** Longest access token a Hello may carry, bytes. */
export const MAX_ACCESS_TOKEN_BYTES: number = Limit.MaxAccessTokenBytes;
/** Most player ids one NamesRequest may carry. */
export const MAX_NAMES_REQUEST_IDS: number = Limit.MaxNamesRequestIds;
/** What the verifier allows in a server frame (mino_protocol::limits::server_verifier). */
const SERVER_LIMITS: VerifyLimits = { maxDepth: ServerVerifierLimit.MaxDepth, maxTables: ServerVerifierLimit.MaxTables };


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
 * not a positive finite number, or no grid, means each shard is one cell.
 */
function aoiSettings(w: Welcome): AoiSettings | null {
  const cellSize = w.cellSize();
  if (!(cellSize > 0 && Number.isFinite(cellSize)) || w.gridColumns() === 0) return null;
  const viewRadius = w.viewRadius();
  return {
    cellSize,
    gridColumns: w.gridColumns(),
    viewRadius: Number.isFinite(viewRadius) && viewRadius > 0 ? viewRadius : 2 * cellSize,
    wireViewRadius: viewRadius,
    viewGraceMs: w.viewGraceMs(),
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
        viewGraceMs: w.viewGraceMs(),
        capabilities: w.capabilities(),
        cellExpiryMs: w.cellExpiryMs(),
      };
    }
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
      const players: RosterEntry[] = [];
      for (let i = 0; i < r.playersLength(); i++) {
        const p = r.players(i);
        if (p) players.push({ id: p.id(), name: p.name() ?? '', shard: p.shardId() });
      }
      return { kind: 'roster', players };
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
    case ServerBody.Snapshot:
    case ServerBody.CellBundle:
      // Between shards only (Redis): a page is sent view frames.
      throw new Error(`a ${ServerBody[msg.bodyType()]} is never sent to a page`);
    default:
      throw new UnknownUnionError(msg.bodyType());
  }
}

/**
 * Verifies `bytes` as a ServerMessage and returns it as a domain value, or why
 * it was refused (over the size limit, malformed, an unknown body, no body and
 * no view, a body a client is never sent). A message with no body but a
 * `view` is a view frame: its bytes stay in `bytes`, located, for net/held.ts
 * to verify and apply (so keep `bytes` unchanged until then). Never throws
 * and never reads outside `bytes`.
 */
export function decodeServer(bytes: Uint8Array): Decoded {
  if (bytes.length > MAX_SERVER_MESSAGE_BYTES) return { ok: false, error: `frame of ${bytes.length} bytes is over the limit` };
  try {
    verifyRoot(bytes, SERVER_MESSAGE, SERVER_LIMITS);
    const root = ServerMessage.getRootAsServerMessage(new flatbuffers.ByteBuffer(bytes));
    if (root.bodyType() === ServerBody.NONE) {
      const view = root.viewArray();
      if (!view || view.length === 0) return { ok: false, error: 'server message without a body' };
      const start = view.byteOffset - bytes.byteOffset;
      return { ok: true, msg: { kind: 'view', bytes, start, end: start + view.length } };
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
 * MAX_ACCESS_TOKEN_BYTES; guests send none), taking `capabilities` (bits of
 * the schema's Capability; the page's own by default: deltas).
 */
export function encodeHello(name: string, resumeTicket?: Uint8Array | null, accessToken?: string | null, version = PROTOCOL_VERSION, capabilities = CAPABILITIES): Uint8Array {
  const b = new flatbuffers.Builder(128 + (accessToken?.length ?? 0));
  const nameOffset = b.createString(name);
  const token = accessToken ? b.createString(accessToken) : 0;
  const ticket = resumeTicket?.length ? Hello.createResumeTicketVector(b, resumeTicket) : 0;
  return finish(b, ClientBody.Hello, Hello.createHello(b, version, nameOffset, token, ticket, capabilities));
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

/**
 * A Resync: the page granted datagram deltas missed a change of a cell, and
 * asks for every cell of its view whole again (counted against the input
 * budget; a server that did not grant datagram deltas ignores it).
 */
export function encodeResync(): Uint8Array {
  const b = new flatbuffers.Builder(32);
  return finish(b, ClientBody.Resync, Resync.createResync(b));
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
 * The explicit bidirectional formatting characters and marks (UAX #9: ALM,
 * LRM, RLM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI), and control
 * characters: never in a name.
 */
// eslint-disable-next-line no-control-regex
const NAME_FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/**
 * Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt,
 * Unicode 16), as ranges of code points: characters drawn as nothing
 * (zero-width spaces and joiners, fillers, variation selectors, tags).
 */
const DEFAULT_IGNORABLE: readonly (readonly [number, number])[] = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x061c, 0x061c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x206f],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xfff0, 0xfff8],
  [0x1bca0, 0x1bca3],
  [0x1d173, 0x1d17a],
  [0xe0000, 0xe0fff],
];

const WHITE_SPACE = /^\p{White_Space}$/u;

/** U+2800 BRAILLE PATTERN BLANK: not default ignorable, but drawn as nothing in every font. */
const BRAILLE_BLANK = 0x2800;

/** True for a character drawn as something: not white space (Unicode's White_Space, Rust's char::is_whitespace), default ignorable, nor the braille blank. */
function visible(ch: string): boolean {
  const cp = ch.codePointAt(0) ?? 0;
  return !WHITE_SPACE.test(ch) && cp !== BRAILLE_BLANK && !DEFAULT_IGNORABLE.some(([lo, hi]) => cp >= lo && cp <= hi);
}

/** Most combining marks kept on one character in a chat line (schema's MAX_COMBINING_RUN). */
export const MAX_COMBINING_RUN = 4;

/** The bidirectional embeddings, overrides and isolates (UAX #9: LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI). */
const BIDI_EMBEDDING: readonly [number, number][] = [
  [0x202a, 0x202e],
  [0x2066, 0x2069],
];

/** A mark (Unicode's general category M: nonspacing, spacing and enclosing marks), what "zalgo" text stacks, in any script. */
const MARK = /^\p{M}$/u;

/** True when `ch`'s code point is in one of `ranges` (inclusive). */
function within(ch: string, ranges: readonly [number, number][]): boolean {
  const cp = ch.codePointAt(0) ?? 0;
  return ranges.some(([lo, hi]) => cp >= lo && cp <= hi);
}

/** C0 and C1 control characters (Rust's char::is_control). */
function control(ch: string): boolean {
  const cp = ch.codePointAt(0) ?? 0;
  return cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f);
}

/** Unicode's White_Space at both ends, as Rust's str::trim. */
function trimWhiteSpace(text: string): string {
  return text.replace(/^\p{White_Space}+|\p{White_Space}+$/gu, '');
}

/**
 * A chat line as the server relays it (schema/src/client.rs, chat_line, whose
 * unit test has the same cases): trimmed, 1 to MAX_CHAT_CHARS characters;
 * control characters made spaces, bidirectional embeddings, overrides and
 * isolates dropped, runs of marks (general category M) cut to MAX_COMBINING_RUN;
 * something visible left; null otherwise (the server would close the socket
 * for it).
 */
export function chatLine(raw: string): string | null {
  const chars = [...trimWhiteSpace(raw)];
  if (chars.length === 0 || chars.length > MAX_CHAT_CHARS) return null;
  let out = '';
  let run = 0;
  for (const ch of chars) {
    if (within(ch, BIDI_EMBEDDING)) continue;
    run = MARK.test(ch) ? run + 1 : 0;
    if (run > MAX_COMBINING_RUN) continue;
    out += control(ch) ? ' ' : ch;
  }
  const line = trimWhiteSpace(out);
  return [...line].some(visible) ? line : null;
}

/**
 * A display name as the server accepts it (schema/src/client.rs,
 * validate_name): trimmed, 1 to MAX_NAME_CHARS characters, no control or
 * bidirectional formatting characters (they would reorder the text drawn
 * after the name), something visible; null otherwise.
 */
export function validName(raw: string): string | null {
  // Unicode's White_Space at both ends, as Rust's str::trim (String.trim
  // also takes U+FEFF and leaves U+0085).
  const name = trimWhiteSpace(raw);
  const chars = [...name].length;
  if (chars === 0 || chars > MAX_NAME_CHARS || NAME_FORBIDDEN.test(name) || ![...name].some(visible)) return null;
  return name;
}
