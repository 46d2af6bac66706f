// The test hook installed as `window.__mino` (shape: hook.ts). Stats are read
// on demand from the game's own state, so the game keeps no copy of them.
// Test builds only: main.ts installs it when `__MINO_TEST_HOOKS__` is true
// (`npm run build:e2e`, the dev server, Vitest); a production build
// (`npm run build`) contains none of this module.

import type { Game } from '../app.js';
import type { GpuFailure, GpuHandle } from '../render/gpu.js';
import { BODY_RADIUS } from '../render/renderer.js';
import type { MinoHook, MinoStats } from './hook.js';

/** Stats before anything ran. */
function emptyStats(): MinoStats {
  return {
    frames: 0,
    fps: 0,
    frameCpuMs: Number.NaN,
    frameCpuMsMax: Number.NaN,
    drawCalls: 0,
    bodyDrawCalls: 0,
    instances: 0,
    instanceCapacity: 0,
    instanceAllocations: 0,
    interpDelayMs: Number.NaN,
    jitterMs: Number.NaN,
    renderLagMs: Number.NaN,
    renderSnaps: 0,
    bufferedSamples: 0,
    shards: 0,
    resyncs: 0,
    datagramDeltas: false,
    cellsMissed: 0,
    resyncsAsked: 0,
    adapter: { architecture: '', vendor: '', description: '' },
    deviceGeneration: 0,
    lastRecoveryMs: Number.NaN,
    gpuFailure: null,
    ownPlayerId: 0,
    shardId: 0,
    connection: 'idle',
    reconnectPending: false,
    pingMs: Number.NaN,
    transport: '',
    fallback: '',
    earlyViews: 0,
    sockets: 0,
    decodeErrors: 0,
    inputsSent: 0,
    aoi: false,
    viewRadius: 0,
    cornerReach: Number.NaN,
    freeReach: Number.NaN,
    inView: 0,
    tracked: 0,
    placePlayers: Number.NaN,
    placeShards: Number.NaN,
    viewFrames: 0,
    cellFrames: 0,
    staleCellFrames: 0,
    namesRequests: 0,
    namesAsked: 0,
    namesKnown: 0,
    minimapDots: 0,
    predictionSamples: 0,
    predictionErrorP50: Number.NaN,
    predictionErrorP95: Number.NaN,
    predictionErrorMax: Number.NaN,
    predictionSnaps: 0,
    framesSkipped: 0,
    framesMostWaiting: 0,
    focusX: Number.NaN,
    ownBodyPx: Number.NaN,
  };
}

/** Copies what the running game knows into `s`. */
function gameStats(g: Game, s: MinoStats): void {
  s.frames = g.frameStats.frames;
  s.fps = g.frameStats.fps();
  s.frameCpuMs = g.frameStats.meanCpuMs();
  s.frameCpuMsMax = g.frameStats.maxCpuMs();
  const r = g.graphics.renderer;
  if (r) {
    s.drawCalls = r.last.drawCalls;
    s.bodyDrawCalls = r.last.bodyDrawCalls;
    s.instances = r.last.instances;
    s.instanceCapacity = r.instances.capacity;
    s.instanceAllocations = r.instances.allocations;
  }
  interpStats(g, s);
  if (g.areaOfInterest) aoiStats(g, s);
  s.adapter = { ...g.graphics.info };
  s.deviceGeneration = g.graphics.generation;
  s.lastRecoveryMs = g.graphics.lastRecoveryMs;
  s.ownPlayerId = g.ownId;
  s.shardId = g.shardId;
  s.connection = g.connectionState;
  s.reconnectPending = g.connection?.reconnectPending ?? false;
  s.pingMs = g.keepAlive.smoothedRttMs;
  s.transport = g.connection?.transportKind ?? '';
  s.fallback = g.connection?.fallback ?? '';
  s.earlyViews = g.connection?.earlyViews ?? 0;
  s.sockets = g.connection?.sockets ?? 0;
  s.decodeErrors = g.connection?.decodeErrors ?? 0;
  s.inputsSent = g.sender.count;
  const p = g.prediction;
  s.predictionSamples = p.samples;
  s.predictionErrorP50 = p.errorQuantile(0.5);
  s.predictionErrorP95 = p.errorQuantile(0.95);
  s.predictionErrorMax = p.errorMax();
  s.predictionSnaps = p.snaps;
  s.framesSkipped = g.inbox.skipped;
  s.framesMostWaiting = g.inbox.mostWaiting;
  s.focusX = g.camera.focusX;
  s.ownBodyPx = Math.max(BODY_RADIUS, 3 / g.camera.zoom) * g.camera.zoom * 1.4;
}

