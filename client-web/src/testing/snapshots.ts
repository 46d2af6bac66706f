// Snapshots built in memory for the interpolation tests: the same SnapshotMsg
// shape that protocol.ts decodes from the wire, without the bytes.

import type { Bounds, PlayerColumns, SnapshotMsg } from '../net/protocol.js';

/** One player of a test snapshot: id, position (world units), heading (radians), flags. */
export interface TestPlayer {
  id: number;
  x: number;
  y: number;
  heading?: number;
  flags?: number;
}

/** The default world of the server contract, (0,0)-(1000,1000). */
export const WORLD: Bounds = { minX: 0, minY: 0, maxX: 1000, maxY: 1000 };

/** A SnapshotMsg of `players` from `shardId` at `tick`, taken at server time `serverTimeMs`. */
export function snapshotOf(shardId: number, tick: number, serverTimeMs: number, players: TestPlayer[], tickHz = 20): SnapshotMsg {
  return {
    kind: 'snapshot',
    shardId,
    tick,
    serverTimeMs,
    tickHz,
    bounds: WORLD,
    cell: 0,
    playerCount: players.length,
    readPlayers(out: PlayerColumns): void {
      players.forEach((p, i) => {
        out.ids[i] = p.id;
        out.x[i] = p.x;
        out.y[i] = p.y;
        out.heading[i] = p.heading ?? 0;
        out.flags[i] = p.flags ?? 0;
      });
    },
  };
}
