// A bot over a real websocket (the `ws` package) that speaks through the
// client's own protocol module: Hello, Input, ChatSend; it applies its view
// frames to the cells it holds (net/held.ts) and keeps the newest positions
// of every player (overall and per shard: without area of interest each
// shard is one cell), and the chat and presence messages it received. It
// asks for no deltas unless told to, so every cell it is due comes whole,
// every due tick (its own cell every tick), as a count of frames can tell.

import WebSocket from 'ws';
import { CellGrid } from '../../src/net/grid.js';
import { Held, type HeldCell } from '../../src/net/held.js';
import { MAX_CELL_PLAYERS } from '../../src/net/inbox.js';
import { Motion } from '../../src/net/motion.js';
import { Stencil } from '../../src/net/stencil.js';
import {
  CAPABILITIES,
  PROTOCOL_VERSION,
  decodeServer,
  encodeChat,
  encodeHello,
  encodeInput,
  type ChatMsg,
  type PlayerColumns,
  type PresenceMsg,
  type ServerMsg,
  type WelcomeMsg,
} from '../../src/net/protocol.js';

/** One connected player driven by a test. */
export class Bot {
  readonly chats: ChatMsg[] = [];
  /** Presence messages with the local time they arrived (Date.now(), ms). */
  readonly presences: (PresenceMsg & { readonly receivedAt: number })[] = [];
  /** Newest positions by player id, world units (of whichever cell listed it last). */
  readonly positions = new Map<number, [number, number]>();
  /** Newest positions of each shard's players held: shard id -> player id -> world units. */
  readonly shardPositions = new Map<number, Map<number, [number, number]>>();
  /** View frames received, and the cells they changed (in all, and per shard id; without area of interest each shard is one cell). */
  viewFrames = 0;
  cellFrames = 0;
  readonly shardCells = new Map<number, number>();
  /** The cells the bot holds. */
  readonly held: Held;
  closedWith: number | null = null;
  private seq = 0;
  private readonly cols: PlayerColumns = {
    ids: new Uint32Array(0),
    x: new Float32Array(0),
    y: new Float32Array(0),
    heading: new Float32Array(0),
    flags: new Uint8Array(0),
  };

  private constructor(
    private readonly socket: WebSocket,
    readonly welcome: WelcomeMsg,
  ) {
    const aoi = welcome.aoi;
    const grid = aoi ? CellGrid.of(welcome.bounds, aoi.cellSize) : null;
    this.held = new Held(new Motion(welcome.bounds, welcome.speed, welcome.tickHz), MAX_CELL_PLAYERS)
      .handingOff(grid)
      .seeing(grid && aoi ? Stencil.ofView(aoi.wireViewRadius, aoi.cellSize) : null);
  }

