// The WebGPU renderer: one render pass per frame with two draws, the floor
// (one full-screen triangle) and every player (ONE instanced draw from the one
// instance buffer). Per frame the CPU fills the instance mirror in place, makes
// one writeBuffer for the instances and one for the view uniform, and submits
// one command buffer. The only objects a frame makes are the ones WebGPU hands
// out per frame (texture view, encoder, pass, command buffer); the pass
// descriptor and the submit list are reused.

import type { Camera } from './camera.js';
import { VIEW_FLOATS } from './camera.js';
import bodiesWgsl from './bodies.wgsl?raw';
import floorWgsl from './floor.wgsl?raw';
import { hueIndex } from './hue.js';
import { INSTANCE_BYTES, INSTANCE_FLOATS, InstanceBuffer } from './instances.js';
import viewWgsl from './view.wgsl?raw';

/** Players in one frame, in columns; [0, count) is drawn. */
export interface DrawList {
  readonly count: number;
  /** Index of player `id` in [0, count), or -1; O(1). */
  indexOf(id: number): number;
  readonly ids: Uint32Array;
  readonly x: Float32Array;
  readonly y: Float32Array;
  readonly heading: Float32Array;
  readonly flags: Uint8Array;
}

/** What one frame cost and issued. */
export interface FrameDraws {
  /** Draw calls in the frame's pass (floor + bodies). */
  drawCalls: number;
  /** Draw calls that drew players: 1 whenever there are any. */
  bodyDrawCalls: number;
  /** Player instances drawn. */
  instances: number;
}

/** Body radius, world units (never drawn smaller than MIN_BODY_PX CSS pixels). */
export const BODY_RADIUS = 9;
const MIN_BODY_PX = 3;
/** Style bits of an instance (see bodies.wgsl); the hue index (render/hue.ts) sits above them. */
const STYLE_MOVING = 1;
const STYLE_LOCAL = 2;
const STYLE_HUE_SHIFT = 2;

/** Pipelines and buffers of one device. */
export class Renderer {
  readonly instances: InstanceBuffer;
  private readonly floor: GPURenderPipeline;
  private readonly bodies: GPURenderPipeline;
  private readonly viewBuffer: GPUBuffer;
  private readonly bindGroup: GPUBindGroup;
  private readonly view = new Float32Array(VIEW_FLOATS);
  readonly format: GPUTextureFormat;
  private readonly attachment: GPURenderPassColorAttachment;
  private readonly passDesc: GPURenderPassDescriptor;
  /** The one-element list handed to queue.submit each frame. */
  private readonly submitted: GPUCommandBuffer[] = [];
  /** Stats of the last frame (one object, updated in place). */
  readonly last: FrameDraws = { drawCalls: 0, bodyDrawCalls: 0, instances: 0 };

