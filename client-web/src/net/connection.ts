// The connection to the shard and its lifecycle, over whichever transport
// the dial gives (net/transport.ts: the websocket or WebTransport, chosen by
// net/dial.ts at every connect): Hello on open (the name, the access token
// if the page was given one, the resume ticket when it has one), Welcome (or
// Busy or Error), then messages until the transport closes; then, by
// policy.ts, a reconnect that presents the resume ticket (with jitter and a
// backoff capped at 2 s), a retry after Busy's delay, a rejoin at once as a
// new player when the server no longer knows the session, or a stop with the
// reason (session replaced, a refused sign-in). A refused token is never sent
// again. A transport that goes silent or never says Welcome is abandoned and
// replaced; a WebTransport session sooner, when a Ping its silence called for
// goes unanswered (net/silence.ts: a killed shard sends no reset over UDP).

import type { Timers } from '../timers.js';
import { afterClose, type ReconnectReason } from './policy.js';
import { decodeServer, encodeHello, encodePing, type ServerMsg } from './protocol.js';
import { MIN_PROBE_AFTER_MS, Silence } from './silence.js';
import type { Dial, Dialed, Fallback, Transport, TransportKind } from './transport.js';

/** What the connection is doing, for the page to show. */
export type ConnectionState =
  | { readonly kind: 'connecting' }
  | { readonly kind: 'live' }
  | { readonly kind: 'reconnecting'; readonly attempt: number; readonly inMs: number; readonly why: ReconnectReason }
  | { readonly kind: 'busy'; readonly reason: string; readonly inMs: number }
  | { readonly kind: 'stopped'; readonly reason: string; readonly rename: boolean };

/** Callbacks of a [`Connection`]. */
export interface ConnectionHandlers {
  /** Every verified server message, with the local time it arrived (ms). */
  message(msg: ServerMsg, arrivalMs: number): void;
  /** Every change of state. */
  state(state: ConnectionState): void;
}

/** Settings of a [`Connection`]. */
export interface ConnectionOptions {
  /** Opens a transport to the shard, at the start and at every reconnect. */
  readonly dial: Dial;
  /** Display name sent in every Hello. */
  readonly name: string;
  /**
   * Access token (a JWT) sent in every Hello, reconnects included, until the
   * server refuses it; held in memory only. Null or absent: a guest.
   */
  readonly accessToken?: string | null;
  readonly handlers: ConnectionHandlers;
  readonly timers: Timers;
  readonly random?: () => number;
  /** Give up on a transport that has not said Welcome this long after opening, ms. */
  readonly welcomeTimeoutMs?: number;
  /** Give up on a live transport that has sent nothing this long, ms (a still place sends no frames, but net/keepalive pings every 2 s and each Pong counts). */
  readonly silenceMs?: number;
}

/** How often the connection looks for a silent transport or a missing Welcome, ms. */
const WATCH_EVERY_MS = 1000;

/** Close code of a connection that dropped without a close frame. */
const ABNORMAL = 1006;

/** One player's connection, reconnecting as policy says until stopped. */
export class Connection {
  private transport: Transport | null = null;
  /** The transport of the last dial and why it is not WebTransport (null: it is, or none yet). */
  private dialed: Dialed | null = null;
  private ticket: Uint8Array | null = null;
  private token: string | null;
  /** Whether the current transport's Hello carried the token. */
  private sentToken = false;
  /** Why the page is reconnecting, kept across the drops of one outage (a restart stays a restart). */
  private why: ReconnectReason | null = null;
  private attempt = 0;
  private busy: { reason: string; retryAfterMs: number } | undefined;
  private error: { code: number; message: string } | undefined;
  private welcomed = false;
  /** A dial is under way (WebTransport being tried): no transport yet. */
  private dialing = false;
  private everWelcomed = false;
  private stopped = false;
  private retryTimer: unknown = null;
  private watchTimer: unknown = null;
  /** The current WebTransport session's silence (null: a websocket, or not welcomed yet). */
  private silence: Silence | null = null;
  /** The latest round trip a Pong showed, ms (null: none yet): the silence's when the transport gives none. */
  private pongRttMs: number | null = null;
  private openedAt = 0;
  private lastMessageAt = 0;
  /** Frames refused by the verifier so far. */
  decodeErrors = 0;
  /** Transports opened (dialed) so far. */
  sockets = 0;
  /** View frames that came before this transport's Welcome (a datagram may overtake it on the stream), dropped. */
  earlyViews = 0;

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

  /** The kind of the current (or last) transport; null before the first dial ends. */
  get transportKind(): TransportKind | null {
    return this.dialed?.transport.kind ?? null;
  }

  /** Why the current (or last) transport is the websocket rather than WebTransport (null: it is not a fallback). */
  get fallback(): Fallback | null {
    return this.dialed?.fallback ?? null;
  }

  /** Opens the first transport. */
  start(): void {
    this.open();
  }

  /** Sends one message if a transport is live (welcomed); returns whether it was sent. */
  send(bytes: Uint8Array): boolean {
    if (!this.welcomed || !this.transport?.isOpen) return false;
    this.transport.send(bytes);
    return true;
  }

  /** Closes for good (the page is leaving); no reconnect follows. */
  stop(): void {
    this.stopped = true;
    this.clearTimers();
    const t = this.transport;
    this.transport = null;
    t?.close(1000, 'leaving');
  }

