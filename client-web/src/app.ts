// The running game: wires the connection, the interpolated world, input, the
// renderer and the panels together and runs the frame loop. Each part owns its
// concept; this file only routes messages and per-frame calls between them.
//
// One mechanism for the players: every view frame is applied to the cells the
// page holds (net/inbox, net/held) and each cell it changed goes into
// interp/cell-world. What the Welcome says changes the rest: without area of
// interest (each shard one cell) names come from the Roster and Presence and
// the camera shows the world; with it names are asked for as players come
// into view, the camera and a minimap follow the view radius, and the
// place's count comes from PlaceStatus. A frame that does not apply to what
// the page holds resyncs: a new socket (resuming), which holds nothing.
//
// The own player is not interpolated: it is predicted (predict/prediction)
// from the Inputs sent and reconciled with its own entry in each cell taken,
// so it answers a key at once.

import { Controls } from './input/controls.js';
import { DirectionSender } from './input/sender.js';
import { CellWorld } from './interp/cell-world.js';
import type { MergedPlayers } from './interp/world.js';
import { Connection, type ConnectionState } from './net/connection.js';
import { browserDial } from './net/dial.js';
import type { HeldError } from './net/held.js';
import { FrameInbox } from './net/inbox.js';
import { KeepAlive } from './net/keepalive.js';
import { explainedByPage } from './net/policy.js';
import { FLAG_MOVING, MAX_SERVER_MESSAGE_BYTES, encodeResync, type AoiSettings, type ServerMsg, type WelcomeMsg } from './net/protocol.js';
import { transportText } from './net/transport.js';
import { socketUrl } from './net/url.js';
import { OwnPrediction } from './predict/prediction.js';
import { Camera } from './render/camera.js';
import { FrameStats } from './render/frame-stats.js';
import type { GpuHandle } from './render/gpu.js';
import { Graphics } from './render/graphics.js';
import { NameLabels } from './render/labels.js';
import { Minimap } from './render/minimap.js';
import { InViewDirectory } from './state/in-view.js';
import { NameBook } from './state/names.js';
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
  readonly playersTitle: HTMLElement;
  readonly minimap: HTMLCanvasElement;
  /** The side panels (player list and chat) over the right of the world. */
  readonly side: HTMLElement;
}

/** Largest canvas side, device pixels. */
const MAX_CANVAS_PX = 4096;

/**
 * One player's game in this page. The parts a test hook reads
 * (src/debug/hook.ts, test builds only) are public and read-only.
 */
export class Game {
  /** The players in view, from the cells view frames changed. */
  readonly cells: CellWorld;
  /** Area of interest: names asked for as players come into view. */
  readonly names: NameBook;
  readonly camera = new Camera();
  /** The own player, predicted from the Inputs sent. */
  readonly prediction = new OwnPrediction();
  readonly frameStats = new FrameStats();
  readonly graphics: Graphics;
  readonly sender: DirectionSender;
  readonly keepAlive: KeepAlive;
  readonly canvas: HTMLCanvasElement;
  private readonly roster = new Roster();
  private readonly inView: InViewDirectory;
  private readonly labels: NameLabels;
  private readonly minimap: Minimap;
  private readonly status: Status;
  private readonly chat: Chat;
  private readonly playerList: PlayerList;
  private readonly hud: Hud;
  /** Filled in place at each HUD refresh. */
  private readonly hudValues: HudValues = {
    pingMs: Number.NaN,
    shard: 0,
    players: 0,
    inView: 0,
    delayMs: Number.NaN,
    fps: 0,
    frameCpuMs: Number.NaN,
    catchingUp: false,
    live: false,
    transport: '',
  };
  /** View frames waiting to be applied to the cells held and taken into [`cells`]; a backlog's steps skipped when the page fell behind. */
  readonly inbox = new FrameInbox({
    cell: (cell, span, at) => this.cells.onCell(cell, span, at),
    forgot: (shard, cell, tick, at) => this.cells.onForget(shard, cell, tick, at),
    // A reset's section carries no tick (0 on the wire).
    reset: (shard, _tick, at) => this.cells.onReset(shard, at),
    broken: (error) => this.resync(error),
    resync: () => this.askResync(),
  });
  /** Frames that did not apply to what the page held (each a resync). */
  resyncs = 0;
  /** What the current outage has been (a restart, a session the server no longer knew), for what the page says after it. */
  private sawRestart = false;
  private sawSessionLost = false;
  private readonly controls: Controls;
  private conn: Connection | null = null;
  /** Area of interest as the last Welcome gave it (null: each shard is one cell). */
  private aoi: AoiSettings | null = null;
  /** The place's players and live shards from the last PlaceStatus (NaN before one). */
  private placePlayers = Number.NaN;
  private placeShards = Number.NaN;
  private own = 0;
  private viewFramesReceived = 0;
  private shard = 0;
  private connKind: ConnectionState['kind'] | 'idle' = 'idle';
  private welcomeX = 0;
  private welcomeY = 0;
  private lastFrame = Number.NaN;
  private cssWidth = 1;
  private cssHeight = 1;
  /** CSS pixels at the right of the canvas the side panels cover. */
  private sideInset = 0;

