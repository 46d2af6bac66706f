// Which transport the page takes, decided afresh at every connect (so a
// player resuming on another shard takes that shard's WebTransport the same
// way): WebTransport when the browser has it, the shard offers it at
// `/webtransport` on the page's own origin and a session with its stream is
// up within WEBTRANSPORT_DEADLINE_MS; otherwise the websocket, and why
// (a Fallback: the HUD says it).
//
// The offer (server/src/webtransport/mod.rs, `Offer`) is JSON:
// {"addr": "IP:PORT", "port": PORT, "certificateHashes": [{"algorithm":
// "sha-256", "value": HEX}]}. The session goes to `https://HOST:PORT/`,
// HOST the offer's unless it is unspecified (0.0.0.0, ::), then the page's
// own; with hashes (a shard's self-signed certificate) the browser takes
// the certificate by them (`serverCertificateHashes`), without (the
// operator's certificate) it verifies it as usual.

import type { Timers } from '../timers.js';
import { type Dial, type Dialed, type Fallback, type SocketLike, WebSocketTransport } from './transport.js';
import { type SessionLike, WebTransportTransport } from './webtransport.js';

/**
 * Longest the page tries WebTransport before it takes the websocket, ms,
 * from the offer's request to the session's stream: on loopback and
 * ordinary paths a session is up in a few round trips (Chromium on this
 * machine: 20-150 ms), so 1.5 s is many times that even on a slow mobile
 * link, yet a player whose UDP is blocked (no answer at all, which QUIC
 * would otherwise wait out for its whole handshake timeout) waits at most
 * this before playing over the websocket.
 */
export const WEBTRANSPORT_DEADLINE_MS = 1500;

/** Where the offer is asked for, on the page's origin. */
export const OFFER_PATH = '/webtransport';

/** A shard's WebTransport offer, checked. */
export interface Offer {
  /** The host to reach it by; null when the shard listens on every address (the page's own host then). */
  readonly host: string | null;
  readonly port: number;
  /** SHA-256 hashes of its certificate (32 bytes each); empty: the operator's certificate, verified as usual. */
  readonly hashes: readonly Uint8Array[];
}

/** The bytes of `hex` (even length, hex digits only), or null. */
function hexBytes(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return null;
  return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}

/** The host of "HOST:PORT" ("[v6]:PORT" too), null if unspecified, undefined if not an address. */
function hostOf(addr: string): string | null | undefined {
  const colon = addr.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const host = addr.slice(0, colon);
  if (host === '0.0.0.0' || host === '[::]') return null;
  return /^[A-Za-z0-9.\-[\]:]+$/.test(host) ? host : undefined;
}

/** The offer in `json`, or null if it is not one the page can use. */
export function parseOffer(json: unknown): Offer | null {
  if (typeof json !== 'object' || json === null) return null;
  const o = json as { addr?: unknown; port?: unknown; certificateHashes?: unknown };
  if (typeof o.addr !== 'string' || typeof o.port !== 'number') return null;
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) return null;
  const host = hostOf(o.addr);
  if (host === undefined) return null;
  const list = o.certificateHashes ?? [];
  if (!Array.isArray(list)) return null;
  const hashes: Uint8Array[] = [];
  for (const h of list as unknown[]) {
    const entry = h as { algorithm?: unknown; value?: unknown } | null;
    if (entry?.algorithm !== 'sha-256' || typeof entry.value !== 'string') return null;
    const bytes = hexBytes(entry.value);
    if (bytes?.length !== 32) return null;
    hashes.push(bytes);
  }
  return { host, port: o.port, hashes };
}

/** The session's URL for `offer` on a page at `pageUrl`. */
export function sessionUrl(offer: Offer, pageUrl: string): string {
  const host = offer.host ?? new URL(pageUrl).hostname;
  return `https://${host}:${offer.port}/`;
}

/** What a fetch of the offer answered (the part of Response used). */
export interface OfferResponse {
  readonly ok: boolean;
  /** The HTTP status: 200 with an offer; 204, none (a shard without WebTransport). */
  readonly status: number;
  json(): Promise<unknown>;
}

/** The browser's WebTransport constructor's options (the part used). */
export interface SessionOptions {
  readonly serverCertificateHashes?: { algorithm: 'sha-256'; value: Uint8Array }[];
  /** Datagrams required: a session without them (WebTransport over HTTP/2) is refused, the page then takes the websocket. */
  readonly requireUnreliable?: boolean;
}