  /**
   * Drops the live transport at once and reconnects as after a dropped link
   * (resuming with the ticket): the page could not apply a frame to what it
   * held, and a new transport starts from nothing. Nothing happens without a
   * transport or once stopped.
   */
  resync(): void {
    const t = this.transport;
    if (!t || this.stopped) return;
    t.close(1000, 'resync');
    this.closed(t, ABNORMAL);
  }

  /** Whether a reconnect is waiting to happen (false once stopped for good). */
  get reconnectPending(): boolean {
    return this.retryTimer !== null;
  }

  /** Whether a Welcome was received on the current transport. */
  get live(): boolean {
    return this.welcomed;
  }

  private open(): void {
    this.retryTimer = null;
    if (this.stopped) return;
    this.sockets++;
    this.welcomed = false;
    this.busy = undefined;
    this.error = undefined;
    this.openedAt = this.opts.timers.now();
    this.dialing = true;
    this.watch();
    const dialed = this.opts.dial();
    if (dialed instanceof Promise) {
      dialed.then(
        (d) => this.attach(d),
        () => this.dialFailed(),
      );
    } else this.attach(dialed);
  }

  /** A dial that gave no transport at all (it never should: the websocket is its fallback) counts as a drop. */
  private dialFailed(): void {
    this.dialing = false;
    if (this.transport === null && !this.stopped) this.ended(ABNORMAL);
  }

  /** Starts the transport a dial gave (closed at once if the page stopped meanwhile). */
  private attach(dialed: Dialed): void {
    this.dialing = false;
    const t = dialed.transport;
    if (this.stopped) {
      t.close(1000, 'leaving');
      return;
    }
    this.dialed = dialed;
    this.transport = t;
    this.openedAt = this.opts.timers.now();
    t.start({
      open: () => {
        this.openedAt = this.opts.timers.now();
        this.sentToken = this.token !== null;
        t.send(encodeHello(this.opts.name, this.ticket, this.token));
      },
      message: (bytes) => {
        if (t === this.transport) this.receive(bytes);
      },
      malformed: () => {
        if (t !== this.transport) return;
        this.lastMessageAt = this.opts.timers.now();
        this.decodeErrors++;
      },
      closed: (code) => this.closed(t, code),
    });
  }

  private receive(bytes: Uint8Array): void {
    const now = this.opts.timers.now();
    this.lastMessageAt = now;
    this.silence?.heard(now);
    const decoded = decodeServer(bytes);
    if (!decoded.ok) {
      this.decodeErrors++;
      return;
    }
    const msg = decoded.msg;
    switch (msg.kind) {
      case 'view':
        if (!this.welcomed) {
          // It belongs to this transport's player, who is not welcomed yet: what it holds starts at the Welcome.
          this.earlyViews++;
          return;
        }
        break;
      case 'welcome':
        this.welcomed = true;
        // A dead WebTransport shard is noticed by its silence (looked at from now on); a websocket's is reset at once.
        this.silence = this.transport?.kind === 'webtransport' ? new Silence(now) : null;
        this.pongRttMs = null;
        if (this.silence) this.watch(MIN_PROBE_AFTER_MS);
        this.everWelcomed = true;
        this.attempt = 0;
        this.ticket = msg.resumeTicket.length ? msg.resumeTicket : null;
        this.opts.handlers.state({ kind: 'live' });
        break;
      case 'move':
        if (msg.resumeTicket.length) this.ticket = msg.resumeTicket;
        break;
      case 'pong':
        if (now >= msg.clientTimeMs && now - msg.clientTimeMs < 60_000) this.pongRttMs = now - msg.clientTimeMs;
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

  /**
   * Periodic check (every second, sooner when a WebTransport session's
   * silence is due: net/silence.ts) for a transport that never said Welcome
   * or went silent.
   */
  private watch(delayMs = WATCH_EVERY_MS): void {
    if (this.watchTimer !== null) this.opts.timers.clearTimeout(this.watchTimer);
    this.watchTimer = this.opts.timers.setTimeout(() => {
      this.watchTimer = null;
      if (this.stopped) return;
      const t = this.transport;
      const now = this.opts.timers.now();
      let next = WATCH_EVERY_MS;
      let unanswered = false;
      if (t && this.welcomed && this.silence) {
        const path = t.path(now);
        const v = this.silence.check(now, { ...path, rttMs: path.rttMs ?? this.pongRttMs });
        if (v.kind === 'probe') t.send(encodePing(now));
        // Looked at every MIN_PROBE_AFTER_MS at least: a message since may have brought the Ping's time nearer.
        if (v.kind === 'dead') unanswered = true;
        else next = Math.min(next, MIN_PROBE_AFTER_MS, Math.max(1, v.atMs - now));
      }
      const silent = unanswered || (this.welcomed && now - this.lastMessageAt > (this.opts.silenceMs ?? 8000));
      const noWelcome = !this.welcomed && !this.dialing && now - this.openedAt > (this.opts.welcomeTimeoutMs ?? 10_000);
      if (t && (silent || noWelcome)) {
        // Do not wait for a close handshake over a dead link: drop it and go on at once.
        t.close(1000, silent ? 'silent' : 'no welcome');
        this.closed(t, ABNORMAL);
        return;
      }
      this.watch(next);
    }, delayMs);
  }

  private closed(t: Transport, code: number): void {
    if (t !== this.transport) return;
    this.ended(code);
  }

  /** The transport (or the dial) ended with `code`: what the close policy says next. */
  private ended(code: number): void {
    this.transport = null;
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
