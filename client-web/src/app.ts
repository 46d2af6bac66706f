// The running game: wires the connection, the interpolated world, input, the
// renderer and the panels together and runs the frame loop. Each part owns its
// concept; this file only routes messages and per-frame calls between them.

import type { MinoHook, MinoStats } from './debug/hook.js';
import { Controls } from './input/controls.js';
import { DirectionSender } from './input/sender.js';
import { InterpolatedWorld } from './interp/world.js';
import { Connection, type ConnectionState } from './net/connection.js';
import { KeepAlive } from './net/keepalive.js';
import type { ServerMsg, WelcomeMsg } from './net/protocol.js';
import { socketUrl } from './net/url.js';
import { Camera } from './render/camera.js';
import { FrameStats } from './render/frame-stats.js';
import type { GpuHandle } from './render/gpu.js';
import { Graphics } from './render/graphics.js';
import { NameLabels } from './render/labels.js';
import { Roster } from './state/roster.js';
import { realTimers } from './timers.js';
import { Chat } from './ui/chat.js';
import { Hud, type HudValues } from './ui/hud.js';
import { PlayerList } from './ui/players.js';
import { Status } from './ui/status.js';

/** The page elements the game uses (see index.html). */
export interface Elements {
  readonly canvas: HTMLCanvasElement;
  readonly labels: HTMLElement;
  readonly hud: HTMLElement;
  readonly badge: HTMLElement;
  readonly panel: HTMLElement;
  readonly chatLog: HTMLElement;
  readonly chatInput: HTMLInputElement;
  readonly players: HTMLElement;
  readonly playerCount: HTMLElement;
}

/** Largest canvas side, device pixels. */
const MAX_CANVAS_PX = 4096;

/** One player's game in this page. */
export class Game {
  private readonly world = new InterpolatedWorld();
  private readonly roster = new Roster();
  private readonly camera = new Camera();
  private readonly frameStats = new FrameStats();
  private readonly graphics: Graphics;
  private readonly labels: NameLabels;
  private readonly status: Status;
  private readonly chat: Chat;
  private readonly playerList: PlayerList;
  private readonly hud: Hud;
  /** Filled in place at each HUD refresh. */
  private readonly hudValues: HudValues = { pingMs: Number.NaN, players: 0, delayMs: Number.NaN, fps: 0, frameCpuMs: Number.NaN };
  private readonly sender: DirectionSender;
  private readonly keepAlive: KeepAlive;
  private readonly controls: Controls;
  private connection: Connection | null = null;
  private ownId = 0;
  private shardId = 0;
  private welcomeX = 0;
  private welcomeY = 0;
  private lastFrame = Number.NaN;
  private cssWidth = 1;
  private cssHeight = 1;
  readonly hook: MinoHook;

  constructor(
    private readonly els: Elements,
    gpu: GpuHandle,
    private readonly stats: MinoStats,
    /** Called when the server refused the name; the page asks for another and calls [`connect`]. */
    private readonly onRename: (reason: string) => void,
  ) {
    const context = els.canvas.getContext('webgpu');
    if (!context) throw new Error('the canvas has no webgpu context');
    this.status = new Status(els.badge, els.panel);
    this.graphics = new Graphics(context, gpu, (reason) => this.fatal(reason));
    this.labels = new NameLabels(els.labels);
    const send = (bytes: Uint8Array): boolean => this.connection?.send(bytes) ?? false;
    this.chat = new Chat(els.chatLog, els.chatInput, send, () => this.ownId);
    this.playerList = new PlayerList(els.players, els.playerCount);
    this.hud = new Hud(els.hud);
    this.sender = new DirectionSender(send, realTimers);
    this.keepAlive = new KeepAlive(send, realTimers);
    this.controls = new Controls(window, els.canvas, (dir) => this.sender.set(dir));
    this.hook = this.makeHook();
    this.watchCanvas();
    requestAnimationFrame(this.frame);
  }

  /** Opens the connection as `name` (again after a rename). */
  connect(name: string): void {
    this.connection?.stop();
    this.status.clearStop();
    this.connection = new Connection({
      url: socketUrl(location),
      name,
      timers: realTimers,
      handlers: { message: (m, at) => this.message(m, at), state: (s) => this.state(s) },
    });
    this.connection.start();
    this.state({ kind: 'connecting' });
  }

  /** Leaves: closes the socket normally so the server frees the slot at once. */
  leave(): void {
    this.connection?.stop();
  }

  private message(msg: ServerMsg, arrivalMs: number): void {
    switch (msg.kind) {
      case 'snapshot':
        this.world.onSnapshot(msg, arrivalMs);
        this.camera.setBounds(msg.bounds);
        return;
      case 'welcome':
        this.welcome(msg);
        return;
      case 'roster':
        this.roster.applyRoster(msg);
        return;
      case 'presence':
        this.roster.applyPresence(msg);
        return;
      case 'chat':
        this.chat.add(msg);
        return;
      case 'pong':
        this.keepAlive.onPong(msg.clientTimeMs, realTimers.now());
        return;
      case 'error':
        if (msg.message) this.chat.system(`server: ${msg.message}`);
        return;
      case 'busy':
      case 'move':
        return; // the connection acts on these
    }
  }

  private welcome(w: WelcomeMsg): void {
    if (this.ownId && this.ownId !== w.playerId) this.chat.system('Rejoined as a new player.');
    this.ownId = this.stats.ownPlayerId = w.playerId;
    this.shardId = this.stats.shardId = w.shardId;
    this.welcomeX = w.x;
    this.welcomeY = w.y;
    this.world.speed = w.speed;
    this.camera.setBounds(w.bounds);
    this.roster.setOwn(w.playerId, w.name, w.shardId);
    this.sender.resync();
    this.keepAlive.start();
  }

