// View frames encoded with the generated builder, for the decoder's tests:
// the runs go on the wire as given, so a test can make their counts disagree
// with the players, or leave either vector out. Trusts its input; tests only.

import * as flatbuffers from 'flatbuffers';
import { CellRun, FrameHeader, PlayerState, ServerMessage } from '../generated/mino/wire.js';

/** One run as it goes on the wire: a cell (32 bits, split into two halves) and a count of players. */
export interface WireRun {
  readonly cell: number;
  readonly count: number;
}

/** What a test view frame holds. */
export interface ViewFrameSpec {
  readonly shardId?: number;
  readonly tick?: number;
  /** Low 32 bits of ms since the Unix epoch. */
  readonly timeMs?: number;
  /** The runs; null leaves the field out. */
  readonly runs: readonly WireRun[] | null;
  /**
   * The players' ids, all runs back to back; null leaves the field out. Each
   * is at quantized position (id mod 65536, 65535 - id mod 65536), heading
   * id mod 256, flags 0.
   */
  readonly players: readonly number[] | null;
}

/** The bytes of a ServerMessage holding the view frame `spec` (a frame header, runs, players, no body). */
export function encodeViewFrame(spec: ViewFrameSpec): Uint8Array {
  const b = new flatbuffers.Builder(64);
  const players = spec.players ? playersVector(b, spec.players) : 0;
  const runs = spec.runs ? runsVector(b, spec.runs) : 0;
  ServerMessage.startServerMessage(b);
  ServerMessage.addFrame(b, FrameHeader.createFrameHeader(b, spec.shardId ?? 7, spec.tick ?? 40, spec.timeMs ?? 123_456));
  if (runs) ServerMessage.addRuns(b, runs);
  if (players) ServerMessage.addPlayers(b, players);
  b.finish(ServerMessage.endServerMessage(b));
  return b.asUint8Array().slice();
}

function runsVector(b: flatbuffers.Builder, runs: readonly WireRun[]): flatbuffers.Offset {
  ServerMessage.startRunsVector(b, runs.length);
  for (let i = runs.length - 1; i >= 0; i--) {
    const r = runs[i] as WireRun;
    CellRun.createCellRun(b, r.cell & 0xffff, r.cell >>> 16, r.count);
  }
  return b.endVector();
}

function playersVector(b: flatbuffers.Builder, ids: readonly number[]): flatbuffers.Offset {
  ServerMessage.startPlayersVector(b, ids.length);
  for (let i = ids.length - 1; i >= 0; i--) {
    const id = ids[i] as number;
    const q = id % 65536;
    PlayerState.createPlayerState(b, id & 0xffff, id >>> 16, q, 65535 - q, id % 256, 0);
  }
  return b.endVector();
}
