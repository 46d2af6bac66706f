// The websocket to the shard and its lifecycle: Hello on open (the name, the
// access token if the page was given one, the resume ticket when it has one),
// Welcome (or Busy or Error), then messages until the socket closes; then, by
// policy.ts, a reconnect that presents the resume ticket (with jitter and a
// backoff capped at 2 s), a retry after Busy's delay, a rejoin at once as a
// new player when the server no longer knows the session, or a stop with the
// reason (session replaced, a refused sign-in). A refused token is never sent
// again. A socket that goes silent or never says Welcome is abandoned and
// replaced.

import type { Timers } from '../timers.js';
import { afterClose, type ReconnectReason } from './policy.js';
import { decodeServer, encodeHello, type ServerMsg } from './protocol.js';

/** What the connection is doing, for the page to show. */
export type ConnectionState =
  | { readonly kind: 'connecting' }
  | { readonly kind: 'live' }
  | { readonly kind: 'reconnecting'; readonly attempt: number; readonly inMs: number; readonly why: ReconnectReason }
  | { readonly kind: 'busy'; readonly reason: string; readonly inMs: number }
  | { readonly kind: 'stopped'; readonly reason: string; readonly rename: boolean };

/** The part of WebSocket the connection uses (a fake one in tests). */
export interface SocketLike {
  binaryType: BinaryType;
  readonly readyState: number;
  onopen: ((ev: Event) => unknown) | null;
  onmessage: ((ev: MessageEvent) => unknown) | null;
  onclose: ((ev: CloseEvent) => unknown) | null;
  onerror: ((ev: Event) => unknown) | null;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
}

/** Callbacks of a [`Connection`]. */
export interface ConnectionHandlers {
  /** Every verified server message, with the local time it arrived (ms). */
  message(msg: ServerMsg, arrivalMs: number): void;
  /** Every change of state. */
  state(state: ConnectionState): void;
}

/** Settings of a [`Connection`]. */
export interface ConnectionOptions {
  readonly url: string;
  /** Display name sent in every Hello. */
  readonly name: string;
  /**
   * Access token (a JWT) sent in every Hello, reconnects included, until the
   * server refuses it; held in memory only. Null or absent: a guest.
   */
  readonly accessToken?: string | null;
  readonly handlers: ConnectionHandlers;
  readonly socket?: (url: string) => SocketLike;
  readonly timers: Timers;
  readonly random?: () => number;
  /** Give up on a socket that has not said Welcome this long after opening, ms. */
  readonly welcomeTimeoutMs?: number;
  /** Give up on a live socket that has sent nothing this long, ms (snapshots come 20 times a second). */
  readonly silenceMs?: number;
}

const OPEN = 1;
/** Close code of a connection that dropped without a close frame. */
const ABNORMAL = 1006;

/** One player's connection, reconnecting as policy says until stopped. */
export class Connection {
  private socket: SocketLike | null = null;
  private ticket: Uint8Array | null = null;
  private token: string | null;
  /** Whether the current socket's Hello carried the token. */
  private sentToken = false;
  /** Why the page is reconnecting, kept across the drops of one outage (a restart stays a restart). */
  private why: ReconnectReason | null = null;
  private attempt = 0;
  private busy: { reason: string; retryAfterMs: number } | undefined;
  private error: { code: number; message: string } | undefined;
  private welcomed = false;
  private everWelcomed = false;
  private stopped = false;
  private retryTimer: unknown = null;
  private watchTimer: unknown = null;
  private openedAt = 0;
  private lastMessageAt = 0;
  /** Frames refused by the verifier so far. */
  decodeErrors = 0;
  /** Sockets opened so far. */
  sockets = 0;

  constructor(private readonly opts: ConnectionOptions) {
    this.token = opts.accessToken ?? null;
  }

  /** Why the last reconnect happened (null before any); kept until the next one. */
  get lastReconnect(): ReconnectReason | null {
    return this.why;
  }

  /** Whether an access token is still sent (none given, or the server refused it: false). */
  get signedIn(): boolean {
    return this.token !== null;
  }

  /** Opens the first socket. */
  start(): void {
    this.open();
  }

  /** Sends one message if a socket is live (welcomed); returns whether it was sent. */
  send(bytes: Uint8Array): boolean {
    if (!this.welcomed || !this.socket || this.socket.readyState !== OPEN) return false;
    this.socket.send(bytes);
    return true;
  }

  /** Closes for good (the page is leaving); no reconnect follows. */
  stop(): void {
    this.stopped = true;
    this.clearTimers();
    const s = this.socket;
    this.socket = null;
    if (s) {
      this.detach(s);
      s.close(1000, 'leaving');
    }
  }

