// An in-memory stand-in for WebSocket that a test opens, feeds and closes by hand.

import * as flatbuffers from 'flatbuffers';
import type { SocketLike } from '../net/transport.js';
import { Error as ErrorMsg, ServerBody, ServerMessage, type CloseCode } from '../generated/mino/wire.js';

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

  /** The server sends an Error of `code` saying `message` (encoded with the generated builder). */
  error(code: CloseCode, message: string): void {
    const b = new flatbuffers.Builder(64);
    const body = ErrorMsg.createError(b, code, b.createString(message));
    ServerMessage.startServerMessage(b);
    ServerMessage.addBodyType(b, ServerBody.Error);
    ServerMessage.addBody(b, body);
    b.finish(ServerMessage.endServerMessage(b));
    this.deliver(b.asUint8Array());
  }

  /** The connection closes with `code`. */
  drop(code: number): void {
    this.readyState = 3;
    this.onclose?.({ code } as CloseEvent);
  }
}
