// The WebTransport stream's framing: messages come whole whatever the
// chunks' boundaries, a length over the limit is refused at its prefix, a
// stream ending inside a message is caught.
import { describe, expect, it } from 'vitest';
import { FramingError, MessageReader, PREFIX_BYTES, framed } from './framing.js';

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function drain(r: MessageReader): Uint8Array[] {
  const got: Uint8Array[] = [];
  for (let m = r.take(); m !== null; m = r.take()) got.push(m);
  return got;
}

const big = Uint8Array.from({ length: 10_000 }, (_, i) => i % 251);
const wire = concat(framed(Uint8Array.of(1, 2, 3)), framed(new Uint8Array(0)), framed(big), framed(Uint8Array.of(9)));

describe('framing', () => {
  it('prefixes a message with its length, 4 bytes little-endian', () => {
    expect(Array.from(framed(Uint8Array.of(7, 8)))).toEqual([2, 0, 0, 0, 7, 8]);
    const long = framed(new Uint8Array(0x01_02_03));
    expect(Array.from(long.subarray(0, PREFIX_BYTES))).toEqual([3, 2, 1, 0]);
  });

  it.each([1, 2, 3, 5, 7, 4096, wire.length])('gives every message whole, in order, from chunks of %i bytes', (size) => {
    const r = new MessageReader(1 << 16, 16);
    const got: Uint8Array[] = [];
    for (let at = 0; at < wire.length; at += size) {
      r.feed(wire.subarray(at, at + size));
      got.push(...drain(r));
    }
    expect(got.map((m) => m.length)).toEqual([3, 0, 10_000, 1]);
    expect(Array.from(got[0] ?? [])).toEqual([1, 2, 3]);
    expect(got[2]).toEqual(big);
    expect(r.pending).toBe(0);
    expect(() => r.finish()).not.toThrow();
  });

  it('waits for the rest of a prefix cut between chunks', () => {
    const r = new MessageReader(100);
    const one = framed(Uint8Array.of(42));
    r.feed(one.subarray(0, 2));
    expect(r.take()).toBeNull();
    r.feed(one.subarray(2, 4));
    expect(r.take()).toBeNull();
    r.feed(one.subarray(4));
    expect(Array.from(r.take() ?? [])).toEqual([42]);
  });

  it('hands out copies: a message kept is not changed by later chunks', () => {
    const r = new MessageReader(100, 8);
    r.feed(framed(Uint8Array.of(1, 1, 1)));
    const first = r.take();
    r.feed(framed(Uint8Array.of(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2)));
    expect(r.take()?.length).toBe(12);
    expect(Array.from(first ?? [])).toEqual([1, 1, 1]);
  });

  it('refuses a length over the limit at its prefix, before its bytes come', () => {
    const r = new MessageReader(16);
    r.feed(framed(new Uint8Array(16)));
    expect(r.take()?.length).toBe(16);
    r.feed(Uint8Array.of(17, 0, 0, 0));
    let error: unknown = null;
    try {
      r.take();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FramingError);
    expect(error).toMatchObject({ fault: 'too-big', bytes: 17 });
  });

  it('reads the largest length (u32) as unsigned, over any limit', () => {
    const r = new MessageReader(1 << 20);
    r.feed(Uint8Array.of(0xff, 0xff, 0xff, 0xff));
    expect(() => r.take()).toThrow(expect.objectContaining({ fault: 'too-big', bytes: 0xffff_ffff }) as Error);
  });

  it('says when the stream ended inside a message (a prefix or a body), not between two', () => {
    const half = new MessageReader(100);
    half.feed(Uint8Array.of(5, 0));
    expect(() => half.finish()).toThrow(expect.objectContaining({ fault: 'truncated', bytes: 2 }) as Error);
    const body = new MessageReader(100);
    body.feed(concat(framed(Uint8Array.of(1)), Uint8Array.of(5, 0, 0, 0, 1, 2)));
    expect(drain(body).length).toBe(1);
    expect(() => body.finish()).toThrow(expect.objectContaining({ fault: 'truncated', bytes: 6 }) as Error);
    const whole = new MessageReader(100);
    whole.feed(framed(Uint8Array.of(1)));
    drain(whole);
    expect(() => whole.finish()).not.toThrow();
  });
});