/** What the dial needs from the page (the browser's in [`browserDial`], fakes in tests). */
export interface DialEnv {
  /** The page's URL (the offer is on its origin, the websocket at `wsUrl`). */
  readonly pageUrl: string;
  /** The websocket's URL. */
  readonly wsUrl: string;
  readonly timers: Timers;
  /** GETs the offer; must honour the signal. */
  fetch(url: string, signal: AbortSignal): Promise<OfferResponse>;
  /** Opens a WebTransport session; null: the browser has none. */
  readonly webTransport: ((url: string, options: SessionOptions) => SessionLike) | null;
  webSocket(url: string): SocketLike;
  /** Largest message taken off the stream, bytes. */
  readonly maxMessageBytes: number;
  /** The bound, ms (WEBTRANSPORT_DEADLINE_MS unless a test says otherwise). */
  readonly deadlineMs?: number;
}

/** Closes a session that came too late or that the page gave up on, quietly. */
function discard(session: SessionLike | null): void {
  if (!session) return;
  try {
    session.close({ closeCode: 1000, reason: 'too late' });
  } catch {
    // Not open yet or already closed.
  }
}

/** The offer, then a session and its stream; what went wrong otherwise. */
async function attempt(env: DialEnv, make: NonNullable<DialEnv['webTransport']>, signal: AbortSignal, opened: (s: SessionLike) => void): Promise<WebTransportTransport | Fallback> {
  let response: OfferResponse;
  try {
    response = await env.fetch(new URL(OFFER_PATH, env.pageUrl).href, signal);
  } catch {
    return 'not-offered';
  }
  // 204: a shard without WebTransport (no offer, and no error in the console).
  if (!response.ok || response.status === 204) return 'not-offered';
  let offer: Offer | null;
  try {
    offer = parseOffer(await response.json());
  } catch {
    offer = null;
  }
  if (!offer) return 'bad-offer';
  const hashes = offer.hashes.map((value) => ({ algorithm: 'sha-256' as const, value }));
  let session: SessionLike;
  try {
    const options: SessionOptions = hashes.length ? { serverCertificateHashes: hashes, requireUnreliable: true } : { requireUnreliable: true };
    session = make(sessionUrl(offer, env.pageUrl), options);
  } catch {
    return 'refused';
  }
  // Seen, so that no rejection goes unhandled whatever happens next.
  session.closed.catch(() => undefined);
  opened(session);
  try {
    await session.ready;
    const stream = await session.createBidirectionalStream();
    return new WebTransportTransport(session, stream, env.maxMessageBytes);
  } catch {
    discard(session);
    return 'refused';
  }
}

/**
 * Tries WebTransport within the bound: the transport, or why not (a
 * session that comes after the bound is closed).
 */
export async function tryWebTransport(env: DialEnv): Promise<WebTransportTransport | Fallback> {
  const make = env.webTransport;
  if (!make) return 'unsupported';
  const abort = new AbortController();
  const opened: { session: SessionLike | null } = { session: null };
  const tried = attempt(env, make, abort.signal, (s) => (opened.session = s));
  let timer: unknown = null;
  const deadline = new Promise<'no-answer'>((resolve) => {
    timer = env.timers.setTimeout(() => resolve('no-answer'), env.deadlineMs ?? WEBTRANSPORT_DEADLINE_MS);
  });
  const result = await Promise.race([tried, deadline]);
  env.timers.clearTimeout(timer);
  if (result === 'no-answer') {
    abort.abort();
    discard(opened.session);
    void tried.then((late) => {
      if (typeof late !== 'string') late.close(1000, 'too late');
    });
  }
  return result;
}

/** A dial that tries WebTransport first and falls back to the websocket by itself. */
export function webTransportFirst(env: DialEnv): Dial {
  return async (): Promise<Dialed> => {
    const tried = await tryWebTransport(env);
    if (typeof tried !== 'string') return { transport: tried, fallback: null };
    return { transport: new WebSocketTransport(env.webSocket(env.wsUrl)), fallback: tried };
  };
}

/** The browser's WebTransport, if it has one. */
function browserWebTransport(): DialEnv['webTransport'] {
  const Ctor = (globalThis as { WebTransport?: new (url: string, options?: SessionOptions) => SessionLike }).WebTransport;
  return Ctor ? (url, options) => new Ctor(url, options) : null;
}

/** The page's dial: WebTransport first, the websocket at `wsUrl` otherwise. */
export function browserDial(pageUrl: string, wsUrl: string, timers: Timers, maxMessageBytes: number): Dial {
  return webTransportFirst({
    pageUrl,
    wsUrl,
    timers,
    maxMessageBytes,
    fetch: (url, signal) => fetch(url, { signal, cache: 'no-store' }),
    webTransport: browserWebTransport(),
    webSocket: (url) => new WebSocket(url),
  });
}
