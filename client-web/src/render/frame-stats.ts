// Frame rate and CPU time per frame over the last 120 frames (about 2 s at
// 60 fps). CPU time is what the page's own frame callback took, from its first
// line to the submit of the GPU work: the figure the HUD and the tests report.

const WINDOW = 120;

/** Rolling frame statistics. */
export class FrameStats {
  private readonly cpu = new Float64Array(WINDOW);
  private readonly at = new Float64Array(WINDOW);
  private n = 0;
  /** Frames recorded so far. */
  frames = 0;

  /** Records a frame that started at `nowMs` and took `cpuMs` of CPU time. */
  record(nowMs: number, cpuMs: number): void {
    const i = this.n % WINDOW;
    this.cpu[i] = cpuMs;
    this.at[i] = nowMs;
    this.n++;
    this.frames++;
  }

  /** When the newest frame recorded started (its animation frame's time, ms), or NaN before one. */
  newestMs(): number {
    return this.n === 0 ? Number.NaN : (this.at[(this.n - 1) % WINDOW] as number);
  }

  /** Frames per second over the window (0 before two frames). */
  fps(): number {
    const k = Math.min(this.n, WINDOW);
    if (k < 2) return 0;
    const newest = this.at[(this.n - 1) % WINDOW] as number;
    const oldest = this.at[(this.n - k) % WINDOW] as number;
    return newest > oldest ? ((k - 1) * 1000) / (newest - oldest) : 0;
  }

  /** Mean CPU time per frame over the window, ms (NaN before the first frame). */
  meanCpuMs(): number {
    const k = Math.min(this.n, WINDOW);
    if (!k) return Number.NaN;
    let sum = 0;
    for (let i = 0; i < k; i++) sum += this.cpu[i] as number;
    return sum / k;
  }

  /** Largest CPU time of one frame over the window, ms. */
  maxCpuMs(): number {
    const k = Math.min(this.n, WINDOW);
    let max = 0;
    for (let i = 0; i < k; i++) max = Math.max(max, this.cpu[i] as number);
    return max;
  }
}