/** Interpolation and view stats (with or without area of interest). */
function interpStats(g: Game, s: MinoStats): void {
  const w = g.cells;
  const own = w.clocks.of(g.shardId);
  s.interpDelayMs = w.delayMs(g.shardId);
  s.jitterMs = own?.clock.jitterMs ?? Number.NaN;
  s.renderLagMs = own?.clock.ready ? own.newestMs - own.clock.renderMs : Number.NaN;
  s.renderSnaps = w.snaps();
  let most = 0;
  for (let slot = 0; slot < w.tracks.count; slot++) most = Math.max(most, w.tracks.samples(slot));
  s.bufferedSamples = most;
  s.shards = g.inbox.held?.shardCount ?? 0;
  s.resyncs = g.resyncs;
  s.datagramDeltas = g.inbox.held?.delivery === 'lossy';
  s.cellsMissed = g.inbox.cellsMissed;
  s.resyncsAsked = g.inbox.resyncsAsked;
  s.inView = w.players.count;
  s.tracked = w.tracks.count;
  s.viewFrames = g.viewFrames;
  s.cellFrames = w.cellFrames;
  s.staleCellFrames = w.staleFrames;
}

/** View and names stats of area of interest. */
function aoiStats(g: Game, s: MinoStats): void {
  s.aoi = true;
  s.viewRadius = g.camera.radius;
  s.cornerReach = Math.hypot(g.camera.width, g.camera.height) / 2 / g.camera.zoom;
  s.freeReach = Math.min(g.camera.focusX, g.camera.height / 2) / g.camera.zoom;
  s.inView = g.inViewCount;
  s.placePlayers = g.place.players;
  s.placeShards = g.place.shards;
  s.namesRequests = g.names.requests;
  s.namesAsked = g.names.idsAsked;
  s.namesKnown = g.names.size;
  s.minimapDots = g.minimapDots;
}

/** The hook; see the module comment. Reads the game only when asked. */
export class TestHook implements MinoHook {
  private game: Game | null = null;
  private gpuFailure: GpuFailure | null = null;
  private adapter: GpuHandle['info'] | null = null;

  get stats(): MinoStats {
    const s = emptyStats();
    s.gpuFailure = this.gpuFailure;
    if (this.adapter) {
      s.adapter = { ...this.adapter };
      s.deviceGeneration = 1;
    }
    if (this.game) gameStats(this.game, s);
    return s;
  }

  /** The page found no usable WebGPU: the game never starts. */
  noGpu(failure: GpuFailure): void {
    this.gpuFailure = failure;
  }

  /** The page got a device on `adapter` and is about to start the game. */
  gpu(adapter: GpuHandle['info']): void {
    this.adapter = adapter;
  }

  /** From now on the stats and positions come from `game`. */
  attach(game: Game): void {
    this.game = game;
  }

  worldToScreen(x: number, y: number): [number, number] | null {
    const g = this.game;
    if (!g?.frameStats.frames) return null;
    const rect = g.canvas.getBoundingClientRect();
    return [rect.left + g.camera.screenX(x), rect.top + g.camera.screenY(y)];
  }

  screenToWorld(x: number, y: number): [number, number] | null {
    const g = this.game;
    if (!g?.frameStats.frames) return null;
    const rect = g.canvas.getBoundingClientRect();
    return [g.camera.worldX(x - rect.left), g.camera.worldY(y - rect.top)];
  }

  drawnAtMs(): number | null {
    const g = this.game;
    return g?.frameStats.frames ? g.frameStats.newestMs() : null;
  }

  drawnPosition(id: number): [number, number] | null {
    const p = this.game?.drawn;
    const i = p ? p.indexOf(id) : -1;
    return p && i >= 0 ? [p.x[i] as number, p.y[i] as number] : null;
  }

  drawnIds(): number[] {
    const p = this.game?.drawn;
    return p ? Array.from(p.ids.subarray(0, p.count)) : [];
  }

  nameOf(id: number): string | null {
    return this.game?.nameOf(id) ?? null;
  }

  leftsFrom(shard: number): number {
    return this.game?.leftsFrom(shard) ?? 0;
  }

  loseDevice(): void {
    this.game?.graphics.renderer?.device.destroy();
  }

  resetPredictionStats(): void {
    this.game?.prediction.resetStats();
  }

  askResync(): boolean {
    return this.game?.askResync() ?? false;
  }
}

/** Creates the hook and installs it as `window.__mino` (test builds only). */
export function installTestHook(win: Window): TestHook {
  const hook = new TestHook();
  win.__mino = hook;
  return hook;
}
