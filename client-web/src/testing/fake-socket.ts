// An in-memory stand-in for WebSocket that a test opens, feeds and closes by hand.

import type { SocketLike } from '../net/connection.js';

/** One fake socket: records what the client sent; the test plays the server. */
export class FakeSocket implements SocketLike {
  binaryType: BinaryType = 'blob';
  readyState = 0;
  onopen: ((ev: Event) => unknown) | null = null;
  onmessage: ((ev: MessageEvent) => unknown) | null = null;
  onclose: ((ev: CloseEvent) => unknown) | null = null;
  onerror: ((ev: Event) => unknown) | null = null;
  readonly sent: Uint8Array[] = [];
  closedByClient: number | null = null;

  constructor(readonly url: string) {}

  send(data: Uint8Array): void {
    this.sent.push(data);
  }

  close(code = 1000): void {
    this.closedByClient = code;
    this.readyState = 3;
  }

  /** The server accepts the connection. */
  open(): void {
    this.readyState = 1;
    this.onopen?.(new Event('open'));
  }

  /** The server sends one binary frame. */
  deliver(bytes: Uint8Array): void {
    const copy = bytes.slice();
    this.onmessage?.({ data: copy.buffer } as MessageEvent);
  }

  /** The connection closes with `code`. */
  drop(code: number): void {
    this.readyState = 3;
    this.onclose?.({ code } as CloseEvent);
  }
}
