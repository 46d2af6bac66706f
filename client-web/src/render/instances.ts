// The one instance buffer every player is drawn from: 4 floats per player
// (x, y in world units, heading in radians, style), in a GPU vertex buffer and
// a Float32Array mirror that is filled in place each frame and uploaded with one
// writeBuffer. Both are allocated once and replaced only to grow, by doubling,
// before a frame would overflow them.

/** Floats per instance: x, y, heading, style. */
export const INSTANCE_FLOATS = 4;
/** Bytes per instance. */
export const INSTANCE_BYTES = INSTANCE_FLOATS * 4;

/** The part of GPUDevice the buffer needs (a fake one in tests). */
export interface BufferDevice {
  createBuffer(desc: GPUBufferDescriptor): GPUBuffer;
  readonly queue: { writeBuffer(buffer: GPUBuffer, offset: number, data: BufferSource, dataOffset?: number, size?: number): void };
}

/** A growable instance buffer; see the module comment. */
export class InstanceBuffer {
  private buf: GPUBuffer;
  private cap: number;
  /** CPU mirror; valid for [0, capacity * INSTANCE_FLOATS). Replaced only when growing. */
  data: Float32Array<ArrayBuffer>;
  /** GPU buffers created so far (1 + number of growths). */
  allocations = 0;

  constructor(
    private device: BufferDevice,
    initialCapacity = 1024,
  ) {
    this.cap = Math.max(1, initialCapacity);
    this.data = new Float32Array(this.cap * INSTANCE_FLOATS);
    this.buf = this.create();
  }

  /** Instances the buffer holds. */
  get capacity(): number {
    return this.cap;
  }

  /** The GPU buffer to bind as the instance vertex buffer. */
  get buffer(): GPUBuffer {
    return this.buf;
  }

  private create(): GPUBuffer {
    this.allocations++;
    return this.device.createBuffer({
      label: 'mino players',
      size: this.cap * INSTANCE_BYTES,
      usage: GPUBufferUsage.VERTEX | GPUBufferUsage.COPY_DST,
    });
  }

  /** Makes room for `count` instances, doubling as often as needed; true when the buffers were replaced. */
  reserve(count: number): boolean {
    if (count <= this.cap) return false;
    let cap = this.cap;
    while (cap < count) cap *= 2;
    this.cap = cap;
    const data = new Float32Array(cap * INSTANCE_FLOATS);
    data.set(this.data);
    this.data = data;
    this.buf.destroy();
    this.buf = this.create();
    return true;
  }

  /** Uploads the first `count` instances of [`data`] in one write. */
  upload(count: number): void {
    if (count > 0) this.device.queue.writeBuffer(this.buf, 0, this.data, 0, count * INSTANCE_FLOATS);
  }

  /** After a device loss: the same capacity on the new device (the mirror is kept). */
  rebuild(device: BufferDevice): void {
    this.device = device;
    this.buf = this.create();
  }

  /** Frees the GPU buffer. */
  destroy(): void {
    this.buf.destroy();
  }
}