  constructor(
    private readonly els: Elements,
    gpu: GpuHandle,
    /** Called when the server refused the name; the page asks for another and calls [`connect`]. */
    private readonly onRename: (reason: string) => void,
    /** The access token the page was given (in its URL's fragment), sent in every Hello; memory only. Null: a guest. */
    private readonly accessToken: string | null = null,
  ) {
    this.canvas = els.canvas;
    const context = els.canvas.getContext('webgpu');
    if (!context) throw new Error('the canvas has no webgpu context');
    this.status = new Status(els.badge, els.panel);
    this.graphics = new Graphics(context, gpu, (reason) => this.fatal(reason));
    this.labels = new NameLabels(els.labels);
    this.minimap = new Minimap(els.minimap, els.minimap.getContext('2d'));
    const send = (bytes: Uint8Array): boolean => this.conn?.send(bytes) ?? false;
    this.names = new NameBook(send, (id) => this.cells.tracks.slotOf(id) >= 0);
    this.cells = new CellWorld({
      entered: (id) => {
        if (this.aoi) this.names.want(id);
      },
      own: (shard, tick, x, y, flags, at) => this.prediction.authoritative(shard, tick, x, y, flags, at),
    });
    this.inView = new InViewDirectory(this.cells, this.names);
    this.chat = new Chat(els.chatLog, els.chatInput, send, () => this.own);
    this.playerList = new PlayerList(els.players, els.playerCount, els.playersTitle);
    this.playerList.show(this.roster, 'Players');
    this.hud = new Hud(els.hud);
    this.sender = new DirectionSender(send, realTimers, 50, (seq, dir, at) => this.prediction.input(seq, dir.x, dir.y, at));
    this.keepAlive = new KeepAlive(send, realTimers);
    this.controls = new Controls(window, els.canvas, (dir) => this.sender.set(dir));
    this.watchCanvas();
    requestAnimationFrame(this.frame);
  }

  /** The local player's id (0 before Welcome). */
  get ownId(): number {
    return this.own;
  }

  /** View frames received (one a tick with anything new, each a section per shard). */
  get viewFrames(): number {
    return this.viewFramesReceived;
  }

  /** The shard that welcomed the local player (0 before Welcome). */
  get shardId(): number {
    return this.shard;
  }

  /** The current connection, if one was opened. */
  get connection(): Connection | null {
    return this.conn;
  }

  /** Area of interest as the last Welcome gave it (null: each shard is one cell). */
  get areaOfInterest(): AoiSettings | null {
    return this.aoi;
  }

  /** Area of interest: the players within the view radius at the last HUD refresh, the local one included. */
  get inViewCount(): number {
    return this.inView.count;
  }

  /** The players drawn in the last frame. */
  get drawn(): MergedPlayers {
    return this.cells.players;
  }

  /** Whole-shard mode: how many players shard `shard` announced as left so far (the roster's count). */
  leftsFrom(shard: number): number {
    return this.roster.leftsFrom(shard);
  }

  /** The name the page knows for `id`: the name book's with area of interest, the roster's otherwise. */
  nameOf(id: number): string | undefined {
    return this.aoi ? this.names.name(id) : this.roster.name(id);
  }

  /** Dots on the minimap at its last redraw. */
  get minimapDots(): number {
    return this.minimap.dots;
  }

  /** The place's players and live shards from the last PlaceStatus (NaN before one; area of interest only). */
  get place(): { players: number; shards: number } {
    return { players: this.placePlayers, shards: this.placeShards };
  }

  /** Kind of the connection's state ('idle' before the first connect). */
  get connectionState(): string {
    return this.connKind;
  }

  /** Opens the connection as `name` (again after a rename). */
  connect(name: string): void {
    this.conn?.stop();
    this.status.clearStop();
    this.conn = new Connection({
      dial: browserDial(location.href, socketUrl(location), realTimers, MAX_SERVER_MESSAGE_BYTES),
      name,
      accessToken: this.accessToken,
      timers: realTimers,
      handlers: { message: (m, at) => this.message(m, at), state: (s) => this.state(s) },
    });
    this.conn.start();
    this.state({ kind: 'connecting' });
  }