  /** Whether a Welcome was received on the current socket. */
  get live(): boolean {
    return this.welcomed;
  }

  private open(): void {
    this.retryTimer = null;
    if (this.stopped) return;
    const make = this.opts.socket ?? ((url: string) => new WebSocket(url));
    const s = make(this.opts.url);
    this.socket = s;
    this.sockets++;
    this.welcomed = false;
    this.busy = undefined;
    this.error = undefined;
    s.binaryType = 'arraybuffer';
    s.onopen = () => {
      this.openedAt = this.opts.timers.now();
      this.sentToken = this.token !== null;
      s.send(encodeHello(this.opts.name, this.ticket, this.token));
    };
    s.onmessage = (ev) => this.receive(ev);
    s.onclose = (ev) => this.closed(s, ev.code);
    s.onerror = () => undefined; // a close event always follows
    this.openedAt = this.opts.timers.now();
    this.watch();
  }

  private receive(ev: MessageEvent): void {
    const now = this.opts.timers.now();
    this.lastMessageAt = now;
    if (!(ev.data instanceof ArrayBuffer)) {
      this.decodeErrors++;
      return;
    }
    const decoded = decodeServer(new Uint8Array(ev.data));
    if (!decoded.ok) {
      this.decodeErrors++;
      return;
    }
    const msg = decoded.msg;
    switch (msg.kind) {
      case 'welcome':
        this.welcomed = true;
        this.everWelcomed = true;
        this.attempt = 0;
        this.ticket = msg.resumeTicket.length ? msg.resumeTicket : null;
        this.opts.handlers.state({ kind: 'live' });
        break;
      case 'move':
        if (msg.resumeTicket.length) this.ticket = msg.resumeTicket;
        break;
      case 'busy':
        this.busy = { reason: msg.reason, retryAfterMs: msg.retryAfterMs };
        break;
      case 'error':
        this.error = { code: msg.code, message: msg.message };
        break;
      default:
        break;
    }
    this.opts.handlers.message(msg, now);
  }

  /** Periodic check for a socket that never said Welcome or went silent. */
  private watch(): void {
    if (this.watchTimer !== null) this.opts.timers.clearTimeout(this.watchTimer);
    this.watchTimer = this.opts.timers.setTimeout(() => {
      this.watchTimer = null;
      const s = this.socket;
      if (!s || this.stopped) return;
      const now = this.opts.timers.now();
      const silent = this.welcomed && now - this.lastMessageAt > (this.opts.silenceMs ?? 8000);
      const noWelcome = !this.welcomed && now - this.openedAt > (this.opts.welcomeTimeoutMs ?? 10_000);
      if (silent || noWelcome) {
        // Do not wait for a close handshake over a dead link: drop it and go on at once.
        this.detach(s);
        s.close(1000, silent ? 'silent' : 'no welcome');
        this.closed(s, ABNORMAL);
        return;
      }
      this.watch();
    }, 1000);
  }

  private detach(s: SocketLike): void {
    s.onopen = s.onmessage = s.onclose = s.onerror = null;
  }

  private closed(s: SocketLike, code: number): void {
    if (s !== this.socket) return;
    this.socket = null;
    this.welcomed = false;
    this.clearTimers();
    if (this.stopped) return;
    const info = { code, busy: this.busy, error: this.error, attempt: this.attempt, sentToken: this.sentToken, hasTicket: this.ticket !== null };
    const next = afterClose(info, this.opts.random ?? Math.random);
    if (next.kind === 'stop') {
      this.stopped = true;
      this.opts.handlers.state({ kind: 'stopped', reason: next.reason, rename: next.rename });
      return;
    }
    if (!next.resume) this.ticket = null;
    if (next.dropToken) this.token = null;
    // A server that said it restarts and then refuses connections is still restarting.
    const outage = this.attempt > 0 && this.why === 'restart' && next.why === 'dropped';
    this.why = outage ? 'restart' : next.why;
    this.attempt++;
    const inMs = Math.round(next.delayMs);
    if (next.busy) this.opts.handlers.state({ kind: 'busy', reason: this.busy?.reason ?? 'server busy', inMs });
    else if (this.everWelcomed) this.opts.handlers.state({ kind: 'reconnecting', attempt: this.attempt, inMs, why: this.why });
    else this.opts.handlers.state({ kind: 'connecting' });
    this.retryTimer = this.opts.timers.setTimeout(() => this.open(), next.delayMs);
  }

  private clearTimers(): void {
    if (this.retryTimer !== null) this.opts.timers.clearTimeout(this.retryTimer);
    if (this.watchTimer !== null) this.opts.timers.clearTimeout(this.watchTimer);
    this.retryTimer = this.watchTimer = null;
  }
}
