// An in-memory stand-in for the browser's WebTransport session that a test
// readies, feeds (stream chunks, datagrams) and closes by hand, with real
// WHATWG streams.

import { framed } from '../net/framing.js';
import type { BidiStreamLike, SessionCloseInfo, SessionLike } from '../net/webtransport.js';

/** A promise with its settlers. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One fake session: records what the page wrote on its stream; the test plays the server. */
export class FakeSession implements SessionLike {
  readonly ready: Promise<unknown>;
  readonly closed: Promise<SessionCloseInfo>;
  readonly datagrams: { readonly readable: ReadableStream<Uint8Array> };
  /** Bytes the page wrote on the stream, chunk by chunk. */
  readonly written: Uint8Array[] = [];
  /** The page's close, if it closed. */
  closedByPage: SessionCloseInfo | null = null;
  streamsOpened = 0;
  /** What `getStats()` answers (Chromium's fields), set by the test; null: the method is absent. */
  stats: { packetsReceived?: number; smoothedRtt?: number } | null = null;
  private readonly readyD = deferred<unknown>();
  private readonly closedD = deferred<SessionCloseInfo>();
  private datagramCtl!: ReadableStreamDefaultController<Uint8Array>;
  private streamCtl: ReadableStreamDefaultController<Uint8Array> | null = null;

  constructor(
    readonly url: string,
    readonly options: unknown,
  ) {
    this.ready = this.readyD.promise;
    this.closed = this.closedD.promise;
    this.ready.catch(() => undefined);
    this.datagrams = { readable: new ReadableStream<Uint8Array>({ start: (c) => (this.datagramCtl = c) }) };
  }

  /** The handshake succeeds. */
  accept(): void {
    this.readyD.resolve(undefined);
  }

  /** The handshake fails (a certificate that does not match, a closed port). */
  fail(): void {
    const e = new Error('WebTransportError: Opening handshake failed.');
    this.readyD.reject(e);
    this.closedD.reject(e);
  }

  get getStats(): (() => Promise<unknown>) | undefined {
    const stats = this.stats;
    return stats === null ? undefined : () => Promise.resolve({ ...stats });
  }

  createBidirectionalStream(): Promise<BidiStreamLike> {
    this.streamsOpened++;
    const readable = new ReadableStream<Uint8Array>({ start: (c) => (this.streamCtl = c) });
    const writable = new WritableStream<Uint8Array>({ write: (chunk) => void this.written.push(chunk.slice()) });
    return Promise.resolve({ readable, writable });
  }

  /** The server writes raw bytes on the stream. */
  streamBytes(bytes: Uint8Array): void {
    this.streamCtl?.enqueue(bytes.slice());
  }

  /** The server writes one message on the stream (with its length prefix). */
  streamMessage(message: Uint8Array): void {
    this.streamBytes(framed(message));
  }

  /** The server sends one datagram. */
  datagram(bytes: Uint8Array): void {
    this.datagramCtl.enqueue(bytes.slice());
  }

  /** The server finishes its side of the stream. */
  finishStream(): void {
    this.streamCtl?.close();
  }

  /** The connection goes (as Chromium reports a QUIC close: `closed` rejects, no code). */
  lose(): void {
    this.closedD.reject(new Error('WebTransportError: Connection lost.'));
    this.streamCtl?.error(new Error('lost'));
    this.datagramCtl.error(new Error('lost'));
  }

  /** The session closes with a WebTransport close (a code the page can read). */
  closeWith(info: SessionCloseInfo): void {
    this.closedD.resolve(info);
  }

  close(info?: SessionCloseInfo): void {
    this.closedByPage ??= info ?? {};
    this.closedD.resolve(info ?? {});
  }
}

/** Lets every pending promise callback run (stream reads, dial steps). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setTimeout(r, 0));
}