  /** Leaves: closes the socket normally so the server frees the slot at once. */
  leave(): void {
    this.conn?.stop();
  }

  private message(msg: ServerMsg, arrivalMs: number): void {
    switch (msg.kind) {
      case 'view':
        this.viewFramesReceived++;
        this.inbox.offer(msg, arrivalMs);
        return;
      case 'welcome':
        this.inbox.flush(); // the old socket's frames first
        this.welcome(msg, arrivalMs);
        return;
      case 'names':
        this.names.apply(msg, arrivalMs);
        return;
      case 'place-status':
        this.placePlayers = msg.players;
        this.placeShards = msg.shards;
        return;
      case 'roster':
        this.roster.applyRoster(msg);
        return;
      case 'presence':
        this.roster.applyPresence(msg);
        return;
      case 'chat':
        this.chat.add(msg);
        if (this.aoi && msg.fromId) this.names.learn(msg.fromId, msg.name);
        return;
      case 'pong':
        this.keepAlive.onPong(msg.clientTimeMs, realTimers.now());
        return;
      case 'error':
        // What the page explains in its own words (a restart, a lost session, a refused sign-in) is not echoed.
        if (msg.message && !explainedByPage(msg.code)) this.chat.system(`server: ${msg.message}`);
        return;
      case 'busy':
      case 'move':
        return; // the connection acts on these
    }
  }

  /**
   * Asks the shard for every cell of the view whole again, on the same
   * transport (a Resync message: a page granted datagram deltas that missed
   * a change; a shard that did not grant them ignores it). Whether it was sent.
   */
  askResync(): boolean {
    return this.conn?.send(encodeResync()) ?? false;
  }

  /** A frame did not apply to what the page holds: a new socket, which holds nothing (the player resumes). */
  private resync(error: HeldError): void {
    this.resyncs++;
    console.warn(`view frame refused (${error.message}): resyncing`);
    this.conn?.resync();
  }

  private welcome(w: WelcomeMsg, arrivalMs: number): void {
    if (this.own && this.own !== w.playerId) this.rejoined(w.name);
    this.sawRestart = this.sawSessionLost = false;
    this.own = w.playerId;
    this.cells.ownId = w.playerId;
    this.shard = w.shardId;
    this.welcomeX = w.x;
    this.welcomeY = w.y;
    this.camera.setBounds(w.bounds);
    this.inbox.welcome(w);
    this.cells.welcome(w, arrivalMs);
    this.roster.setOwn(w.playerId, w.name, w.shardId);
    this.mode(w);
    // Before the resync: the Input it sends is the first the prediction replays.
    this.prediction.welcome(w, realTimers.now());
    this.sender.resync();
    this.keepAlive.start();
  }

  /** Sets up what the Welcome says: area of interest, or each shard one cell. */
  private mode(w: WelcomeMsg): void {
    const aoi = w.aoi;
    this.aoi = aoi;
    this.camera.setViewRadius(aoi?.viewRadius ?? 0);
    this.minimap.setWorld(aoi ? w.bounds : null, aoi?.viewRadius ?? 0);
    this.hud.setAreaOfInterest(aoi !== null);
    if (!aoi) {
      this.playerList.show(this.roster, 'Players');
      return;
    }
    this.names.setOwn(w.playerId, w.name);
    this.names.reconnected();
    this.playerList.show(this.inView, 'In view');
  }

  /** Says plainly why the player came back as a new one. */
  private rejoined(name: string): void {
    const why = this.sawRestart
      ? 'The server restarted and could not keep your place'
      : this.sawSessionLost
        ? 'The server no longer knew your session'
        : 'Your session ended';
    const text = `${why}, so you joined again as a new player, still named ${name}.`;
    this.chat.system(text);
    this.status.notice(text);
  }

  private state(s: ConnectionState): void {
    this.connKind = s.kind;
    if (s.kind === 'live') this.transportChosen();
    if (s.kind === 'reconnecting') {
      this.sawRestart ||= s.why === 'restart';
      this.sawSessionLost ||= s.why === 'session-lost';
    }
    this.status.connection(s);
    if (s.kind !== 'live') {
      this.keepAlive.stop();
      this.prediction.disconnected(realTimers.now());
    }
    if (s.kind === 'stopped' && s.rename) this.onRename(s.reason);
  }

