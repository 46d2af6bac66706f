// automatically generated from schema/mino.fbs by schema/tests/codegen.rs
// (flatc's reflection schema); do not modify. Regenerate: README.md, "Protocol".
//
// The layout of every table of the schema as net/verify.ts walks it: each field
// by its vtable offset `vo` (4 + 2 x field id), with what it holds and its size
// and alignment in bytes. Deprecated fields are left out.

/** One field of a table, by its vtable offset `vo` (4 + 2 * field id). */
export type FieldLayout =
  | { readonly name: string; readonly vo: number; readonly kind: 'scalar'; readonly size: 1 | 2 | 4 | 8 }
  | { readonly name: string; readonly vo: number; readonly kind: 'struct'; readonly size: number; readonly align: number }
  | { readonly name: string; readonly vo: number; readonly kind: 'string' }
  /** A vector of scalars or structs stored inline, `elemSize` bytes each. */
  | { readonly name: string; readonly vo: number; readonly kind: 'vector'; readonly elemSize: number; readonly align: number }
  | { readonly name: string; readonly vo: number; readonly kind: 'table'; readonly table: TableLayout }
  /** A vector of offsets to tables. */
  | { readonly name: string; readonly vo: number; readonly kind: 'tables'; readonly table: TableLayout }
  | {
      readonly name: string;
      readonly vo: number;
      readonly kind: 'union';
      /** vtable offset of the union's type field (a ubyte). */
      readonly typeVo: number;
      /** Member table of each type value (0, NONE, is absent). */
      readonly members: ReadonlyMap<number, TableLayout>;
    };

/** The fields of one table that a reader may touch. */
export interface TableLayout {
  readonly name: string;
  readonly fields: readonly FieldLayout[];
}

export const BUSY: TableLayout = {
  name: 'Busy',
  fields: [
    { name: 'reason', vo: 4, kind: 'string' },
    { name: 'retry_after_ms', vo: 6, kind: 'scalar', size: 4 },
  ],
};

export const CELL_BUNDLE: TableLayout = {
  name: 'CellBundle',
  fields: [
    { name: 'shard_id', vo: 4, kind: 'scalar', size: 4 },
    { name: 'region', vo: 6, kind: 'scalar', size: 4 },
    { name: 'tick', vo: 8, kind: 'scalar', size: 8 },
    { name: 'server_time_ms', vo: 10, kind: 'scalar', size: 8 },
    { name: 'step', vo: 20, kind: 'scalar', size: 8 },
    { name: 'cell_items', vo: 26, kind: 'vector', elemSize: 1, align: 1 },
  ],
};

export const CHAT_MESSAGE: TableLayout = {
  name: 'ChatMessage',
  fields: [
    { name: 'from_id', vo: 4, kind: 'scalar', size: 4 },
    { name: 'name', vo: 6, kind: 'string' },
    { name: 'text', vo: 8, kind: 'string' },
    { name: 'shard_id', vo: 10, kind: 'scalar', size: 4 },
    { name: 'server_time_ms', vo: 12, kind: 'scalar', size: 8 },
  ],
};

export const CHAT_SEND: TableLayout = {
  name: 'ChatSend',
  fields: [
    { name: 'text', vo: 4, kind: 'string' },
  ],
};

export const HELLO: TableLayout = {
  name: 'Hello',
  fields: [
    { name: 'protocol_version', vo: 4, kind: 'scalar', size: 2 },
    { name: 'name', vo: 6, kind: 'string' },
    { name: 'access_token', vo: 8, kind: 'string' },
    { name: 'resume_ticket', vo: 10, kind: 'vector', elemSize: 1, align: 1 },
    { name: 'capabilities', vo: 12, kind: 'scalar', size: 4 },
  ],
};

export const INPUT: TableLayout = {
  name: 'Input',
  fields: [
    { name: 'seq', vo: 4, kind: 'scalar', size: 4 },
    { name: 'dir_x', vo: 6, kind: 'scalar', size: 4 },
    { name: 'dir_y', vo: 8, kind: 'scalar', size: 4 },
  ],
};

export const PING: TableLayout = {
  name: 'Ping',
  fields: [
    { name: 'client_time_ms', vo: 4, kind: 'scalar', size: 8 },
  ],
};

export const NAMES_REQUEST: TableLayout = {
  name: 'NamesRequest',
  fields: [
    { name: 'ids', vo: 4, kind: 'vector', elemSize: 4, align: 4 },
  ],
};

export const RESYNC: TableLayout = {
  name: 'Resync',
  fields: [
  ],
};

export const CLIENT_MESSAGE: TableLayout = {
  name: 'ClientMessage',
  fields: [
    { name: 'body', vo: 6, kind: 'union', typeVo: 4, members: new Map<number, TableLayout>([[1, HELLO], [2, INPUT], [3, CHAT_SEND], [4, PING], [5, NAMES_REQUEST], [6, RESYNC]]) },
  ],
};

