// A player over a real websocket (the `ws` package, the client's own
// protocol module) that does what a page does when its shard drains: on a
// Move it reconnects to the next shard's URL with the Move's ticket and
// resumes as itself; with `followDrops`, a connection that drops (its shard
// died) too, at once, as a page behind a load balancer would. It records
// every welcome (player and shard), the server's last Error and how its
// sockets closed.

import WebSocket from 'ws';
import { decodeServer, encodeHello } from '../../src/net/protocol.js';

/** One welcome: who and where. */
export interface Landing {
  readonly playerId: number;
  readonly shardId: number;
}

/** A player that follows moves across `urls`. */
export class Roamer {
  /** Every welcome, in order. */
  readonly landings: Landing[] = [];
  /** Close codes of its sockets, in order. */
  readonly closes: number[] = [];
  /** The server's Errors (code and text), in order. */
  readonly errors: { readonly code: number; readonly message: string }[] = [];
  private socket: WebSocket | null = null;
  private ticket: Uint8Array | null = null;
  private at = 0;
  private stopped = false;

  private constructor(
    readonly name: string,
    private readonly urls: readonly string[],
    private readonly followDrops: boolean,
  ) {}

  /**
   * Joins on `urls[first]` as `name`; resolves once welcomed (at most
   * `timeoutMs`). With `followDrops` a dropped connection (1006: its shard
   * died) resumes on the next URL too.
   */
  static async join(name: string, urls: readonly string[], first = 0, timeoutMs = 10_000, followDrops = false): Promise<Roamer> {
    const r = new Roamer(name, urls, followDrops);
    r.at = first;
    r.open();
    const end = Date.now() + timeoutMs;
    while (r.landings.length === 0) {
      if (Date.now() > end) throw new Error(`${name}: no welcome within ${timeoutMs} ms (closes ${r.closes.join(',')})`);
      await new Promise((res) => setTimeout(res, 20));
    }
    return r;
  }

  /** The newest welcome. */
  get landing(): Landing | undefined {
    return this.landings[this.landings.length - 1];
  }

  private open(): void {
    const socket = new WebSocket(this.urls[this.at] as string);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    let moving = false;
    socket.on('open', () => socket.send(encodeHello(this.name, this.ticket)));
    socket.on('message', (data: ArrayBuffer) => {
      const d = decodeServer(new Uint8Array(data));
      if (!d.ok) return;
      const m = d.msg;
      if (m.kind === 'welcome') {
        this.ticket = m.resumeTicket;
        this.landings.push({ playerId: m.playerId, shardId: m.shardId });
      } else if (m.kind === 'error') {
        this.errors.push({ code: m.code, message: m.message });
      } else if (m.kind === 'move') {
        this.ticket = m.resumeTicket;
        moving = true;
      }
    });
    socket.on('close', (code) => {
      this.closes.push(code);
      const dropped = this.followDrops && code === 1006 && this.ticket !== null;
      if ((moving || dropped) && !this.stopped) {
        // The next shard: the way a load balancer would send the page elsewhere
        // (after a drop, 20 ms later: a refused connection drops too).
        this.at = (this.at + 1) % this.urls.length;
        if (moving) this.open();
        else setTimeout(() => this.stopped || this.open(), 20);
      }
    });
    socket.on('error', () => undefined);
  }

  /** Closes normally. */
  close(): void {
    this.stopped = true;
    this.socket?.close(1000);
  }
}
