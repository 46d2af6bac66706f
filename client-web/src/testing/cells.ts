// The cells of view frames, and Welcomes, built in memory for the
// area-of-interest tests: the same CellMsg and WelcomeMsg shapes that
// protocol.ts decodes from the wire, without the bytes. Positions are exact
// (no 16-bit quantization). For the bytes themselves see view-frames.ts.

import type { AoiSettings, Bounds, CellMsg, PlayerColumns, WelcomeMsg } from '../net/protocol.js';
import type { TestPlayer } from './snapshots.js';

/** The area-of-interest world of the tests: 2,000 units a side. */
export const AOI_WORLD: Bounds = { minX: 0, minY: 0, maxX: 2000, maxY: 2000 };

/** Server time of tick 0 in the tests, ms since the epoch (its low 32 bits are not small). */
export const AOI_EPOCH = 1_764_450_000_000;

/** 125-unit cells over AOI_WORLD, a view radius of 250 and a grace of 500 ms. */
export const AOI: AoiSettings = { cellSize: 125, gridColumns: 16, viewRadius: 250, viewGraceMs: 500 };

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
  };
}

/**
 * Cell `cell` as the view frame of `shardId` at `tick` (20 Hz from AOI_EPOCH
 * unless `timeMs` says) carries it, listing `players` (none: an emptied cell).
 */
export function viewCell(shardId: number, cell: number, tick: number, players: TestPlayer[], timeMs = AOI_EPOCH + tick * 50): CellMsg {
  return {
    kind: 'cell',
    shardId,
    cell,
    tick: tick >>> 0,
    timeMs: timeMs % 2 ** 32,
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
