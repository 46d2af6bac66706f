// Sends the direction to the server only when it changes, never more often
// than once per `minIntervalMs` (the server allows 30 inputs a second): a change
// inside that interval is held and the latest one goes out when it ends.

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
    if (this.send(encodeInput(++this.seq, dir.x, dir.y))) {
      this.sent = dir;
      this.count++;
    }
    this.lastSendMs = this.timers.now();
  }

  /** Cancels a pending send. */
  dispose(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }
}