  private state(s: ConnectionState): void {
    this.stats.connection = s.kind;
    this.stats.sockets = this.connection?.sockets ?? 0;
    this.status.connection(s);
    if (s.kind !== 'live') this.keepAlive.stop();
    if (s.kind === 'stopped' && s.rename) this.onRename(s.reason);
  }

  private fatal(reason: string): void {
    this.connection?.stop();
    this.status.stop(reason);
  }

  private watchCanvas(): void {
    const canvas = this.els.canvas;
    new ResizeObserver(([entry]) => {
      if (!entry) return;
      this.cssWidth = entry.contentRect.width;
      this.cssHeight = entry.contentRect.height;
    }).observe(canvas);
    canvas.addEventListener('mousemove', (e) => this.labels.setMouse(e.offsetX, e.offsetY));
    canvas.addEventListener('mouseleave', () => this.labels.clearMouse());
    canvas.addEventListener(
      'wheel',
      (e) => {
        e.preventDefault();
        this.camera.zoomBy(Math.exp(-e.deltaY * 0.0015));
      },
      { passive: false },
    );
    window.addEventListener('keydown', (e) => {
      if (e.target instanceof HTMLInputElement) return;
      if (e.key === '+' || e.key === '=') this.camera.zoomBy(1.25);
      else if (e.key === '-' || e.key === '_') this.camera.zoomBy(0.8);
    });
  }

  private resizeCanvas(): void {
    const dpr = Math.min(window.devicePixelRatio || 1, 2);
    const w = this.cssWidth;
    const h = this.cssHeight;
    const pw = Math.max(1, Math.min(MAX_CANVAS_PX, Math.round(w * dpr)));
    const ph = Math.max(1, Math.min(MAX_CANVAS_PX, Math.round(h * dpr)));
    const canvas = this.els.canvas;
    if (canvas.width !== pw || canvas.height !== ph) {
      canvas.width = pw;
      canvas.height = ph;
    }
    this.camera.resize(w, h, pw / Math.max(1, w));
  }

  /**
   * One frame; the hot path (see FrameStats for what is timed). Allocates
   * nothing of its own: the world, the renderer, the labels and the HUD reuse
   * their arrays, DOM nodes and strings (WebGPU's per-frame objects aside).
   */
  private readonly frame = (now: number): void => {
    requestAnimationFrame(this.frame);
    const t0 = performance.now();
    const dt = now - this.lastFrame;
    this.lastFrame = now;
    this.resizeCanvas();
    this.world.update(now);
    const players = this.world.players;
    const own = players.indexOf(this.ownId);
    if (own >= 0) this.camera.follow(players.x[own] as number, players.y[own] as number, dt);
    else this.camera.follow(this.welcomeX, this.welcomeY, dt);
    const renderer = this.graphics.renderer;
    if (renderer) {
      const draws = renderer.draw(players, this.ownId, this.camera);
      this.stats.drawCalls = draws.drawCalls;
      this.stats.bodyDrawCalls = draws.bodyDrawCalls;
      this.stats.instances = draws.instances;
      this.stats.instanceCapacity = renderer.instances.capacity;
      this.stats.instanceAllocations = renderer.instances.allocations;
    }
    this.labels.update(players, this.ownId, this.camera, this.roster);
    this.frameStats.record(now, performance.now() - t0);
    this.report(now);
  };

  /** Updates the HUD, the players list and the hook's stats. */
  private report(now: number): void {
    const s = this.stats;
    s.frames = this.frameStats.frames;
    s.fps = this.frameStats.fps();
    s.frameCpuMs = this.frameStats.meanCpuMs();
    s.frameCpuMsMax = this.frameStats.maxCpuMs();
    s.interpDelayMs = this.world.delayMs(this.shardId);
    const track = this.world.track(this.shardId);
    s.jitterMs = track?.clock.jitterMs ?? Number.NaN;
    s.renderLagMs = (track?.ring.newest()?.serverTimeMs ?? Number.NaN) - (track?.sampleTimeMs ?? Number.NaN);
    s.renderSnaps = this.world.snaps();
    s.bufferedSnapshots = this.world.bufferedSnapshots();
    s.shards = this.world.shardCount;
    s.adapter = this.graphics.info;
    s.deviceGeneration = this.graphics.generation;
    s.lastRecoveryMs = this.graphics.lastRecoveryMs;
    s.ownPlayerId = this.ownId;
    s.shardId = this.shardId;
    s.pingMs = this.keepAlive.smoothedRttMs;
    s.sockets = this.connection?.sockets ?? 0;
    s.decodeErrors = this.connection?.decodeErrors ?? 0;
    s.inputsSent = this.sender.count;
    if (this.hud.due(now)) {
      const v = this.hudValues;
      v.pingMs = s.pingMs;
      v.players = this.world.players.count;
      v.delayMs = s.interpDelayMs;
      v.fps = s.fps;
      v.frameCpuMs = s.frameCpuMs;
      this.hud.show(v);
    }
    this.playerList.update(this.roster, this.ownId, now);
  }

  private makeHook(): MinoHook {
    return {
      stats: this.stats,
      worldToScreen: (x, y) => {
        if (!this.frameStats.frames) return null;
        const rect = this.els.canvas.getBoundingClientRect();
        return [rect.left + this.camera.screenX(x), rect.top + this.camera.screenY(y)];
      },
      drawnPosition: (id) => {
        const p = this.world.players;
        const i = p.indexOf(id);
        return i >= 0 ? [p.x[i] as number, p.y[i] as number] : null;
      },
      loseDevice: () => this.graphics.loseDevice(),
    };
  }
}
