// A manually advanced clock with timers, for tests of timer-driven code.

import type { Timers } from '../timers.js';

/** Manually advanced clock and timers. */
export class FakeTimers implements Timers {
  t = 0;
  private queue: { at: number; fn: () => void; id: number }[] = [];
  private ids = 0;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.ids;
    this.queue.push({ at: this.t + ms, fn, id });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.queue = this.queue.filter((q) => q.id !== h);
  }
  /** Runs every timer due within the next `ms`, in order, moving the clock. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.queue.sort((a, b) => a.at - b.at);
      const next = this.queue[0];
      if (!next || next.at > end) break;
      this.queue.shift();
      this.t = next.at;
      next.fn();
    }
    this.t = end;
  }
}
