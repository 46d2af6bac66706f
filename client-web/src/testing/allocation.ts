// Measures what code that runs every animation frame allocates: V8's young
// generation, where every JavaScript object, array, string or closure is born,
// watched over thousands of calls after a warm-up, with no garbage collection
// in between (one would hide what was allocated; it fails the measurement).
//
// The warm-up lets the code run optimized, as it does in a page after its
// first seconds: unoptimized code boxes the fractional numbers it passes
// around (16 bytes each), which says nothing about the code. Optimized code
// still boxes a number returned by a call it did not inline (16 bytes, e.g.
// FrameStats.fps() for the HUD), so each frame may add that much, plus the
// measurement's own noise (under a byte a frame): a frame that made one
// object, array, string or closure every time (24 bytes and up) exceeds it.

import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
// Optimize on the main thread, so that code marked hot during the warm-up is
// optimized before the measurement rather than at some point during it. Set
// here it may come too late (the compiler's thread exists from the start):
// vite.config.ts gives the test processes the same flag on their command line.
v8.setFlagsFromString('--no-concurrent-recompilation');
const gc = vm.runInNewContext('gc') as () => void;

/** Frames run before measuring. */
export const WARM_FRAMES = 20_000;
/** Frames measured. */
export const MEASURED_FRAMES = 5_000;
/** Most a steady frame may add to the young generation on average, bytes (see the module comment). */
export const FRAME_BUDGET_BYTES = 20;

/** Bytes in V8's young generation now. */
function youngBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_used_size ?? Number.NaN;
}

/** Rounds of MEASURED_FRAMES measured; the least counts. */
const ROUNDS = 3;

/**
 * Calls `frame` (one frame) WARM_FRAMES times, then MEASURED_FRAMES times
 * while watching the young generation, in up to ROUNDS rounds; resolves to
 * the least bytes per frame a round allocated. The least, because the JIT only
 * ever adds to what the code allocates (a function deoptimized and not yet
 * optimized again boxes numbers for a while), while an allocation of the code
 * shows in every round. A round in which a garbage collection ran does not
 * count (its clean-up would hide what was allocated); it fails if all did.
 */
export async function bytesPerFrame(frame: () => void): Promise<number> {
  for (let f = 0; f < WARM_FRAMES; f++) frame();
  let least = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS && least >= FRAME_BUDGET_BYTES; round++) {
    let collections = 0;
    const observer = new PerformanceObserver((list) => (collections += list.getEntries().length));
    gc();
    observer.observe({ entryTypes: ['gc'] });
    const before = youngBytes();
    for (let f = 0; f < MEASURED_FRAMES; f++) frame();
    const grown = youngBytes() - before;
    await new Promise((r) => setTimeout(r, 20)); // gc entries arrive asynchronously
    observer.disconnect();
    if (!collections) least = Math.min(least, grown / MEASURED_FRAMES);
  }
  if (least === Number.POSITIVE_INFINITY) throw new Error('every measurement was cut by a garbage collection');
  return least;
}
