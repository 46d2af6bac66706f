// The WebTransport transport (HTTP/3 over QUIC): one established session
// and the one bidirectional stream the page opened on it. The stream
// carries exactly the websocket's binary messages, each with its 4-byte
// length (net/framing.ts), from the Hello to the Error the server sends
// before a close; view frames come as datagrams, each a whole view frame
// that decodes and applies alone (or on the stream: a cell too big for a
// datagram), and go to the connection like any other message (the same
// decoder, net/view.ts and net/held.ts, takes them).
//
// The close code: browsers do not show a QUIC connection's application
// close code (Chromium 156: `closed` rejects with "Connection lost", no
// code), so the code the close policy acts on comes from the Error message
// the server writes on the stream before it closes (it does so for every
// close its peer can still hear: server/src/webtransport/session.rs). A
// WebTransport session close that does carry a code (a CLOSE_WEBTRANSPORT_SESSION
// capsule) is taken as the close code; anything else is 1006, a drop.

import { FramingError, MessageReader, framed } from './framing.js';
import type { Transport, TransportEvents } from './transport.js';
import { UNKNOWN_PATH, type Path } from './silence.js';

/** A session's close as the browser reports it. */
export interface SessionCloseInfo {
  readonly closeCode?: number;
  readonly reason?: string;
}

/** The bidirectional stream's two halves. */
export interface BidiStreamLike {
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<Uint8Array>;
}

/** The part of the browser's WebTransport the page uses (a fake one in tests). */
export interface SessionLike {
  readonly ready: Promise<unknown>;
  readonly closed: Promise<SessionCloseInfo>;
  readonly datagrams: { readonly readable: ReadableStream<Uint8Array> };
  createBidirectionalStream(): Promise<BidiStreamLike>;
  close(info?: SessionCloseInfo): void;
  /**
   * The connection's statistics (the spec's `packetsReceived`, `smoothedRtt`
   * in ms), where the browser has them: Chromium 156 has no `getStats()` on
   * a WebTransport, so a page there judges its silence by messages alone,
   * with the Pongs' round trip (net/silence.ts).
   */
  getStats?(): Promise<unknown>;
}

/** The path facts read from a session's `getStats()` answer, asked for at `asOfMs` (fields not numbers are unknown). */
export function pathOfStats(stats: unknown, asOfMs: number): Path {
  const s = (typeof stats === 'object' && stats !== null ? stats : {}) as Record<string, unknown>;
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
  return { rttMs: num(s.smoothedRtt), packets: num(s.packetsReceived), asOfMs };
}

/** A statistics read unanswered this long is given up and another asked for, ms. */
const STATS_STUCK_MS = 1000;

/** Close code of a transport that dropped without one. */
const ABNORMAL = 1006;

/** The close code a session's close info gives: its code when it is a websocket one (1000-4999), else 1006. */
export function closeCodeOf(info: SessionCloseInfo | undefined): number {
  const code = info?.closeCode;
  return code !== undefined && Number.isInteger(code) && code >= 1000 && code <= 4999 ? code : ABNORMAL;
}

/** An established WebTransport session as a [`Transport`]. */
export class WebTransportTransport implements Transport {
  readonly kind = 'webtransport';
  private events: TransportEvents | null = null;
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly reader: MessageReader;
  private ended = false;
  /** Datagrams taken (each a view frame). */
  datagrams = 0;
  /** The path as the session's statistics last said (refreshed at each look). */
  private lastPath: Path = UNKNOWN_PATH;
  /** When the read in flight was asked for (null: none). */
  private statsAskedAt: number | null = null;

  constructor(
    private readonly session: SessionLike,
    private readonly stream: BidiStreamLike,
    /** Largest message taken off the stream, bytes (the protocol's server message limit). */
    maxMessageBytes: number,
  ) {
    this.writer = stream.writable.getWriter();
    this.reader = new MessageReader(maxMessageBytes);
  }

  get isOpen(): boolean {
    return this.events !== null && !this.ended;
  }

  start(events: TransportEvents): void {
    this.events = events;
    events.open();
    void this.readStream();
    void this.readDatagrams();
    this.session.closed.then(
      (info) => this.end(closeCodeOf(info)),
      () => this.end(ABNORMAL),
    );
  }

  send(bytes: Uint8Array): void {
    if (!this.isOpen) return;
    // Writes queue in order; a failed one means the session is going, which `closed` reports.
    this.writer.write(framed(bytes)).catch(() => undefined);
  }

  /**
   * The path as last read (its `asOfMs`: when that read was asked for), and
   * a new read asked for at `nowMs` (the statistics come asynchronously, so
   * the silence believes a count only once read late enough).
   */
  path(nowMs: number): Path {
    const stuck = this.statsAskedAt !== null && nowMs - this.statsAskedAt > STATS_STUCK_MS;
    if (this.session.getStats && !this.ended && (this.statsAskedAt === null || stuck)) {
      const asked = nowMs;
      this.statsAskedAt = asked;
      const done = (): void => {
        if (this.statsAskedAt === asked) this.statsAskedAt = null;
      };
      try {
        this.session.getStats().then((s) => {
          if (asked >= this.lastPath.asOfMs) this.lastPath = pathOfStats(s, asked);
          done();
        }, done);
      } catch {
        // A browser whose getStats throws: the messages alone, as without one.
        done();
      }
    }
    return this.lastPath;
  }

  close(code: number, reason: string): void {
    this.ended = true;
    this.events = null;
    try {
      this.session.close({ closeCode: code, reason });
    } catch {
      // Already closed.
    }
  }

  /** Messages off the stream until it ends; its end (or a framing fault) ends the transport. */
  private async readStream(): Promise<void> {
    const reader = this.stream.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (this.ended) return;
        if (done) {
          this.reader.finish();
          break;
        }
        this.reader.feed(value);
        for (let m = this.reader.take(); m !== null; m = this.reader.take()) {
          if (this.ended) return;
          this.events?.message(m);
        }
      }
    } catch (e) {
      if (e instanceof FramingError) this.events?.malformed();
    }
    this.end(ABNORMAL);
  }

  /** Each datagram is a view frame, given as a message. */
  private async readDatagrams(): Promise<void> {
    const reader = this.session.datagrams.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || this.ended) return;
        this.datagrams++;
        this.events?.message(value);
      }
    } catch {
      // The session went; `closed` says so.
    }
  }

  /** Ends once: tells the connection the close code, closes the session. */
  private end(code: number): void {
    if (this.ended) return;
    this.ended = true;
    const events = this.events;
    this.events = null;
    try {
      this.session.close();
    } catch {
      // Already closed.
    }
    events?.closed(code);
  }
}
