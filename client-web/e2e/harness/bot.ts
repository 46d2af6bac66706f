// A bot over a real websocket (the `ws` package) that speaks through the
// client's own protocol module: Hello, Input, ChatSend; it keeps the newest
// snapshot's positions of every player (overall and per shard), and the chat
// and presence messages it received. With area of interest it keeps the
// positions of the players in the cells of the view frames it gets instead
// (its own among them: its own cell comes every tick).

import WebSocket from 'ws';
import {
  decodeServer,
  encodeChat,
  encodeHello,
  encodeInput,
  type CellMsg,
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
  /** Newest snapshot positions by player id, world units (of whichever shard sent the newest snapshot). */
  readonly positions = new Map<number, [number, number]>();
  /** Newest snapshot positions of each shard: shard id -> player id -> world units. */
  readonly shardPositions = new Map<number, Map<number, [number, number]>>();
  /** Snapshots received, in all and per shard id. */
  snapshots = 0;
  /** Area of interest: view frames received, and the cells they carried. */
  viewFrames = 0;
  cellFrames = 0;
  readonly shardSnapshots = new Map<number, number>();
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
  ) {}

  /** Connects to `url` as `name` and waits (at most `timeoutMs`) for Welcome. */
  static connect(url: string, name: string, timeoutMs = 10_000): Promise<Bot> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.binaryType = 'arraybuffer';
      let bot: Bot | null = null;
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error(`${name}: no welcome within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.on('open', () => socket.send(encodeHello(name)));
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
    if (msg.kind === 'view') {
      for (const cell of msg.cells) this.receiveCell(cell);
      this.viewFrames++;
      return;
    }
    if (msg.kind !== 'snapshot') return;
    const n = msg.playerCount;
    this.reserve(n);
    msg.readPlayers(this.cols);
    this.positions.clear();
    const ofShard = new Map<number, [number, number]>();
    for (let i = 0; i < n; i++) {
      const at: [number, number] = [this.cols.x[i] as number, this.cols.y[i] as number];
      this.positions.set(this.cols.ids[i] as number, at);
      ofShard.set(this.cols.ids[i] as number, at);
    }
    this.shardPositions.set(msg.shardId, ofShard);
    this.shardSnapshots.set(msg.shardId, (this.shardSnapshots.get(msg.shardId) ?? 0) + 1);
    this.snapshots++;
  }

  /** Keeps the positions of the players in one cell of a view frame. */
  private receiveCell(cell: CellMsg): void {
    this.reserve(cell.playerCount);
    cell.readPlayers(this.cols, this.welcome.bounds);
    for (let i = 0; i < cell.playerCount; i++) this.positions.set(this.cols.ids[i] as number, [this.cols.x[i] as number, this.cols.y[i] as number]);
    this.cellFrames++;
  }

  /** Position of player `id` in the newest snapshot of shard `shardId`, world units. */
  positionOn(shardId: number, id: number): [number, number] | undefined {
    return this.shardPositions.get(shardId)?.get(id);
  }

  /** Server-side position of player `id` in the newest snapshot, or with area of interest the newest cell listing it. */
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

/** Polls `check` every 50 ms until it returns a truthy value or `timeoutMs` passes (then throws `what`). */
export async function until<T>(what: string, check: () => Maybe<T> | Promise<Maybe<T>>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
