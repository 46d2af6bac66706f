// Messages on a WebTransport session's reliable stream: each one its length,
// 4 bytes little-endian, then the message (a FlatBuffers `ClientMessage` one
// way, a `ServerMessage` the other: the bytes a websocket message carries).
// The length prefix replaces the websocket's framing; nothing else does
// (the server's side: server/src/webtransport/framing.rs).
//
//   stream  := message*
//   message := len (u32 le) bytes[len]

/** Bytes of the length prefix. */
export const PREFIX_BYTES = 4;

/** Why no more messages come from a stream: a length over the limit, or the stream ended inside a message. */
export type FramingFault = 'too-big' | 'truncated';

/** What a stream's framing came to when it could not go on. */
export class FramingError extends Error {
  constructor(
    readonly fault: FramingFault,
    /** The length read (too-big), or the bytes left unread (truncated). */
    readonly bytes: number,
  ) {
    super(fault === 'too-big' ? `message of ${bytes} bytes over the limit` : `the stream ended inside a message (${bytes} bytes left)`);
    this.name = 'FramingError';
  }
}

/** `message` with its length prefix, as one buffer to write on the stream. */
export function framed(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(PREFIX_BYTES + message.length);
  new DataView(out.buffer).setUint32(0, message.length, true);
  out.set(message, PREFIX_BYTES);
  return out;
}

/**
 * Reads length-prefixed messages out of the chunks a stream gives, whatever
 * their boundaries: what it holds of an unfinished message stays until the
 * next chunk. A length over `max` bytes is refused as soon as its prefix is
 * read, before its bytes come.
 */
export class MessageReader {
  private buf: Uint8Array;
  /** Unread bytes are buf[start, end). */
  private start = 0;
  private end = 0;

  constructor(
    /** Largest message taken, bytes. */
    private readonly max: number,
    initialBytes = 4096,
  ) {
    this.buf = new Uint8Array(initialBytes);
  }

  /** Bytes held of messages not yet whole. */
  get pending(): number {
    return this.end - this.start;
  }

  /** Takes a chunk read off the stream (copied; the caller may reuse it). */
  feed(chunk: Uint8Array): void {
    if (this.end + chunk.length > this.buf.length) this.makeRoom(chunk.length);
    this.buf.set(chunk, this.end);
    this.end += chunk.length;
  }

  /**
   * The next whole message (a fresh copy, which the caller may keep), or
   * null until more bytes come.
   *
   * Throws: a FramingError 'too-big' for a length over the limit.
   */
  take(): Uint8Array | null {
    if (this.pending < PREFIX_BYTES) return null;
    const b = this.buf;
    const s = this.start;
    const len = ((b[s] as number) | ((b[s + 1] as number) << 8) | ((b[s + 2] as number) << 16) | ((b[s + 3] as number) << 24)) >>> 0;
    if (len > this.max) throw new FramingError('too-big', len);
    if (this.pending < PREFIX_BYTES + len) return null;
    const message = b.slice(s + PREFIX_BYTES, s + PREFIX_BYTES + len);
    this.start += PREFIX_BYTES + len;
    if (this.start === this.end) this.start = this.end = 0;
    return message;
  }

  /**
   * The stream ended: fine between messages.
   *
   * Throws: a FramingError 'truncated' when it ended inside one.
   */
  finish(): void {
    if (this.pending > 0) throw new FramingError('truncated', this.pending);
  }

  /** Moves what is unread to the front, growing the buffer (doubling) if `more` bytes still do not fit. */
  private makeRoom(more: number): void {
    const held = this.pending;
    let size = this.buf.length;
    while (held + more > size) size *= 2;
    if (size === this.buf.length) this.buf.copyWithin(0, this.start, this.end);
    else {
      const next = new Uint8Array(size);
      next.set(this.buf.subarray(this.start, this.end), 0);
      this.buf = next;
    }
    this.start = 0;
    this.end = held;
  }
}
