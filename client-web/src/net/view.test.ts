// The view frame reader's cell references (protocol 5) and implied cells
// (protocol 7, below): an empty delta over
// 1 to 32 ticks is said by its cell's reference alone (modes 2 to 7); one
// item, several, or a span-64 empty delta keep their tags, and a reference
// of mode 0 followed by an empty delta's tag (what protocol 5's writer never
// sends, but may be read) means the same item. Rust's view.rs has the same
// cases; the shared fixture and the differential test cover the rest.
import { describe, expect, it } from 'vitest';
import { frameOf, item, section } from '../testing/delta-frames.js';
import { CellGrid } from './grid.js';
import { Stencil } from './stencil.js';
import { ImpliedCells, ViewCursor, verifyViewFrame } from './view.js';

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
    const header = [3, 0, 0, 0, 4, 0, 0, 0, 1 << 2];
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

// Protocol 7's implied cells, in a 1000-unit world of 250-unit cells (a 4 x 4
// grid) seen with a view radius of one cell: from cell 6 (column 1, row 1)
// the own and near cells are 1, 2, 3, 5, 6, 7, 9, 10, 11 (period 1 at rung
// 0), the mid cells 4, 8, 12, 13, 14, 15 (period 2) and the far one 16
// (period 4).
const GRID = CellGrid.of({ minX: 0, minY: 0, maxX: 1000, maxY: 1000 }, 250) as CellGrid;
const STENCIL = Stencil.ofView(250, 250);

/** A cursor on section `n` (0 first) of `frame` (verified first). */
function at(frame: Uint8Array, n = 0): ViewCursor {
  expect(verifyViewFrame(frame)).toBeNull();
  const c = new ViewCursor();
  c.begin(frame, 0, frame.length);
  for (let k = 0; k <= n; k++) expect(c.nextSection()).toBe(true);
  return c;
}

/** The implied cells of section `n` of `frame` as [cell, kind], or the error's label. */
function impliedOf(frame: Uint8Array, n = 0): number[][] | string {
  const c = at(frame, n);
  const implied = new ImpliedCells();
  const error = implied.read(c, GRID, STENCIL);
  if (error) return error.label;
  return Array.from({ length: implied.count }, (_, k) => [implied.cells[k] as number, implied.kinds[k] as number]);
}

/** The cells of section `n` with its implied cells merged in: [cell, kind, span, implied]. */
function merged(frame: Uint8Array, n = 0): (number | boolean)[][] {
  const c = at(frame, n);
  const implied = new ImpliedCells();
  expect(implied.read(c, GRID, STENCIL)).toBeNull();
  c.imply(implied);
  const out: (number | boolean)[][] = [];
  while (c.nextCell()) while (c.nextItem()) out.push([c.cell, c.kind, c.span, c.cellImplied]);
  return out;
}

/** A section of shard 7 at tick 11: its head and implied block as raw bytes, then `rest`. */
function raw(head: number[], rest: number[] = []): Uint8Array {
  return Uint8Array.from([7, 0, 0, 0, 11, 0, 0, 0, ...head, ...rest]);
}

