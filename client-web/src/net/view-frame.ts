// A view frame (area of interest): a ServerMessage with a 12-byte FrameHeader
// (shard, tick, time), one 6-byte CellRun a cell and the cells' players back
// to back, and no body; the server sends one per shard whose cells the socket
// sees, each tick. Run i's players are the `count` entries of `players` after
// those of the runs before it, so the counts must add up to the players; a
// run with none is an emptied cell (its players left it), and a cell of more
// than 65,535 players of one shard comes as consecutive runs, read here as
// one cell. A frame carries nothing the Welcome gave (bounds, tick rate, the
// grid), so its players are dequantized over the Welcome's bounds when they
// are read; until then they stay in the frame's bytes.

import { CellRun, type FrameHeader, type ServerMessage } from '../generated/mino/wire.js';
import { copyEntries } from './entries.js';
import type { Bounds, CellMsg, Decoded, PlayerColumns } from './protocol.js';

/**
 * One cell of a verified view frame; see [`CellMsg`]. Its players are
 * `players[first, first + playerCount)` of the frame's, read from the frame's
 * bytes only when asked.
 */
class ViewCell implements CellMsg {
  readonly kind = 'cell';

  constructor(
    private readonly root: ServerMessage,
    readonly shardId: number,
    readonly cell: number,
    readonly tick: number,
    readonly timeMs: number,
    /** Index of the cell's first player in the frame's `players`. */
    private readonly first: number,
    readonly playerCount: number,
  ) {}

  readPlayers(out: PlayerColumns, bounds: Bounds): void {
    const root = this.root;
    const first = this.first;
    copyEntries(this.playerCount, (i, into) => root.players(first + i, into), bounds, out);
  }
}

/** The accessor every run is read through (decoding is synchronous, so one is enough). */
const run = new CellRun();

/** Run `i` of a verified frame that has runs, through the shared accessor. */
function runAt(root: ServerMessage, i: number): CellRun {
  return root.runs(i, run) as CellRun;
}

/** The cell of a run: cell_lo | cell_hi << 16, unsigned. */
function cellOf(r: CellRun): number {
  return r.cellLo() + r.cellHi() * 0x10000;
}

/**
 * The view frame `root` is: `root` must be verified (so every run and player
 * lies within its bytes) and have a `frame` header and no body (the caller
 * checked). Refused, with why, when it lacks its runs or its players, or
 * when the runs' counts do not add up to its players.
 */
export function decodeView(root: ServerMessage, header: FrameHeader): Decoded {
  if (root.runs(0, run) === null || root.players(0) === null) return { ok: false, error: 'view frame without runs or players' };
  const players = root.playersLength();
  let counted = 0;
  for (let i = 0; i < root.runsLength(); i++) counted += runAt(root, i).count();
  if (counted !== players) return { ok: false, error: `view frame runs count ${counted} players but it carries ${players}` };
  const shardId = header.shardId();
  const tick = header.tick();
  const timeMs = header.timeMs();
  return { ok: true, msg: { kind: 'view', shardId, tick, timeMs, cells: cellsOf(root, shardId, tick, timeMs) } };
}

/**
 * The cells of a frame whose runs add up, in order. Consecutive runs of the
 * same cell (a cell of more than 65,535 players of one shard) become one
 * cell, its players contiguous in the frame, so each cell is complete for
 * its (shard, cell) as the interpolation takes it.
 */
function cellsOf(root: ServerMessage, shardId: number, tick: number, timeMs: number): CellMsg[] {
  const cells: CellMsg[] = [];
  const runs = root.runsLength();
  let first = 0;
  for (let i = 0; i < runs; ) {
    const cell = cellOf(runAt(root, i));
    let count = 0;
    for (; i < runs && cellOf(runAt(root, i)) === cell; i++) count += run.count();
    cells.push(new ViewCell(root, shardId, cell, tick, timeMs, first, count));
    first += count;
  }
  return cells;
}
