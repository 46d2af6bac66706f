// A loopback proxy in front of mino-server that makes a real network's round
// trip: every websocket message is held for a one-way delay (with jitter)
// in each direction, in order, as a TCP stream keeps it. Page loads are
// forwarded as they are, so the page's own-origin /ws goes through the delay.

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer, type RawData } from 'ws';

/** A running delay proxy. */
export interface DelayProxy {
  /** http://127.0.0.1:PORT/ */
  readonly http: string;
  /** Messages relayed each way so far. */
  readonly relayed: { up: number; down: number };
  /**
   * The spread of the delays page -> server messages really had since the
   * last reset, ms (99th minus 1st percentile): the jitter asked for, or more
   * when a busy machine fired the proxy's timers late.
   */
  upSpreadMs(): number;
  /** Forgets the delays measured so far. */
  resetDelays(): void;
  close(): Promise<void>;
}

/** Settings: the mean one-way delay, ms, and its jitter as a fraction (0.1: uniform within ±10 %). */
export interface DelayOptions {
  readonly oneWayMs: number;
  readonly jitter: number;
}

/** One direction of a link: messages released in order, each no earlier than its own delay. */
class DelayedPipe {
  private last = 0;

  constructor(
    private readonly opts: DelayOptions,
    private readonly deliver: (data: RawData, binary: boolean) => void,
    /** Told each message's real delay, ms. */
    private readonly delayed: (ms: number) => void = () => undefined,
  ) {}

  push(data: RawData, binary: boolean): void {
    const received = performance.now();
    const delay = this.opts.oneWayMs * (1 + this.opts.jitter * (2 * Math.random() - 1));
    const at = Math.max(this.last, received + delay);
    this.last = at;
    setTimeout(() => {
      this.delayed(performance.now() - received);
      this.deliver(data, binary);
    }, Math.max(0, at - performance.now()));
  }
}

/** Starts a proxy on a free loopback port in front of the server at `target` (host:port). */
export async function startDelayProxy(target: string, opts: DelayOptions): Promise<DelayProxy> {
  const relayed = { up: 0, down: 0 };
  const upDelays: number[] = [];
  const wss = new WebSocketServer({ noServer: true });
  const server: Server = createServer((req, res) => {
    void fetch(`http://${target}${req.url ?? '/'}`)
      .then(async (r) => {
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/octet-stream' });
        res.end(Buffer.from(await r.arrayBuffer()));
      })
      .catch(() => {
        res.writeHead(502);
        res.end();
      });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    wss.handleUpgrade(req, socket, head, (client) => relay(client, `ws://${target}${req.url ?? '/ws'}`, opts, relayed, (ms) => upDelays.push(ms)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    http: `http://127.0.0.1:${port}/`,
    relayed,
    upSpreadMs: () => {
      const d = [...upDelays].sort((a, b) => a - b);
      if (!d.length) return 0;
      const at = (q: number): number => d[Math.min(d.length - 1, Math.floor(q * d.length))] as number;
      return at(0.99) - at(0.01);
    },
    resetDelays: () => {
      upDelays.length = 0;
    },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Relays between the page's socket and one to the server, each way through a delay. */
function relay(client: WebSocket, url: string, opts: DelayOptions, relayed: { up: number; down: number }, upDelay: (ms: number) => void): void {
  const upstream = new WebSocket(url);
  const pending: [RawData, boolean][] = [];
  const up = new DelayedPipe(
    opts,
    (data, binary) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary });
      else pending.push([data, binary]);
    },
    upDelay,
  );
  const down = new DelayedPipe(opts, (data, binary) => {
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary });
  });
  upstream.on('open', () => {
    for (const [data, binary] of pending.splice(0)) upstream.send(data, { binary });
  });
  client.on('message', (data, binary) => {
    relayed.up++;
    up.push(data, binary);
  });
  upstream.on('message', (data, binary) => {
    relayed.down++;
    down.push(data, binary);
  });
  const closeBoth = (code: number): void => {
    const valid = code >= 1000 && code <= 4999 && code !== 1005 && code !== 1006 ? code : 1000;
    if (client.readyState === WebSocket.OPEN) client.close(valid);
    if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
  };
  upstream.on('close', (code) => setTimeout(() => closeBoth(code), opts.oneWayMs));
  upstream.on('error', () => closeBoth(1011));
  client.on('close', () => upstream.terminate());
  client.on('error', () => upstream.terminate());
}
