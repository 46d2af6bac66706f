// A cell frame (area of interest): a ServerMessage with a 16-byte CellHeader
// and the cell's players and no body, one per occupied cell of a shard a tick.
// It carries nothing the Welcome gave (bounds, tick rate, the grid), so its
// players are dequantized over the Welcome's bounds when they are read.

import type { ServerMessage } from '../generated/mino/wire.js';
import { copyEntries } from './entries.js';
import type { Bounds, CellMsg, PlayerColumns } from './protocol.js';

/** A verified cell frame; see [`CellMsg`]. Players stay in the frame's bytes until read. */
export class CellFrame implements CellMsg {
  readonly kind = 'cell';
  readonly shardId: number;
  readonly cell: number;
  readonly tick: number;
  readonly timeMs: number;
  readonly playerCount: number;

  /** `root` must be verified and have a `cell` header (the caller checked). */
  constructor(
    private readonly root: ServerMessage,
    header: { shardId(): number; cell(): number; tick(): number; timeMs(): number },
  ) {
    this.shardId = header.shardId();
    this.cell = header.cell();
    this.tick = header.tick();
    this.timeMs = header.timeMs();
    this.playerCount = root.playersLength();
  }

  readPlayers(out: PlayerColumns, bounds: Bounds): void {
    copyEntries(this.playerCount, (i, into) => this.root.players(i, into), bounds, out);
  }
}
