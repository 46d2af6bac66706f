// The page's graphics over time: the canvas context, the current device and
// its renderer, and recovery when the device is lost at run time (driver reset,
// GPU process crash): a new adapter and device, reconfigured canvas, rebuilt
// pipelines and buffers — within about a second — while the game goes on.

import { acquireGpu, type GpuHandle } from './gpu.js';
import { Renderer } from './renderer.js';

/** Tries after a loss before giving up, and the wait between them, ms. */
const RECOVERY_TRIES = 5;
const RECOVERY_WAIT_MS = 200;

/** Owner of the device and renderer, with device-loss recovery. */
export class Graphics {
  /** The renderer, or null while recovering. */
  renderer: Renderer | null;
  /** Devices used so far (1 + recoveries). */
  generation = 1;
  /** Adapter info of the current device. */
  info: GpuHandle['info'];
  /** Time the last recovery took, ms (NaN if none). */
  lastRecoveryMs = Number.NaN;
  private disposed = false;

  constructor(
    private readonly context: GPUCanvasContext,
    gpu: GpuHandle,
    /** Called once if the graphics cannot be brought back, with a reason for the player. */
    private readonly onFatal: (reason: string) => void,
  ) {
    this.info = gpu.info;
    this.renderer = new Renderer(gpu.device, context);
    this.watch(gpu.device);
  }

  private watch(device: GPUDevice): void {
    void device.lost.then((lost) => {
      if (this.disposed || this.renderer?.device !== device) return;
      console.warn(`mino: WebGPU device lost (${lost.reason}): ${lost.message}; recovering`);
      void this.recover();
    });
  }

  private async recover(): Promise<void> {
    const started = performance.now();
    const instances = this.renderer?.instances;
    this.renderer = null;
    for (let attempt = 0; attempt < RECOVERY_TRIES && !this.disposed; attempt++) {
      const got = await acquireGpu(navigator.gpu, window.isSecureContext);
      if (this.disposed) {
        if (got.ok) got.gpu.device.destroy();
        return;
      }
      if (got.ok) {
        try {
          this.renderer = new Renderer(got.gpu.device, this.context, instances);
        } catch (e) {
          console.warn('mino: rebuilding the renderer failed', e);
          got.gpu.device.destroy();
          continue;
        }
        this.info = got.gpu.info;
        this.generation++;
        this.lastRecoveryMs = performance.now() - started;
        this.watch(got.gpu.device);
        return;
      }
      await new Promise((r) => setTimeout(r, RECOVERY_WAIT_MS));
    }
    if (!this.disposed) this.onFatal('The graphics device was lost and could not be brought back. Reload the page.');
  }

  /** Frees everything; no recovery follows. */
  dispose(): void {
    this.disposed = true;
    const r = this.renderer;
    this.renderer = null;
    r?.destroy();
    r?.device.destroy();
  }
}
