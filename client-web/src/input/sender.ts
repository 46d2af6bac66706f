// Sends the direction to the server only when it changes, never more often
// than once per `minIntervalMs` (the server allows 30 inputs a second): a change
// inside that interval is held and the latest one goes out when it ends. Each
// Input carries the next sequence number; the server echoes its low 7 bits in
// the player's own snapshot entry, and 0 there means "none applied yet", so
// numbers whose low 7 bits are 0 are skipped. Every Input sent is reported
// (for the prediction of the own player).

import { encodeInput } from '../net/protocol.js';
import type { Timers } from '../timers.js';
import { STILL, sameDirection, type Direction } from './direction.js';

/** Change-only, rate-limited sender of Input messages. */
export class DirectionSender {
  private sent: Direction = STILL;
  private wanted: Direction = STILL;
  private lastSendMs = Number.NEGATIVE_INFINITY;
  private timer: unknown = null;
  private seq = 0;
  /** Inputs sent so far. */
  count = 0;

  constructor(
    /** Sends one encoded message; false when there is no live connection. */
    private readonly send: (bytes: Uint8Array) => boolean,
    private readonly timers: Timers,
    private readonly minIntervalMs = 50,
    /** Told of every Input sent: its sequence number and direction, at local `nowMs`. */
    private readonly onSent?: (seq: number, dir: Direction, nowMs: number) => void,
  ) {}

  /** The direction the player wants now. */
  set(dir: Direction): void {
    this.wanted = dir;
    this.flush();
  }

  /** The direction last sent. */
  get current(): Direction {
    return this.sent;
  }

  /** After a (re)connect the server knows nothing: the wanted direction is sent again if it is not STILL. */
  resync(): void {
    this.sent = STILL;
    this.flush();
  }

  private flush(): void {
    if (this.timer !== null || sameDirection(this.wanted, this.sent)) return;
    const wait = this.lastSendMs + this.minIntervalMs - this.timers.now();
    if (wait > 0) {
      this.timer = this.timers.setTimeout(() => {
        this.timer = null;
        this.flush();
      }, wait);
      return;
    }
    const dir = this.wanted;
    const seq = nextSeq(this.seq);
    const now = this.timers.now();
    if (this.send(encodeInput(seq, dir.x, dir.y))) {
      this.seq = seq;
      this.sent = dir;
      this.count++;
      this.onSent?.(seq, dir, now);
    }
    this.lastSendMs = now;
  }

  /** Cancels a pending send. */
  dispose(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }
}

/** The sequence number after `seq`: one more, skipping those whose low 7 bits are 0 (the server's "none applied"), within 32 bits. */
export function nextSeq(seq: number): number {
  let next = (seq + 1) >>> 0;
  if ((next & 0x7f) === 0) next = (next + 1) >>> 0;
  return next;
}