describe('view frame implied cells', () => {
  it("reads a section's head and implied block: the view named, then taken by the next section at its own rung", () => {
    const frame = frameOf(
      section(7, 11, [[4, [item(1, [])]]], { k: 2, rung: 3, view: { key: 7, previous: 6 }, count: 13, bits: [0, 12] }),
      section(8, 11, [], { k: 5, rung: 9, count: 2, bits: [1] }),
      section(9, 11, []),
    );
    // The head (one cell, form 1), the due byte, key 7, previous 6 (-1: code 2), the count, two bytes of bits.
    expect(Array.from(frame.slice(8, 15))).toEqual([(1 << 2) | 1, 2 | (3 << 3), 7, 2, 13, 0x01, 0x10]);
    const c = at(frame);
    expect([c.implied, c.viewKey, c.viewPrevious, c.rung, c.due, c.impliedCount, c.cellCount, c.isReset]).toEqual([true, 7, 6, 3, 2, 13, 1, false]);
    expect(Array.from(frame.slice(c.bitsStart, c.bitsStart + 2))).toEqual([0x01, 0x10]);
    const second = at(frame, 1);
    expect([second.implied, second.viewKey, second.viewPrevious, second.rung, second.due, second.impliedCount, second.cellCount, second.isReset]).toEqual([
      true, 7, 6, 9, 5, 2, 0, false,
    ]);
    const third = at(frame, 2);
    expect([third.implied, third.cellCount, third.isReset]).toEqual([false, 0, true]);
    // A previous cell after the key: zigzag(+1) + 1.
    const after = at(frameOf(section(7, 11, [], { k: 0, rung: 0, view: { key: 6, previous: 7 }, count: 0 })));
    expect([after.viewKey, after.viewPrevious, after.impliedCount]).toEqual([6, 7, 0]);
  });

  it('refuses a form or a due byte that does not exist, a view never named, and bits past the count', () => {
    const cases: [string, Uint8Array, string][] = [
      ['section form 3', raw([3]), 'Implied'],
      ['implied cells of a view never named', raw([2, 0, 1, 0x01]), 'Implied'],
      ['a due exponent of 7', raw([1, 7, 5, 0, 1, 0x01]), 'Implied'],
      ['rung 10', raw([1, 10 << 3, 5, 0, 1, 0x01]), 'Implied'],
      ["the due byte's top bit", raw([1, 0x80, 5, 0, 1, 0x01]), 'Implied'],
      ['a previous cell of 0', raw([1, 0, 5, 10, 1, 0x01]), 'Implied'],
      ['a previous cell past 32 bits', raw([1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 3, 0]), 'Implied'],
      ['a previous code past 2^53', raw([1, 0, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0]), 'Implied'],
      ['a key past 32 bits', raw([1, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 1, 0x01]), 'Implied'],
      ['bits set past the count', raw([1, 0, 5, 0, 3, 0b1000]), 'Implied'],
      ['a count past the bytes', raw([1, 0, 5, 0, 200, 1]), 'Bytes(TooMany)'],
      ['implied bits cut short', raw([1, 0, 5, 0, 9, 0xff]), 'Bytes(Truncated)'],
      ['more cells than bytes', raw([9 << 2, 8, 1]), 'Bytes(TooMany)'],
      ['a due byte cut off', raw([1]), 'Bytes(Truncated)'],
    ];
    for (const [name, bytes, label] of cases) expect(verifyViewFrame(bytes)?.label, name).toBe(label);
    // The last bits byte's used bits may all be set; an unused one may not.
    expect(verifyViewFrame(raw([1, 0, 5, 0, 3, 0b111]))).toBeNull();
    expect(verifyViewFrame(raw([1, 0, 5, 0, 8, 0xff]))).toBeNull();
    expect(verifyViewFrame(raw([1, 0, 5, 0, 9, 0xff, 0x01]))).toBeNull();
    expect(verifyViewFrame(raw([1, 0, 5, 0, 9, 0xff, 0x02]))?.label).toBe('Implied');
    expect(verifyViewFrame(raw([1, 0, 5, 0, 9, 0xff, 0x02]))?.message).toBe('view frame: bad implied cells');
  });

  it('takes the view named in the same frame only: a form 2 section of a later frame is refused', () => {
    const named = frameOf(section(7, 11, [], { k: 0, rung: 0, view: { key: 6, previous: 0 }, count: 9 }));
    const same = frameOf(section(7, 12, [], { k: 0, rung: 0, count: 9 }));
    expect(verifyViewFrame(named)).toBeNull();
    expect(verifyViewFrame(same)?.label).toBe('Implied');
    expect(verifyViewFrame(Uint8Array.from([...named, ...same]))).toBeNull();
    // And a section with no implied cells in between does not forget it.
    expect(verifyViewFrame(frameOf(Array.from(named), section(8, 11, [[2, [item(1, [])]]]), Array.from(same)))).toBeNull();
  });

  it("expands the bits against the view's candidates, each an empty delta over its tier's period", () => {
    // Due exponent 0 at rung 0: the own and near cells.
    const near = frameOf(section(7, 11, [], { k: 0, rung: 0, view: { key: 6, previous: 0 }, count: 9, bits: [0, 4, 8] }));
    expect(impliedOf(near)).toEqual([
      [1, 1],
      [6, 1],
      [11, 1],
    ]);
    // Due exponent 2: every cell of the grid, the mid ones over 2 ticks, the far one over 4.
    const all = frameOf(section(7, 12, [], { k: 2, rung: 0, view: { key: 6, previous: 0 }, count: 16, bits: [3, 4, 15] }));
    expect(impliedOf(all)).toEqual([
      [4, 2],
      [5, 1],
      [16, 3],
    ]);
    // Rung 9's periods (8, 16, 64, 64) at due exponent 6; a form 2 section
    // takes the view and reads it at its own rung: at due exponent 3 only the own cell.
    const slow = frameOf(
      section(7, 64, [], { k: 6, rung: 9, view: { key: 6, previous: 0 }, count: 16, bits: [0, 5, 15] }),
      section(8, 64, [], { k: 3, rung: 9, count: 1, bits: [0] }),
    );
    expect(impliedOf(slow)).toEqual([
      [1, 5],
      [6, 4],
      [16, 7],
    ]);
    expect(impliedOf(slow, 1)).toEqual([[6, 4]]);
    // A view of two cells: the union of both stencils' near cells.
    const both = frameOf(section(7, 11, [], { k: 0, rung: 0, view: { key: 6, previous: 7 }, count: 12, bits: [3, 7, 11] }));
    expect(impliedOf(both)).toEqual([
      [4, 1],
      [8, 1],
      [12, 1],
    ]);
    // A key off the grid sees from the first cell (1, 2, 5, 6).
    expect(impliedOf(frameOf(section(7, 11, [], { k: 0, rung: 0, view: { key: 99, previous: 0 }, count: 4, bits: [3] })))).toEqual([[6, 1]]);
    // No implied block: nothing.
    expect(impliedOf(frameOf(section(7, 11, [[2, [item(1, [])]]])))).toEqual([]);
  });

  it("refuses a count that is not the view's candidates, and an implied cell that is also a cell of the section", () => {
    const view = { key: 6, previous: 0 };
    for (const count of [0, 8, 10, 16]) {
      expect(impliedOf(frameOf(section(7, 11, [], { k: 0, rung: 0, view, count, bits: count > 0 ? [0] : [] }))), `count ${count}`).toBe('Implied');
    }
    // The same count at another due exponent or rung is another set of candidates.
    expect(impliedOf(frameOf(section(7, 11, [], { k: 1, rung: 0, view, count: 9 })))).toBe('Implied');
    expect(impliedOf(frameOf(section(7, 11, [], { k: 0, rung: 6, view, count: 9 })))).toBe('Implied');
    // Cell 6 implied and told: refused, wherever it is among the section's cells.
    const told = (cells: number[]) => frameOf(section(7, 11, cells.map((c) => [c, [item(1, [])]] as const), { k: 0, rung: 0, view, count: 9, bits: [4] }));
    expect(impliedOf(told([6]))).toBe('Implied');
    expect(impliedOf(told([2, 6, 12]))).toBe('Implied');
    expect(impliedOf(told([2, 5, 7, 12]))).toEqual([[6, 1]]);
    // A told cell that is a candidate whose bit is clear is no clash.
    expect(impliedOf(frameOf(section(7, 11, [[5, [item(1, [])]]], { k: 0, rung: 0, view, count: 9, bits: [4] })))).toEqual([[6, 1]]);
  });

  it("walks the section's cells and its implied ones by increasing cell, each implied one an empty delta", () => {
    const frame = frameOf(
      section(
        7,
        12,
        [
          [2, [item(1, [4, 1, 9, 9]), item(1, [])]],
          [7, [item(2, [])]],
          [14, [item(8, [])]],
        ],
        { k: 2, rung: 0, view: { key: 6, previous: 0 }, count: 16, bits: [0, 3, 7, 15] },
      ),
      section(8, 12, [[3, [item(0, [])]]]),
    );
    expect(merged(frame)).toEqual([
      [1, 1, 1, true],
      [2, 1, 1, false],
      [2, 1, 1, false],
      [7, 2, 2, false],
      [4, 2, 2, true],
      [8, 2, 2, true],
      [14, 8, 0, false],
      [16, 3, 4, true],
    ].sort((a, b) => (a[0] as number) - (b[0] as number)));
    // The next section walks its own cells alone.
    const c = at(frame);
    const implied = new ImpliedCells();
    expect(implied.read(c, GRID, STENCIL)).toBeNull();
    c.imply(implied);
    expect(c.nextSection()).toBe(true);
    const cells: number[] = [];
    while (c.nextCell()) cells.push(c.cell);
    expect([c.shard, cells, c.nextSection()]).toEqual([8, [3], false]);
  });
});
