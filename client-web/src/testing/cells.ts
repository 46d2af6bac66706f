// Held cells, and Welcomes, built in memory for the interpolation tests: the
// same CellState and WelcomeMsg shapes that net/held.ts and protocol.ts give
// the page, without the bytes. Positions are exact (no 16-bit
// quantization). For the bytes themselves see delta-frames.ts.

import type { AoiSettings, Bounds, CellState, PlayerColumns, WelcomeMsg } from '../net/protocol.js';

/** One player of a test cell: id, position (world units), heading (radians), flags. */
export interface TestPlayer {
  id: number;
  x: number;
  y: number;
  heading?: number;
  flags?: number;
}

/** The default world of the server contract, (0,0)-(1000,1000). */
export const WORLD: Bounds = { minX: 0, minY: 0, maxX: 1000, maxY: 1000 };

/** The area-of-interest world of the tests: 2,000 units a side. */
export const AOI_WORLD: Bounds = { minX: 0, minY: 0, maxX: 2000, maxY: 2000 };

/** Server time of tick 0 in the tests, ms since the epoch (its low 32 bits are not small). */
export const AOI_EPOCH = 1_764_450_000_000;
/** The tests' tick 0 as the server numbers it at 20 Hz: periods of 50 ms since the epoch. */
export const AOI_TICK0 = AOI_EPOCH / 50;

/** 125-unit cells over AOI_WORLD, a view radius of 250 and a grace of 500 ms. */
export const AOI: AoiSettings = { cellSize: 125, gridColumns: 16, viewRadius: 250, wireViewRadius: 250, viewGraceMs: 500 };

/** The cell of world position (x, y) on the AOI grid (1 + row * columns + column). */
export function cellOf(x: number, y: number, aoi: AoiSettings = AOI): number {
  return 1 + Math.floor(y / aoi.cellSize) * aoi.gridColumns + Math.floor(x / aoi.cellSize);
}

/** A Welcome of player `playerId` on `shardId` with area of interest `aoi`, at server time `serverTimeMs`. */
export function aoiWelcome(playerId: number, shardId = 1, serverTimeMs = AOI_EPOCH, aoi: AoiSettings = AOI, speed = 300): WelcomeMsg {
  return {
    kind: 'welcome',
    playerId,
    shardId,
    tickHz: 20,
    bounds: AOI_WORLD,
    speed,
    resumeTicket: new Uint8Array(16),
    serverTimeMs,
    name: `p${playerId}`,
    x: 0,
    y: 0,
    resumed: false,
    aoi,
    viewGraceMs: aoi.viewGraceMs,
    capabilities: 1,
    cellExpiryMs: 0,
  };
}

/**
 * Cell `cell` of `shard` as held after tick `tick` (counted from
 * AOI_EPOCH at 20 Hz), listing `players` (none: an emptied cell).
 */
export function viewCell(shard: number, cell: number, tick: number, players: TestPlayer[]): CellState {
  return {
    shard,
    cell,
    tick: (AOI_TICK0 + tick) % 2 ** 32,
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
