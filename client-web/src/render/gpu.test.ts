// Getting a device: every way of not getting one ends in a reason, in bounded time.
import { describe, expect, it } from 'vitest';
import { acquireGpu, failureMessage } from './gpu.js';

function fakeGpu(requestAdapter: () => Promise<unknown>): GPU {
  return { requestAdapter } as unknown as GPU;
}

function adapterWith(requestDevice: () => Promise<unknown>): unknown {
  return { info: { architecture: 'swiftshader', vendor: 'google', description: '' }, requestDevice };
}

describe('acquireGpu', () => {
  it('reports a missing navigator.gpu, and a page that is not a secure context as the reason', async () => {
    expect(await acquireGpu(undefined, true)).toMatchObject({ ok: false, failure: 'no-webgpu' });
    expect(await acquireGpu(undefined, false)).toMatchObject({ ok: false, failure: 'insecure-context' });
    expect(failureMessage('insecure-context', 'x')).toMatch(/secure pages \(https, or http on localhost\).*has not joined.*Open it over https/s);
  });

  it('reports a null adapter and a rejected adapter request', async () => {
    expect(await acquireGpu(fakeGpu(() => Promise.resolve(null)), true)).toMatchObject({ ok: false, failure: 'no-adapter' });
    expect(await acquireGpu(fakeGpu(() => Promise.reject(new Error('blocked'))), true)).toMatchObject({
      ok: false,
      failure: 'no-adapter',
      detail: 'Error: blocked',
    });
  });

  it('gives up on an adapter request that never settles', async () => {
    const t0 = performance.now();
    const got = await acquireGpu(fakeGpu(() => new Promise(() => undefined)), true, 100);
    expect(got).toMatchObject({ ok: false, failure: 'timeout' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(95);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('reports a failed device and a device request that never settles (destroying a late device)', async () => {
    const failed = await acquireGpu(fakeGpu(() => Promise.resolve(adapterWith(() => Promise.reject(new Error('lost'))))), true);
    expect(failed).toMatchObject({ ok: false, failure: 'no-device' });
    let destroyed = false;
    let deliver: (d: unknown) => void = () => undefined;
    const late = new Promise((r) => (deliver = r));
    const hung = await acquireGpu(fakeGpu(() => Promise.resolve(adapterWith(() => late))), true, 50);
    expect(hung).toMatchObject({ ok: false, failure: 'timeout' });
    deliver({ destroy: () => (destroyed = true) });
    await new Promise((r) => setTimeout(r, 0));
    expect(destroyed).toBe(true);
  });

  it('returns the device with the adapter info', async () => {
    const device = { label: 'd' };
    const got = await acquireGpu(fakeGpu(() => Promise.resolve(adapterWith(() => Promise.resolve(device)))), true);
    expect(got.ok && got.gpu.device).toBe(device);
    expect(got.ok && got.gpu.info.architecture).toBe('swiftshader');
  });

  it('explains each failure in words', () => {
    for (const f of ['insecure-context', 'no-webgpu', 'no-adapter', 'no-device', 'timeout'] as const) {
      expect(failureMessage(f, 'x')).toMatch(/WebGPU.*has not joined/s);
    }
  });
});
