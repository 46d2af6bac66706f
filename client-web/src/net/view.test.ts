// The view frame reader's cell references (protocol 5): an empty delta over
// 1 to 32 ticks is said by its cell's reference alone (modes 2 to 7); one
// item, several, or a span-64 empty delta keep their tags, and a reference
// of mode 0 followed by an empty delta's tag (what protocol 5's writer never
// sends, but may be read) means the same item. Rust's view.rs has the same
// cases; the shared fixture and the differential test cover the rest.
import { describe, expect, it } from 'vitest';
import { frameOf, item, section } from '../testing/delta-frames.js';
import { ViewCursor, verifyViewFrame } from './view.js';

/** Each cell of the frame's one section with its items' (kind, span, body length). */
function read(frame: Uint8Array): [number, [number, number, number][]][] {
  expect(verifyViewFrame(frame)).toBeNull();
  const c = new ViewCursor();
  c.begin(frame, 0, frame.length);
  const out: [number, [number, number, number][]][] = [];
  while (c.nextSection()) {
    while (c.nextCell()) {
      const items: [number, number, number][] = [];
      while (c.nextItem()) items.push([c.kind, c.span, c.bodyEnd - c.bodyStart]);
      out.push([c.cell, items]);
    }
  }
  return out;
}

describe('view frame cell references', () => {
  it('reads an empty delta of each span from its reference alone, and span 64 from its tag', () => {
    const spans = [1, 2, 4, 8, 16, 32, 64];
    const cells = spans.map((span, i) => [i + 1, [item(1 + Math.log2(span), [])]] as const);
    const bytes = frameOf(section(3, 4, cells));
    // Past the section's 9 bytes: a reference each, modes 2..7, then mode 0 and the tag 0x07.
    expect(Array.from(bytes.slice(9))).toEqual([(1 << 3) | 2, (1 << 3) | 3, (1 << 3) | 4, (1 << 3) | 5, (1 << 3) | 6, (1 << 3) | 7, 1 << 3, 0x07]);
    expect(read(bytes)).toEqual(spans.map((span, i) => [i + 1, [[1 + Math.log2(span), span, 0]]]));
  });

  it('reads a reference of one item followed by an empty delta tag as the same item', () => {
    const header = [3, 0, 0, 0, 4, 0, 0, 0, 1];
    expect(read(Uint8Array.from([...header, 5 << 3, 0x02]))).toEqual([[5, [[2, 2, 0]]]]);
  });

  it('keeps the tags of empty deltas among several items, and of a delta with a body', () => {
    const bytes = frameOf(section(3, 4, [[2, [item(1, []), item(1, [])]], [3, [item(1, [4, 1, 9, 9])]]]));
    expect(Array.from(bytes.slice(9))).toEqual([(2 << 3) | 1, 2, 0x01, 0x01, 1 << 3, 0x41, 4, 1, 9, 9]);
    expect(read(bytes)).toEqual([
      [2, [[1, 1, 0], [1, 1, 0]]],
      [3, [[1, 1, 4]]],
    ]);
  });
});