  constructor(
    readonly device: GPUDevice,
    private readonly context: GPUCanvasContext,
    /** After a device loss: the previous renderer's instance buffer, rebuilt on this device. */
    previous?: InstanceBuffer,
  ) {
    this.format = navigator.gpu.getPreferredCanvasFormat();
    context.configure({
      device,
      format: this.format,
      alphaMode: 'opaque',
      // COPY_SRC lets tests read the frame back.
      usage: GPUTextureUsage.RENDER_ATTACHMENT | GPUTextureUsage.COPY_SRC,
    });
    if (previous) previous.rebuild(device);
    this.instances = previous ?? new InstanceBuffer(device);
    // One pass descriptor for every frame; only the target view changes.
    this.attachment = { view: context.getCurrentTexture().createView(), loadOp: 'clear', storeOp: 'store', clearValue: { r: 0, g: 0, b: 0, a: 1 } };
    this.passDesc = { colorAttachments: [this.attachment] };
    this.viewBuffer = device.createBuffer({ label: 'mino view', size: VIEW_FLOATS * 4, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    const layout = device.createBindGroupLayout({
      entries: [{ binding: 0, visibility: GPUShaderStage.VERTEX | GPUShaderStage.FRAGMENT, buffer: { type: 'uniform' } }],
    });
    this.bindGroup = device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer: this.viewBuffer } }] });
    const pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [layout] });
    this.floor = this.pipeline(pipelineLayout, floorWgsl, 'floor', []);
    this.bodies = this.pipeline(pipelineLayout, bodiesWgsl, 'body', [
      { arrayStride: INSTANCE_BYTES, stepMode: 'instance', attributes: [{ shaderLocation: 0, offset: 0, format: 'float32x4' }] },
    ]);
  }

  private pipeline(layout: GPUPipelineLayout, source: string, name: string, buffers: GPUVertexBufferLayout[]): GPURenderPipeline {
    const module = this.device.createShaderModule({ label: `mino ${name}`, code: viewWgsl + source });
    const blend: GPUBlendState = {
      color: { srcFactor: 'one', dstFactor: 'one-minus-src-alpha' },
      alpha: { srcFactor: 'one', dstFactor: 'one-minus-src-alpha' },
    };
    return this.device.createRenderPipeline({
      label: `mino ${name}`,
      layout,
      vertex: { module, entryPoint: `vs_${name}`, buffers },
      fragment: { module, entryPoint: `fs_${name}`, targets: [{ format: this.format, blend }] },
      primitive: { topology: 'triangle-list' },
    });
  }

  /**
   * Fills the instance mirror from `players` (the local player `ownId` last,
   * so it is drawn on top; each other player in its own hue) and returns how
   * many instances it wrote.
   */
  private fill(players: DrawList, ownId: number): number {
    const n = players.count;
    this.instances.reserve(n);
    const d = this.instances.data;
    let w = 0;
    const own = players.indexOf(ownId);
    for (let i = 0; i < n; i++) {
      if (i === own) continue;
      const o = w * INSTANCE_FLOATS;
      d[o] = players.x[i] as number;
      d[o + 1] = players.y[i] as number;
      d[o + 2] = players.heading[i] as number;
      d[o + 3] = ((players.flags[i] as number) & STYLE_MOVING) | (hueIndex(players.ids[i] as number) << STYLE_HUE_SHIFT);
      w++;
    }
    if (own >= 0) {
      const o = w * INSTANCE_FLOATS;
      d[o] = players.x[own] as number;
      d[o + 1] = players.y[own] as number;
      d[o + 2] = players.heading[own] as number;
      d[o + 3] = ((players.flags[own] as number) & STYLE_MOVING) | STYLE_LOCAL;
      w++;
    }
    return w;
  }

  /** Draws one frame of `players` seen through `camera` into the canvas. */
  draw(players: DrawList, ownId: number, camera: Camera): FrameDraws {
    const count = this.fill(players, ownId);
    this.instances.upload(count);
    camera.writeView(this.view, Math.max(BODY_RADIUS, MIN_BODY_PX / camera.zoom));
    this.device.queue.writeBuffer(this.viewBuffer, 0, this.view);
    const encoder = this.device.createCommandEncoder();
    this.attachment.view = this.context.getCurrentTexture().createView();
    const pass = encoder.beginRenderPass(this.passDesc);
    pass.setBindGroup(0, this.bindGroup);
    pass.setPipeline(this.floor);
    pass.draw(3);
    let draws = 1;
    if (count > 0) {
      pass.setPipeline(this.bodies);
      pass.setVertexBuffer(0, this.instances.buffer, 0, count * INSTANCE_BYTES);
      pass.draw(6, count);
      draws++;
    }
    pass.end();
    this.submitted[0] = encoder.finish();
    this.device.queue.submit(this.submitted);
    this.last.drawCalls = draws;
    this.last.bodyDrawCalls = count > 0 ? 1 : 0;
    this.last.instances = count;
    return this.last;
  }

  /** Frees this device's buffers (the device itself belongs to the caller). */
  destroy(): void {
    this.instances.destroy();
    this.viewBuffer.destroy();
  }
}
