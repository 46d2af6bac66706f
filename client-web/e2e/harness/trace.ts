// Where the page drew a player, frame by frame: a trace of every animation
// frame the page drew from `startTrace` to `stopTrace`, each sample timed by
// the frame that drew it (`__mino.drawnAtMs()`): the trace's own animation
// frame callback may run before or after the page's, so its own timestamp
// can be a frame off the positions it reads, which on a loaded machine
// (frames of 16 and 50 ms mixed) looks like a jump that was never drawn.

import type { Page } from 'playwright-core';

/** A world point, world units. */
export type Point = [number, number];

/** One drawn frame: when (ms, the page's animation frame clock), where the watched player was drawn and where the page's own player was (null: not drawn). */
export interface TraceSample {
  t: number;
  at: Point | null;
  own: Point | null;
}

/** Starts recording, once per frame the page draws, where player `id` and the page's own player are drawn. */
export async function startTrace(page: Page, id: number): Promise<void> {
  await page.evaluate((watched) => {
    const w = window as unknown as { __trace: { t: number; at: [number, number] | null; own: [number, number] | null }[]; __tracing: boolean };
    w.__trace = [];
    w.__tracing = true;
    const ownId = window.__mino?.stats.ownPlayerId ?? 0;
    const step = (): void => {
      if (!w.__tracing) return;
      const t = window.__mino?.drawnAtMs() ?? null;
      const last = w.__trace[w.__trace.length - 1];
      if (t !== null && t !== last?.t) {
        w.__trace.push({ t, at: window.__mino?.drawnPosition(watched) ?? null, own: window.__mino?.drawnPosition(ownId) ?? null });
      }
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }, id);
}

/** Stops recording and returns the samples. */
export async function stopTrace(page: Page): Promise<TraceSample[]> {
  return page.evaluate(() => {
    const w = window as unknown as { __trace: { t: number; at: [number, number] | null; own: [number, number] | null }[]; __tracing: boolean };
    w.__tracing = false;
    return w.__trace;
  });
}

/** The largest step between two drawn frames beyond a walk, and where it was. */
export interface LargestStep {
  /** World units beyond `speed` x the frames' interval x 1.3 + 1 (0: none; never negative). */
  over: number;
  /** The frames around it (time ms, position), for the failure's message. */
  around: string;
}

/**
 * The step of the watched player between two consecutive frames of `trace`
 * (every frame must have it drawn) that goes furthest beyond a walk at
 * `speed` (world units/s) over the frames' interval: at most 30 % fast is a
 * walk (the render clock slews up to 15 % and a player's extra delay 10 %
 * to close errors), plus one unit of rounding.
 */
export function largestStep(trace: TraceSample[], speed: number): LargestStep {
  let over = Number.NEGATIVE_INFINITY;
  let worst = 0;
  for (let i = 1; i < trace.length; i++) {
    const a = trace[i - 1] as TraceSample;
    const b = trace[i] as TraceSample;
    if (!a.at || !b.at) continue;
    const step = Math.hypot(b.at[0] - a.at[0], b.at[1] - a.at[1]) - (speed * ((b.t - a.t) / 1000) * 1.3 + 1);
    if (step > over) {
      over = step;
      worst = i;
    }
  }
  const around = trace
    .slice(Math.max(0, worst - 4), worst + 4)
    .map((f) => `${f.t.toFixed(0)} ms: ${f.at ? f.at.map((v) => v.toFixed(1)).join(',') : '-'}`)
    .join('; ');
  return { over: Math.max(0, over), around };
}
