// The HUD line: ping, players, interpolation delay, frame rate and CPU time per
// frame, refreshed four times a second as text.

/** What the HUD shows. */
export interface HudValues {
  pingMs: number;
  players: number;
  delayMs: number;
  fps: number;
  frameCpuMs: number;
}

const REFRESH_MS = 250;

function ms(v: number): string {
  return Number.isFinite(v) ? `${Math.round(v)} ms` : '–';
}

/** The heads-up display. */
export class Hud {
  private at = Number.NEGATIVE_INFINITY;

  constructor(private readonly el: HTMLElement) {}

  /** Redraws at most every 250 ms. */
  update(v: HudValues, nowMs: number): void {
    if (nowMs - this.at < REFRESH_MS) return;
    this.at = nowMs;
    this.el.textContent =
      `ping ${ms(v.pingMs)} · players ${v.players} · delay ${ms(v.delayMs)} · ` +
      `${Math.round(v.fps)} fps · cpu ${Number.isFinite(v.frameCpuMs) ? v.frameCpuMs.toFixed(2) : '–'} ms`;
  }
}
