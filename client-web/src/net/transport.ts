// A transport to the shard: what carries the protocol's messages both ways,
// behind one interface with two implementations: the websocket (here) and
// WebTransport (net/webtransport.ts: the same messages on a reliable
// stream, view frames as datagrams). The connection (net/connection.ts)
// speaks to a Transport only, so the Hello, Welcome, chat, presence, names,
// resume tickets and the close policy (net/policy.ts) are the same code on
// both; which one a page gets is net/dial.ts's decision.

import { UNKNOWN_PATH, type Path } from './silence.js';

/** The transports: a websocket, or a WebTransport session (HTTP/3 over QUIC). */
export type TransportKind = 'websocket' | 'webtransport';

const KIND_LABELS: Readonly<Record<TransportKind, string>> = { websocket: 'WebSocket', webtransport: 'WebTransport' };

/** The transport's name as the HUD shows it ("WebSocket", "WebTransport"). */
export function transportLabel(kind: TransportKind): string {
  return KIND_LABELS[kind];
}

/**
 * Why the page took the websocket rather than WebTransport: the browser has
 * no WebTransport; the shard does not offer it (`/webtransport` answers 204,
 * or an error status such as an older shard's 404, or the request fails);
 * its offer is not one the page can use; the session was refused or failed
 * (a certificate that does not match, a closed port); or no session within
 * the dial's bound (UDP blocked).
 */
export type Fallback = 'unsupported' | 'not-offered' | 'bad-offer' | 'refused' | 'no-answer';

const FALLBACK_LABELS: Readonly<Record<Fallback, string>> = {
  unsupported: 'no WebTransport in this browser',
  'not-offered': 'WebTransport not offered',
  'bad-offer': 'WebTransport offer unusable',
  refused: 'WebTransport refused',
  'no-answer': 'WebTransport did not answer',
};

/** What the page says about a fallback, e.g. "WebTransport refused". */
export function fallbackLabel(fallback: Fallback): string {
  return FALLBACK_LABELS[fallback];
}

/** The transport as the HUD shows it: "WebTransport", "WebSocket", or "WebSocket (WebTransport refused)" after a fallback. */
export function transportText(kind: TransportKind, fallback: Fallback | null): string {
  return fallback === null ? transportLabel(kind) : `${transportLabel(kind)} (${fallbackLabel(fallback)})`;
}

/** What a transport tells the connection, in this order: `open` once, messages, `closed` once. */
export interface TransportEvents {
  /** Ready to send (the Hello goes first). */
  open(): void;
  /** One whole server message (a view frame, for WebTransport also from a datagram). */
  message(bytes: Uint8Array): void;
  /** A message that is not one (text on a websocket): counted as a decode error. */
  malformed(): void;
  /** The transport ended; `code` a websocket close code (1006 when it just dropped, without one). */
  closed(code: number): void;
}

/** One transport to a shard, used once: started, sent on, closed. */
export interface Transport {
  readonly kind: TransportKind;
  /** Whether messages can be sent now (after `open`, before the close). */
  readonly isOpen: boolean;
  /** Starts delivering events; `open` follows once ready (at once if it already is). */
  start(events: TransportEvents): void;
  /** Sends one message. */
  send(bytes: Uint8Array): void;
  /** Closes from this side with a websocket close code; no event follows. */
  close(code: number, reason: string): void;
  /** What it knows of its path (round trip, packets received) as of its last look, looking again at `nowMs`: net/silence.ts. */
  path(nowMs: number): Path;
}

/** A transport a dial produced, and why it is the websocket when WebTransport was wanted (null: it was not, or it is WebTransport). */
export interface Dialed {
  readonly transport: Transport;
  readonly fallback: Fallback | null;
}

/** Opens a transport to the shard (a promise while WebTransport is tried). */
export type Dial = () => Dialed | Promise<Dialed>;

/** The part of WebSocket the websocket transport uses (a fake one in tests). */
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

const OPEN = 1;

/** The websocket: binary messages both ways; its close event's code is the close code. */
export class WebSocketTransport implements Transport {
  readonly kind = 'websocket';

  /** Nothing: the browser's websocket says nothing of its TCP connection. */
  path(): Path {
    return UNKNOWN_PATH;
  }

  constructor(private readonly socket: SocketLike) {
    socket.binaryType = 'arraybuffer';
  }

  get isOpen(): boolean {
    return this.socket.readyState === OPEN;
  }

  start(events: TransportEvents): void {
    const s = this.socket;
    s.onopen = () => events.open();
    s.onmessage = (ev) => {
      if (ev.data instanceof ArrayBuffer) events.message(new Uint8Array(ev.data));
      else events.malformed(); // a server never sends text
    };
    s.onclose = (ev) => events.closed(ev.code);
    s.onerror = () => undefined; // a close event always follows
    if (s.readyState === OPEN) events.open();
  }

  send(bytes: Uint8Array): void {
    this.socket.send(bytes);
  }

  close(code: number, reason: string): void {
    const s = this.socket;
    s.onopen = s.onmessage = s.onclose = s.onerror = null;
    s.close(code, reason);
  }
}

/** A dial that opens a websocket to `url` (made by `make`, the browser's WebSocket by default). */
export function websocketDial(url: string, make: (url: string) => SocketLike = (u) => new WebSocket(u)): Dial {
  return () => ({ transport: new WebSocketTransport(make(url)), fallback: null });
}
