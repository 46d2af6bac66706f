// What the page says about its state: a small badge over the world while
// connecting, reconnecting (and why: the connection dropped, the server
// restarts, a move to another shard) or waiting out "server busy", a notice
// for a few seconds when something happened the player should know (back as
// a new player after a restart), and a panel for the states the page cannot
// leave by itself (no WebGPU, session replaced, a refused sign-in).

import type { ConnectionState } from '../net/connection.js';
import type { ReconnectReason } from '../net/policy.js';

/** How long a notice stays, ms. */
export const NOTICE_MS = 8000;

/** The badge while reconnecting, by why. */
const RECONNECTING: Readonly<Record<ReconnectReason, string>> = {
  dropped: 'connection lost · reconnecting…',
  restart: 'server restarting · reconnecting…',
  moved: 'moving to another shard · reconnecting…',
  busy: 'server busy · reconnecting…',
  'session-lost': 'reconnecting as a new player…',
};

/** The status badge and the stop panel. */
export class Status {
  private countdown: ReturnType<typeof setInterval> | null = null;
  private noticeTimer: ReturnType<typeof setTimeout> | null = null;

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
        this.showBadge(RECONNECTING[state.why], 'reconnecting');
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

  /** Shows `text` in the badge for NOTICE_MS (a later connection state replaces it). */
  notice(text: string): void {
    this.showBadge(text, 'notice');
    this.noticeTimer = setTimeout(() => {
      this.noticeTimer = null;
      if (this.badge.dataset.kind === 'notice') this.badge.hidden = true;
    }, NOTICE_MS);
  }

  private showBadge(text: string, kind: string): void {
    this.badge.textContent = text;
    this.badge.dataset.kind = kind;
    this.badge.hidden = false;
  }

  private stopCountdown(): void {
    if (this.countdown !== null) clearInterval(this.countdown);
    if (this.noticeTimer !== null) clearTimeout(this.noticeTimer);
    this.countdown = null;
    this.noticeTimer = null;
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
