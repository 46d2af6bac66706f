// How long area of interest waits before it takes a player off the screen,
// and how far behind it draws a player that is updated less often than every
// tick. Every rule scales with the player's own observed update interval: the
// server sends the own and adjacent cells every tick, the rest of the view
// every 2nd, the prefetch ring every 4th, and stretches those periods under a
// crowd (up to 64 ticks), so a fixed grace would blink far players.

/**
 * Longest a player still in view can go unlisted, ms: when it crosses into a
 * neighbouring cell, that cell's frames may come at up to four times its old
 * cell's period (adjacent tiers of the server's budget ladder differ by at
 * most 4x), plus two ticks for the network's jitter.
 */
export function unlistedMs(intervalMs: number, tickMs: number): number {
  return 4 * intervalMs + 2 * tickMs;
}

/**
 * A player that is in no frame received for this long is forgotten, ms: the
 * server's view grace (the Welcome's view_grace_ms) or, for a player updated
 * rarely, [`unlistedMs`].
 */
export function forgetAfterMs(intervalMs: number, tickMs: number, graceMs: number): number {
  return Math.max(graceMs, unlistedMs(intervalMs, tickMs));
}

/**
 * A player missing from a newer frame of its last cell (it left the cell) and
 * from every other frame since is hidden after this, ms: [`unlistedMs`], so a
 * player crossing a cell border is never hidden while its new cell's frame is
 * on its way, and a player who left the place goes within a few of its
 * updates. Never later than it is forgotten.
 */
export function hideAfterMs(intervalMs: number, tickMs: number, graceMs: number): number {
  return Math.min(unlistedMs(intervalMs, tickMs), forgetAfterMs(intervalMs, tickMs, graceMs));
}

/** Most extra interpolation delay a player gets, ms. */
export const MAX_EXTRA_DELAY_MS = 1000;

/**
 * Extra interpolation delay for a player updated every `intervalMs`, ms: the
 * render clock stays about one tick plus its jitter margin behind the newest
 * tick, so a player updated every n ticks is drawn n - 1 ticks further back to
 * keep it between two of its samples (within [0, MAX_EXTRA_DELAY_MS]).
 */
export function extraDelayMs(intervalMs: number, tickMs: number): number {
  return Math.min(MAX_EXTRA_DELAY_MS, Math.max(0, intervalMs - tickMs));
}

/** How fast a player's extra delay moves to a new target, ms per ms (10 %: no visible speed-up). */
export const EXTRA_DELAY_SLEW = 0.1;
