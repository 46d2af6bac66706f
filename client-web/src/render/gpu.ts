// Getting a WebGPU device, or a clear reason why not. Runs before the page
// opens any websocket, so a browser that cannot draw never holds a player slot.
// An adapter or device request that does not settle within the timeout (3 s)
// counts as a failure; a late answer is ignored (and its device destroyed).

/** Why there is no device. */
export type GpuFailure = 'insecure-context' | 'no-webgpu' | 'no-adapter' | 'no-device' | 'timeout';

/** A working device with what the HUD and tests report about it. */
export interface GpuHandle {
  readonly adapter: GPUAdapter;
  readonly device: GPUDevice;
  /** The adapter's architecture, vendor and description (empty strings when hidden). */
  readonly info: { readonly architecture: string; readonly vendor: string; readonly description: string };
}

/** The outcome of [`acquireGpu`]. */
export type GpuResult = { readonly ok: true; readonly gpu: GpuHandle } | { readonly ok: false; readonly failure: GpuFailure; readonly detail: string };

/** How long an adapter or device request may take, ms. */
export const GPU_TIMEOUT_MS = 3000;

const TIMED_OUT = Symbol('timeout');

function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Requests a high-performance adapter and a device from `gpu` (navigator.gpu,
 * possibly undefined) on a page that is a secure context or not
 * (window.isSecureContext: browsers give WebGPU only to those, so a page
 * over plain http on another host than localhost has none, in any browser).
 * Never throws; each step is bounded by `timeoutMs`.
 */
export async function acquireGpu(gpu: GPU | undefined, secureContext: boolean, timeoutMs = GPU_TIMEOUT_MS): Promise<GpuResult> {
  if (!gpu || typeof gpu.requestAdapter !== 'function') {
    if (!secureContext) return { ok: false, failure: 'insecure-context', detail: 'navigator.gpu is missing: not a secure context' };
    return { ok: false, failure: 'no-webgpu', detail: 'navigator.gpu is missing' };
  }
  let adapter: GPUAdapter | null | typeof TIMED_OUT;
  try {
    adapter = await within(gpu.requestAdapter({ powerPreference: 'high-performance' }), timeoutMs);
  } catch (e) {
    return { ok: false, failure: 'no-adapter', detail: String(e) };
  }
  if (adapter === TIMED_OUT) return { ok: false, failure: 'timeout', detail: `requestAdapter did not settle in ${timeoutMs} ms` };
  if (!adapter) return { ok: false, failure: 'no-adapter', detail: 'requestAdapter returned null' };
  const request = adapter.requestDevice();
  let device: GPUDevice | typeof TIMED_OUT;
  try {
    device = await within(request, timeoutMs);
  } catch (e) {
    return { ok: false, failure: 'no-device', detail: String(e) };
  }
  if (device === TIMED_OUT) {
    request.then((d) => d.destroy()).catch(() => undefined);
    return { ok: false, failure: 'timeout', detail: `requestDevice did not settle in ${timeoutMs} ms` };
  }
  const i = adapter.info;
  const info = { architecture: i?.architecture ?? '', vendor: i?.vendor ?? '', description: i?.description ?? '' };
  return { ok: true, gpu: { adapter, device, info } };
}

/** The browsers with WebGPU, named the same in the README and scripts/play.sh (test/browsers.test.ts checks). */
export const WEBGPU_BROWSERS = 'Chrome or Edge 113+, Firefox 141+ or Safari 26+';

/** What to tell the player for each failure (plain text). */
export function failureMessage(failure: GpuFailure, detail: string): string {
  if (failure === 'insecure-context') {
    return `This page came over plain http from another address than localhost, and browsers give WebGPU only to secure pages (https, or http on localhost). mino draws the world with WebGPU, so it cannot run here, and it has not joined the game. Open it over https (deploy/ has nginx with TLS), or at http://localhost. (${detail})`;
  }
  const lead = {
    'no-webgpu': 'This browser has no WebGPU.',
    'no-adapter': 'WebGPU is there, but it found no graphics adapter to use.',
    'no-device': 'The graphics adapter would not give this page a WebGPU device.',
    timeout: 'WebGPU did not answer within 3 seconds.',
  }[failure];
  return `${lead} mino draws the world with WebGPU, so it cannot run here, and it has not joined the game. Try ${WEBGPU_BROWSERS}, with hardware acceleration on. (${detail})`;
}