  /** Connects to `url` as `name` (taking deltas if `deltas`) and waits (at most `timeoutMs`) for Welcome. */
  static connect(url: string, name: string, timeoutMs = 10_000, deltas = false): Promise<Bot> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.binaryType = 'arraybuffer';
      let bot: Bot | null = null;
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error(`${name}: no welcome within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.on('open', () => socket.send(encodeHello(name, null, null, PROTOCOL_VERSION, deltas ? CAPABILITIES : 0)));
      socket.on('message', (data: ArrayBuffer) => {
        const d = decodeServer(new Uint8Array(data));
        if (!d.ok) return;
        if (!bot) {
          if (d.msg.kind !== 'welcome') {
            clearTimeout(timer);
            reject(new Error(`${name}: ${d.msg.kind} instead of welcome: ${JSON.stringify(d.msg)}`));
            return;
          }
          bot = new Bot(socket, d.msg);
          clearTimeout(timer);
          resolve(bot);
          return;
        }
        bot.receive(d.msg);
      });
      socket.on('close', (code) => {
        if (bot) bot.closedWith = code;
        clearTimeout(timer);
        reject(new Error(`${name}: closed (${code}) before welcome`));
      });
      socket.on('error', () => undefined);
    });
  }

  get id(): number {
    return this.welcome.playerId;
  }

  private reserve(n: number): void {
    if (this.cols.ids.length >= n) return;
    this.cols.ids = new Uint32Array(n);
    this.cols.x = new Float32Array(n);
    this.cols.y = new Float32Array(n);
    this.cols.heading = new Float32Array(n);
    this.cols.flags = new Uint8Array(n);
  }

  private receive(msg: ServerMsg): void {
    if (msg.kind === 'chat') this.chats.push(msg);
    if (msg.kind === 'presence') this.presences.push({ ...msg, receivedAt: Date.now() });
    if (msg.kind !== 'view') return;
    this.viewFrames++;
    const error = this.held.apply(msg.bytes, msg.start, msg.end);
    if (error) throw new Error(`bot ${this.welcome.name}: ${error.message}`);
    for (let i = 0; i < this.held.updateCount; i++) {
      const u = this.held.update(i);
      if (u.kind === 'reset') this.shardPositions.delete(u.shard);
      if (u.kind === 'cell' && u.held) this.receiveCell(u.held);
    }
  }

  /** Keeps the positions of the players of a cell a view frame changed, and its shard's players held. */
  private receiveCell(cell: HeldCell): void {
    this.reserve(cell.playerCount);
    cell.readPlayers(this.cols, this.welcome.bounds);
    for (let i = 0; i < cell.playerCount; i++) this.positions.set(this.cols.ids[i] as number, [this.cols.x[i] as number, this.cols.y[i] as number]);
    const ofShard = new Map<number, [number, number]>();
    this.held.forEachCell((c) => {
      if (c.shard !== cell.shard) return;
      this.reserve(c.playerCount);
      c.readPlayers(this.cols, this.welcome.bounds);
      for (let i = 0; i < c.playerCount; i++) ofShard.set(this.cols.ids[i] as number, [this.cols.x[i] as number, this.cols.y[i] as number]);
    });
    this.shardPositions.set(cell.shard, ofShard);
    this.shardCells.set(cell.shard, (this.shardCells.get(cell.shard) ?? 0) + 1);
    this.cellFrames++;
  }

  /** Position of player `id` among shard `shardId`'s players held, world units. */
  positionOn(shardId: number, id: number): [number, number] | undefined {
    return this.shardPositions.get(shardId)?.get(id);
  }

  /** Server-side position of player `id` in the newest cell listing it. */
  position(id: number): [number, number] | undefined {
    return this.positions.get(id);
  }

  /** Walks in direction (x, y); (0, 0) stops. */
  walk(x: number, y: number): void {
    this.socket.send(encodeInput(++this.seq, x, y));
  }

  say(text: string): void {
    this.socket.send(encodeChat(text));
  }

  /** Closes normally and waits for the close (at most 2 s). */
  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.socket.terminate();
        resolve();
      }, 2000);
      this.socket.once('close', () => {
        clearTimeout(t);
        resolve();
      });
      this.socket.close(1000);
    });
  }
}

/** A value, or something falsy meaning "not yet". */
type Maybe<T> = T | null | undefined | false | 0 | '';

/**
 * Keeps `bot` walking to and fro (turning every 400 ms) until the returned
 * function stops it: its shard's cell changes every tick, so view frames keep
 * coming (a still place sends none), as in a busy place.
 */
export function keepWalking(bot: Bot): () => void {
  let dir = 1;
  bot.walk(dir, 0);
  const timer = setInterval(() => {
    dir = -dir;
    bot.walk(dir, 0);
  }, 400);
  return () => {
    clearInterval(timer);
    bot.walk(0, 0);
  };
}

/**
 * Walks `bot` to within `near` world units of `target`, then stops it, and
 * returns where it stopped (a tick or two past the point where it was told:
 * the stop takes effect at a later tick). The position is read every 10 ms,
 * so every tick's is seen: along a straight approach one of them falls
 * within `near` whenever `near` is at least half a tick's step (at the
 * tests' 300 units a second, 7.5 units). The bot is steered at most every
 * 100 ms (under the input rate limit), and at once when it has passed the
 * target (then it turns back). Throws after `timeoutMs` with where it was.
 */
export async function walkTo(bot: Bot, target: readonly [number, number], near: number, timeoutMs = 20_000): Promise<[number, number]> {
  const end = Date.now() + timeoutMs;
  let steered: { at: number; dir: [number, number] } | null = null;
  for (;;) {
    const at = await until(`position of ${bot.welcome.name}`, () => bot.position(bot.id));
    const dx = target[0] - at[0];
    const dy = target[1] - at[1];
    if (Math.hypot(dx, dy) < near) break;
    if (Date.now() > end) throw new Error(`${bot.welcome.name} did not reach ${target.join(',')} (at ${at.join(',')})`);
    // Passed it: the way to it now points against the way it walks.
    const passed = steered !== null && dx * steered.dir[0] + dy * steered.dir[1] < 0;
    if (steered === null || passed || Date.now() - steered.at >= 100) {
      bot.walk(dx, dy);
      steered = { at: Date.now(), dir: [dx, dy] };
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  bot.walk(0, 0);
  await new Promise((r) => setTimeout(r, 200));
  return until(`position of ${bot.welcome.name}`, () => bot.position(bot.id));
}

/** Polls `check` every 50 ms until it returns a truthy value or `timeoutMs` passes (then throws `what`). */
export async function until<T>(what: string, check: () => Maybe<T> | Promise<Maybe<T>>, timeoutMs = 10_000, context?: () => string): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${context ? `\n${context()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
