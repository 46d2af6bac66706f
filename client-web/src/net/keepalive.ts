// The keep-alive: a Ping every `intervalMs` (2 s) while connected, which also
// measures the round trip shown in the HUD (from the Pong's echoed time).

import type { Timers } from '../timers.js';
import { encodePing } from './protocol.js';

/** Periodic Ping sender and round-trip estimate. */
export class KeepAlive {
  private timer: unknown = null;
  /** Latest round trip, ms (NaN before the first Pong). */
  rttMs = Number.NaN;
  /** Smoothed round trip, ms (NaN before the first Pong). */
  smoothedRttMs = Number.NaN;

  constructor(
    private readonly send: (bytes: Uint8Array) => boolean,
    private readonly timers: Timers,
    private readonly intervalMs = 2000,
  ) {}

  /** Starts pinging now and every interval (call on Welcome). */
  start(): void {
    this.stop();
    const tick = (): void => {
      this.send(encodePing(this.timers.now()));
      this.timer = this.timers.setTimeout(tick, this.intervalMs);
    };
    tick();
  }

  /** Stops pinging (call when the socket closes). */
  stop(): void {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Takes a Pong that echoes `clientTimeMs`, received at local `nowMs`. */
  onPong(clientTimeMs: number, nowMs: number): void {
    const rtt = nowMs - clientTimeMs;
    if (!(rtt >= 0) || rtt > 60_000) return; // not one of ours (an older page's clock)
    this.rttMs = rtt;
    this.smoothedRttMs = Number.isNaN(this.smoothedRttMs) ? rtt : this.smoothedRttMs * 0.75 + rtt * 0.25;
  }
}
