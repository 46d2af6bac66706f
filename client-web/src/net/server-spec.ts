// The shape of every server message for the verifier (verify.ts), mirroring
// schema/mino.fbs: each field by its vtable offset (4 + 2 x field index), with
// its size. The fixture tests (real frames from the Rust encoders) and the
// truncation tests hold it to the schema.

import { ServerBody } from '../generated/mino/wire.js';
import type { TableSpec, VerifyLimits } from './verify.js';

const BOUNDS = { kind: 'struct', size: 16, align: 4 } as const;
const PLAYER_INFO: TableSpec = {
  name: 'PlayerInfo',
  fields: [
    { vo: 4, kind: 'scalar', size: 4 },
    { vo: 6, kind: 'string' },
  ],
};
const SERVER_MEMBERS: ReadonlyMap<number, TableSpec> = new Map<number, TableSpec>([
  [
    ServerBody.Welcome,
    {
      name: 'Welcome',
      fields: [
        { vo: 4, kind: 'scalar', size: 4 },
        { vo: 6, kind: 'scalar', size: 4 },
        { vo: 8, kind: 'scalar', size: 2 },
        { vo: 10, ...BOUNDS },
        { vo: 12, kind: 'scalar', size: 4 },
        { vo: 14, kind: 'vector', elemSize: 1, align: 1 },
        { vo: 16, kind: 'scalar', size: 8 },
        { vo: 18, kind: 'string' },
        { vo: 20, kind: 'scalar', size: 4 },
        { vo: 22, kind: 'scalar', size: 4 },
        { vo: 24, kind: 'scalar', size: 1 },
      ],
    },
  ],
  [
    ServerBody.Snapshot,
    {
      name: 'Snapshot',
      fields: [
        { vo: 4, kind: 'scalar', size: 4 },
        { vo: 6, kind: 'scalar', size: 8 },
        { vo: 8, kind: 'scalar', size: 8 },
        { vo: 10, kind: 'scalar', size: 2 },
        { vo: 12, ...BOUNDS },
        { vo: 14, kind: 'scalar', size: 4 },
        { vo: 16, kind: 'vector', elemSize: 10, align: 2 },
      ],
    },
  ],
  [
    ServerBody.ChatMessage,
    {
      name: 'ChatMessage',
      fields: [
        { vo: 4, kind: 'scalar', size: 4 },
        { vo: 6, kind: 'string' },
        { vo: 8, kind: 'string' },
        { vo: 10, kind: 'scalar', size: 4 },
        { vo: 12, kind: 'scalar', size: 8 },
      ],
    },
  ],
  [
    ServerBody.Presence,
    {
      name: 'Presence',
      fields: [
        { vo: 4, kind: 'scalar', size: 4 },
        { vo: 6, kind: 'tables', table: PLAYER_INFO },
        { vo: 8, kind: 'vector', elemSize: 4, align: 4 },
      ],
    },
  ],
  [ServerBody.Roster, { name: 'Roster', fields: [{ vo: 4, kind: 'tables', table: PLAYER_INFO }] }],
  [
    ServerBody.Busy,
    {
      name: 'Busy',
      fields: [
        { vo: 4, kind: 'string' },
        { vo: 6, kind: 'scalar', size: 4 },
      ],
    },
  ],
  [
    ServerBody.Error,
    {
      name: 'Error',
      fields: [
        { vo: 4, kind: 'scalar', size: 2 },
        { vo: 6, kind: 'string' },
      ],
    },
  ],
  [
    ServerBody.Pong,
    {
      name: 'Pong',
      fields: [
        { vo: 4, kind: 'scalar', size: 8 },
        { vo: 6, kind: 'scalar', size: 8 },
      ],
    },
  ],
  [
    ServerBody.Move,
    {
      name: 'Move',
      fields: [
        { vo: 4, kind: 'vector', elemSize: 1, align: 1 },
        { vo: 6, kind: 'string' },
      ],
    },
  ],
]);
/** The root of every server frame: ServerMessage { body: ServerBody }. */
export const SERVER_MESSAGE: TableSpec = {
  name: 'ServerMessage',
  fields: [{ vo: 6, kind: 'union', typeVo: 4, members: SERVER_MEMBERS }],
};
/** Same limits as mino_protocol::limits::server_verifier. */
export const SERVER_LIMITS: VerifyLimits = { maxDepth: 8, maxTables: 200_000 };
