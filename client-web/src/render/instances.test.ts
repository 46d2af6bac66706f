// Growth of the one instance buffer, against a device double that records
// every buffer it creates and every upload.
import { beforeAll, describe, expect, it } from 'vitest';
import { INSTANCE_FLOATS, InstanceBuffer, type BufferDevice } from './instances.js';

interface FakeBuffer {
  size: number;
  destroyed: boolean;
  destroy(): void;
}

class FakeDevice implements BufferDevice {
  readonly created: FakeBuffer[] = [];
  readonly writes: { buffer: FakeBuffer; elements: number }[] = [];
  readonly queue = {
    writeBuffer: (buffer: GPUBuffer, _offset: number, _data: BufferSource, _dataOffset?: number, size?: number): void => {
      this.writes.push({ buffer: buffer as unknown as FakeBuffer, elements: size ?? 0 });
    },
  };
  createBuffer(desc: GPUBufferDescriptor): GPUBuffer {
    const b: FakeBuffer = {
      size: desc.size,
      destroyed: false,
      destroy() {
        this.destroyed = true;
      },
    };
    this.created.push(b);
    return b as unknown as GPUBuffer;
  }
}

beforeAll(() => {
  // The WebGPU usage flags (node has no WebGPU).
  Object.assign(globalThis, { GPUBufferUsage: { VERTEX: 0x20, COPY_DST: 0x8 } });
});

describe('instance buffer', () => {
  it('is allocated once and reused while the players fit', () => {
    const dev = new FakeDevice();
    const ib = new InstanceBuffer(dev, 256);
    const data = ib.data;
    for (let frame = 0; frame < 100; frame++) {
      expect(ib.reserve(1 + (frame % 256))).toBe(false);
      ib.upload(1 + (frame % 256));
    }
    expect(dev.created.length).toBe(1);
    expect(ib.allocations).toBe(1);
    expect(ib.data).toBe(data);
    expect(dev.created[0]?.size).toBe(256 * 16);
  });

  it('doubles before it would overflow, keeping the written instances', () => {
    const dev = new FakeDevice();
    const ib = new InstanceBuffer(dev, 4);
    ib.data.set([1, 2, 3, 4], 0);
    expect(ib.reserve(5)).toBe(true);
    expect(ib.capacity).toBe(8);
    expect(Array.from(ib.data.subarray(0, 4))).toEqual([1, 2, 3, 4]);
    expect(dev.created.map((b) => b.size)).toEqual([64, 128]);
    expect(dev.created[0]?.destroyed).toBe(true);
    expect(ib.buffer).toBe(dev.created[1]);
  });

  it('grows by as many doublings as needed, in one step', () => {
    const dev = new FakeDevice();
    const ib = new InstanceBuffer(dev, 16);
    ib.reserve(1000);
    expect(ib.capacity).toBe(1024);
    expect(dev.created.length).toBe(2);
    expect(ib.data.length).toBe(1024 * INSTANCE_FLOATS);
    // And from 1,000 players to 1,001 nothing is reallocated.
    expect(ib.reserve(1001)).toBe(false);
    expect(dev.created.length).toBe(2);
  });

  it('uploads exactly the used instances in one write', () => {
    const dev = new FakeDevice();
    const ib = new InstanceBuffer(dev, 64);
    ib.upload(10);
    ib.upload(0);
    expect(dev.writes).toEqual([{ buffer: dev.created[0], elements: 10 * INSTANCE_FLOATS }]);
  });

  it('rebuilds at the same capacity on a new device after a loss', () => {
    const a = new FakeDevice();
    const ib = new InstanceBuffer(a, 8);
    ib.reserve(20);
    const b = new FakeDevice();
    ib.rebuild(b);
    expect(b.created.map((x) => x.size)).toEqual([32 * 16]);
    ib.upload(3);
    expect(b.writes.length).toBe(1);
    expect(a.writes.length).toBe(0);
  });
});