  /** Says (in the HUD, once per connect) which transport the connection took, and why not WebTransport after a fallback. */
  private transportChosen(): void {
    const kind = this.conn?.transportKind;
    if (!kind) return;
    const fallback = this.conn?.fallback ?? null;
    this.hudValues.transport = transportText(kind, fallback);
    console.info(`connected over ${this.hudValues.transport}`);
  }

  private fatal(reason: string): void {
    this.conn?.stop();
    this.status.stop(reason);
  }

  private watchCanvas(): void {
    const canvas = this.els.canvas;
    new ResizeObserver(([entry]) => {
      if (!entry) return;
      this.cssWidth = entry.contentRect.width;
      this.cssHeight = entry.contentRect.height;
      this.measureSide();
    }).observe(canvas);
    const side = new ResizeObserver(() => this.measureSide());
    side.observe(this.els.side);
    for (const panel of this.els.side.children) side.observe(panel);
    side.observe(this.els.hud);
    side.observe(this.els.minimap);
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

  /**
   * Measures the panels floating over the canvas: how much of its right the
   * side panels cover (CSS pixels, and a gap), for the camera, and the
   * rectangles of every panel (the side panels, the HUD, the minimap), which
   * name labels keep clear of.
   */
  measureSide(): void {
    const side = this.els.side.getBoundingClientRect();
    const canvas = this.els.canvas.getBoundingClientRect();
    this.sideInset = side.width > 0 && side.height > 0 ? Math.max(0, canvas.right - side.left + 8) : 0;
    const panels = [...this.els.side.children, this.els.hud, this.els.minimap];
    this.labels.setCovered(
      panels.map((el) => {
        const r = el.getBoundingClientRect();
        return { left: r.left - canvas.left, top: r.top - canvas.top, right: r.right - canvas.left, bottom: r.bottom - canvas.top };
      }),
    );
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
    this.camera.setInsetRight(this.sideInset);
    this.minimap.resize(dpr);
  }

  /**
   * One frame; the hot path (see FrameStats for what is timed). Allocates
   * nothing of its own: the world, the renderer, the labels and the HUD reuse
   * their arrays, DOM nodes and strings (WebGPU's per-frame objects aside).
   */
  private readonly frame = (now: number): void => {
    requestAnimationFrame(this.frame);
    const t0 = performance.now();
    this.inbox.roundTripMs = this.keepAlive.smoothedRttMs;
    this.inbox.flush();
    const dt = now - this.lastFrame;
    this.lastFrame = now;
    this.resizeCanvas();
    const aoi = this.aoi !== null;
    this.cells.update(now);
    const players = this.cells.players;
    this.drawPrediction(players, t0);
    const own = players.indexOf(this.own);
    if (own >= 0) this.camera.follow(players.x[own] as number, players.y[own] as number, dt);
    else this.camera.follow(this.welcomeX, this.welcomeY, dt);
    this.graphics.renderer?.draw(players, this.own, this.camera);
    this.labels.update(players, this.own, this.camera, aoi ? this.names : this.roster);
    if (aoi) {
      this.minimap.update(players, this.own, this.camera, now);
      this.names.flush(now);
    }
    this.frameStats.record(now, performance.now() - t0);
    this.report(now);
  };

  /** Draws the own player where the prediction has it (local time `nowMs`) instead of where it was interpolated. */
  private drawPrediction(players: MergedPlayers, nowMs: number): void {
    const p = this.prediction;
    p.update(nowMs);
    if (p.active && this.own) players.put(this.own, p.x, p.y, p.heading, p.moving ? FLAG_MOVING : 0, Number.POSITIVE_INFINITY);
  }

  /** Refreshes the HUD (at most every HUD_REFRESH_MS) and the players list (when it changed). */
  private report(now: number): void {
    if (this.hud.due(now)) {
      const v = this.hudValues;
      v.live = this.connKind === 'live';
      v.pingMs = this.keepAlive.smoothedRttMs;
      v.shard = this.shard;
      v.catchingUp = this.inbox.catchingUp(now);
      if (this.aoi) {
        // Within the view radius of where the own player is drawn, not every player of the cells sent.
        this.inView.measure(this.camera.followedX, this.camera.followedY, this.aoi.viewRadius);
        v.players = this.placePlayers;
        v.inView = this.inView.count;
      } else {
        v.players = this.cells.players.count;
      }
      v.delayMs = this.cells.delayMs(this.shard);
      v.fps = this.frameStats.fps();
      v.frameCpuMs = this.frameStats.meanCpuMs();
      this.hud.show(v);
    }
    this.playerList.update(this.own, now);
  }
}
