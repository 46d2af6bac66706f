// How the console writes numbers: durations, milliseconds, rates,
// positions, drain progress. Pure.

/** "12 s", "4 min 12 s", "2 h 05 min", "3 d 4 h". */
export function formatUptime(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ${s % 60} s`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h} h ${String(min % 60).padStart(2, '0')} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** "0.4 ms", "12 ms", "1.3 s"; "–" for none. */
export function formatMs(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '–';
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 10) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(1)} ms`;
}

/** Ticks a second against the configured rate: "19.9 / 20". */
export function formatRate(ticksPerS: number, tickHz: number): string {
  return `${ticksPerS.toFixed(1)} / ${tickHz}`;
}

/** True when a shard runs fewer ticks than 90 % of its rate (late or stalled). */
export function ticksBehind(ticksPerS: number, tickHz: number): boolean {
  return tickHz > 0 && ticksPerS < 0.9 * tickHz;
}

/** A world position, rounded: "(120, 345)"; "–" when unknown. */
export function formatPosition(x: number | null, y: number | null): string {
  if (x === null || y === null) return '–';
  return `(${Math.round(x)}, ${Math.round(y)})`;
}

/** A drain's progress: the share moved (0 to 1) and its text. */
export function drainProgress(drain: { readonly from: number; readonly left: number }): { readonly done: number; readonly text: string } {
  const moved = Math.max(0, drain.from - drain.left);
  const done = drain.from > 0 ? Math.min(1, moved / drain.from) : 1;
  return { done, text: `moved ${moved} of ${drain.from}, ${drain.left} left` };
}

/** Players against the cap: "250 / 5,000". */
export function formatPlayers(players: number, max: number): string {
  return `${players.toLocaleString('en-US')} / ${max.toLocaleString('en-US')}`;
}
