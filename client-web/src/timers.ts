// The clock and timers the client's timer-driven parts use, passed in so tests
// drive them with a fake clock (testing/fake-timers.ts).

/** A monotonic clock (ms) and one-shot timers. */
export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The browser's (or node's) clock and timers. */
export const realTimers: Timers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};
