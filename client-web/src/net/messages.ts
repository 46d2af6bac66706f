// The server's messages as the client sees them, once verified and decoded
// (protocol.ts decodes them; held.ts applies the view frames): plain data,
// and the cells the view frames keep current as read-on-demand player
// columns, free of FlatBuffers, the DOM and timers.
// Types only: every module of the client may name them without importing
// the decoders.

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
 * Column storage that a cell's players are copied into: index i of every array
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
 * Area of interest as the Welcome describes it: the view frames carry the
 * grid's cells near the player (without it, each shard is one cell).
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
  /**
   * The Welcome's view_radius as sent, world units (viewRadius is it when
   * positive): implied cells (protocol 7) are read with the stencil of it
   * over cellSize, which must be the server's (net/stencil.ts).
   */
  readonly wireViewRadius: number;
  /** A player that left every cell held is taken off the screen within this, ms (the Welcome's view grace). */
  readonly viewGraceMs: number;
}

/** The server admitted the player. */
export interface WelcomeMsg {
  readonly kind: 'welcome';
  readonly playerId: number;
  readonly shardId: number;
  /** Tick rate, Hz: a view frame's tick T is T * 1000 / tickHz ms since the Unix epoch. */
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
  /** Area of interest, or null when each shard is one cell (cell_size 0). */
  readonly aoi: AoiSettings | null;
  /** A player that left every cell held is taken off the screen within this, ms (with or without area of interest). */
  readonly viewGraceMs: number;
  /** The Hello's capabilities the server granted (bits of the schema's Capability). */
  readonly capabilities: number;
  /**
   * A held cell sent nothing for this long is dropped as if forgotten, ms; 0:
   * held until forgotten (net/held). Set for a session whose frames may be lost.
   */
  readonly cellExpiryMs: number;
}

/**
 * One cell of one shard as the page holds it after a view frame (net/held.ts's
 * HeldCell): complete for its (shard, cell), so a player of that shard
 * missing from it has left the cell. Players are read on demand.
 */
export interface CellState {
  /** The shard whose players these are. */
  readonly shard: number;
  /** 1 + row * gridColumns + column (1: a whole shard, without area of interest). */
  readonly cell: number;
  /** The tick (low 32 bits) of the section that last changed it. */
  readonly tick: number;
  readonly playerCount: number;
  /** Copies the players (world units over `bounds`, the Welcome's) into `out[0..playerCount)`. */
  readPlayers(out: PlayerColumns, bounds: Bounds): void;
}

/**
 * A view frame (protocol 8, `ServerMessage.view`): sections of a shard's
 * cells at one of its ticks, each cell's items (full forms, deltas,
 * forgets, supplements) and its implied cells (net/view.ts), in
 * `bytes[start, end)`, not yet verified (net/held.ts verifies
 * and applies it). Keep `bytes` unchanged until it is applied.
 */
export interface ViewMsg {
  readonly kind: 'view';
  readonly bytes: Uint8Array;
  readonly start: number;
  readonly end: number;
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

/** A player of a Roster: id, display name and the shard it is on (null: not said, an older server). */
export interface RosterEntry extends PlayerName {
  readonly shard: number | null;
}

/** Every present player with its shard, sent once after Welcome. */
export interface RosterMsg {
  readonly kind: 'roster';
  readonly players: readonly RosterEntry[];
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
