// What the page says about its state: a small badge over the world while
// connecting, reconnecting or waiting out "server busy", and a panel for the
// states the page cannot leave by itself (no WebGPU, session replaced).

import type { ConnectionState } from '../net/connection.js';

/** The status badge and the stop panel. */
export class Status {
  private countdown: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly badge: HTMLElement,
    private readonly panel: HTMLElement,
  ) {}

  /** Shows a connection state. */
  connection(state: ConnectionState): void {
    this.stopCountdown();
    switch (state.kind) {
      case 'live':
        this.badge.hidden = true;
        return;
      case 'connecting':
        this.showBadge('connecting…', 'connecting');
        return;
      case 'reconnecting':
        this.showBadge('reconnecting…', 'reconnecting');
        return;
      case 'busy':
        this.busy(state.reason, state.inMs);
        return;
      case 'stopped':
        this.badge.hidden = true;
        this.stop(state.reason);
        return;
    }
  }

  private busy(reason: string, inMs: number): void {
    const until = performance.now() + inMs;
    const tick = (): void => {
      const left = Math.max(0, Math.ceil((until - performance.now()) / 1000));
      this.showBadge(`server busy (${reason}) · retrying in ${left} s`, 'busy');
    };
    tick();
    this.countdown = setInterval(tick, 250);
  }

  private showBadge(text: string, kind: string): void {
    this.badge.textContent = text;
    this.badge.dataset.kind = kind;
    this.badge.hidden = false;
  }

  private stopCountdown(): void {
    if (this.countdown !== null) clearInterval(this.countdown);
    this.countdown = null;
  }

  /** Shows a reason the page stopped, as text, over everything. */
  stop(reason: string): void {
    this.panel.textContent = reason;
    this.panel.hidden = false;
  }

  /** Hides the stop panel (after picking a new name). */
  clearStop(): void {
    this.panel.hidden = true;
  }
}