export const ERROR: TableLayout = {
  name: 'Error',
  fields: [
    { name: 'code', vo: 4, kind: 'scalar', size: 2 },
    { name: 'message', vo: 6, kind: 'string' },
  ],
};

export const MOVE: TableLayout = {
  name: 'Move',
  fields: [
    { name: 'resume_ticket', vo: 4, kind: 'vector', elemSize: 1, align: 1 },
    { name: 'reason', vo: 6, kind: 'string' },
  ],
};

export const PLAYER_INFO: TableLayout = {
  name: 'PlayerInfo',
  fields: [
    { name: 'id', vo: 4, kind: 'scalar', size: 4 },
    { name: 'name', vo: 6, kind: 'string' },
    { name: 'shard_id', vo: 8, kind: 'scalar', size: 4 },
  ],
};

export const NAMES: TableLayout = {
  name: 'Names',
  fields: [
    { name: 'players', vo: 4, kind: 'tables', table: PLAYER_INFO },
  ],
};

export const PLACE_STATUS: TableLayout = {
  name: 'PlaceStatus',
  fields: [
    { name: 'players', vo: 4, kind: 'scalar', size: 4 },
    { name: 'shards', vo: 6, kind: 'scalar', size: 4 },
  ],
};

export const PONG: TableLayout = {
  name: 'Pong',
  fields: [
    { name: 'client_time_ms', vo: 4, kind: 'scalar', size: 8 },
    { name: 'server_time_ms', vo: 6, kind: 'scalar', size: 8 },
  ],
};

export const PRESENCE: TableLayout = {
  name: 'Presence',
  fields: [
    { name: 'shard_id', vo: 4, kind: 'scalar', size: 4 },
    { name: 'joined', vo: 6, kind: 'tables', table: PLAYER_INFO },
    { name: 'left', vo: 8, kind: 'vector', elemSize: 4, align: 4 },
    { name: 'seq', vo: 10, kind: 'scalar', size: 8 },
  ],
};

export const ROSTER: TableLayout = {
  name: 'Roster',
  fields: [
    { name: 'players', vo: 4, kind: 'tables', table: PLAYER_INFO },
  ],
};

export const WELCOME: TableLayout = {
  name: 'Welcome',
  fields: [
    { name: 'player_id', vo: 4, kind: 'scalar', size: 4 },
    { name: 'shard_id', vo: 6, kind: 'scalar', size: 4 },
    { name: 'tick_hz', vo: 8, kind: 'scalar', size: 2 },
    { name: 'bounds', vo: 10, kind: 'struct', size: 16, align: 4 },
    { name: 'speed', vo: 12, kind: 'scalar', size: 4 },
    { name: 'resume_ticket', vo: 14, kind: 'vector', elemSize: 1, align: 1 },
    { name: 'server_time_ms', vo: 16, kind: 'scalar', size: 8 },
    { name: 'name', vo: 18, kind: 'string' },
    { name: 'x', vo: 20, kind: 'scalar', size: 4 },
    { name: 'y', vo: 22, kind: 'scalar', size: 4 },
    { name: 'resumed', vo: 24, kind: 'scalar', size: 1 },
    { name: 'cell_size', vo: 26, kind: 'scalar', size: 4 },
    { name: 'grid_columns', vo: 28, kind: 'scalar', size: 4 },
    { name: 'view_radius', vo: 30, kind: 'scalar', size: 4 },
    { name: 'view_grace_ms', vo: 32, kind: 'scalar', size: 4 },
    { name: 'capabilities', vo: 34, kind: 'scalar', size: 4 },
    { name: 'cell_expiry_ms', vo: 36, kind: 'scalar', size: 4 },
  ],
};

export const SNAPSHOT: TableLayout = {
  name: 'Snapshot',
  fields: [
    { name: 'shard_id', vo: 4, kind: 'scalar', size: 4 },
    { name: 'tick', vo: 6, kind: 'scalar', size: 8 },
    { name: 'server_time_ms', vo: 8, kind: 'scalar', size: 8 },
    { name: 'tick_hz', vo: 10, kind: 'scalar', size: 2 },
    { name: 'bounds', vo: 12, kind: 'struct', size: 16, align: 4 },
    { name: 'cell', vo: 14, kind: 'scalar', size: 4 },
    { name: 'players', vo: 16, kind: 'vector', elemSize: 10, align: 2 },
  ],
};

export const SERVER_MESSAGE: TableLayout = {
  name: 'ServerMessage',
  fields: [
    { name: 'view', vo: 4, kind: 'vector', elemSize: 1, align: 1 },
    { name: 'body', vo: 10, kind: 'union', typeVo: 8, members: new Map<number, TableLayout>([[1, WELCOME], [2, SNAPSHOT], [3, CHAT_MESSAGE], [4, PRESENCE], [5, ROSTER], [6, BUSY], [7, ERROR], [8, PONG], [9, MOVE], [10, NAMES], [11, PLACE_STATUS], [12, CELL_BUNDLE]]) },
  ],
};
