// The id -> slot index of the per-frame player columns.
import { describe, expect, it } from 'vitest';
import { IdIndex } from './id-index.js';
import { MergedPlayers } from './world.js';

describe('id index', () => {
  it('finds what was set, replaces a slot, and misses the rest', () => {
    const ix = new IdIndex(4);
    ix.set(7, 0);
    ix.set(0xffff_fffe, 1); // ids are uint32: above 2^31 too
    ix.set(0, 2);
    expect([ix.get(7), ix.get(0xffff_fffe), ix.get(0), ix.get(8)]).toEqual([0, 1, 2, -1]);
    ix.set(7, 5);
    expect(ix.get(7)).toBe(5);
    expect(ix.size).toBe(3);
  });

  it('forgets everything on clear and is reusable', () => {
    const ix = new IdIndex(8);
    for (let id = 1; id <= 8; id++) ix.set(id, id * 10);
    ix.clear();
    expect(ix.size).toBe(0);
    for (let id = 1; id <= 8; id++) expect(ix.get(id)).toBe(-1);
    ix.set(3, 1);
    expect([ix.get(3), ix.get(4)]).toEqual([1, -1]);
  });

  it('grows past its first size and keeps every entry, colliding ids included', () => {
    const ix = new IdIndex(2);
    // Distinct ids; the odd-numbered ones are multiples of 2^16, which share
    // their low bits: the hash must still spread them.
    const ids = Array.from({ length: 5000 }, (_, i) => (i % 2 ? i * 65536 : i * 7919) >>> 0);
    ids.forEach((id, i) => ix.set(id, i));
    expect(ix.size).toBe(5000);
    ids.forEach((id, i) => expect(ix.get(id)).toBe(i));
    expect(ix.get(123_456_789)).toBe(-1);
  });

  it('deletes single entries and still finds every other one, as a Map would', () => {
    const ix = new IdIndex(4);
    const model = new Map<number, number>();
    let seed = 12345;
    const rand = (n: number): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
    // Few distinct ids (many collisions and long probe runs), some sharing low bits.
    const ids = Array.from({ length: 300 }, (_, i) => (i % 3 ? i * 65536 : i * 31) >>> 0);
    for (let step = 0; step < 20_000; step++) {
      const id = ids[rand(ids.length)] as number;
      if (rand(3) === 0) {
        expect(ix.delete(id)).toBe(model.delete(id));
      } else {
        ix.set(id, step);
        model.set(id, step);
      }
      if (step % 997 === 0) for (const probe of ids) expect(ix.get(probe)).toBe(model.get(probe) ?? -1);
    }
    expect(ix.size).toBe(model.size);
    for (const probe of ids) expect(ix.get(probe)).toBe(model.get(probe) ?? -1);
  });

  it('deletes nothing that is absent, and a cleared entry cannot be deleted', () => {
    const ix = new IdIndex(8);
    ix.set(5, 1);
    expect(ix.delete(6)).toBe(false);
    ix.clear();
    expect(ix.delete(5)).toBe(false);
    expect(ix.size).toBe(0);
  });
});

describe('merged players', () => {
  it('find players by id in O(1), one copy per id, the higher priority winning', () => {
    const p = new MergedPlayers();
    p.begin();
    p.put(42, 1, 2, 0, 0, 10);
    p.put(7, 3, 4, 0, 0, 10);
    p.put(42, 5, 6, 0, 1, 20); // the same player from a newer shard
    p.put(7, 9, 9, 0, 0, 5); // an older copy: ignored
    expect(p.count).toBe(2);
    expect([p.x[p.indexOf(42)], p.y[p.indexOf(42)], p.flags[p.indexOf(42)]]).toEqual([5, 6, 1]);
    expect([p.x[p.indexOf(7)], p.y[p.indexOf(7)]]).toEqual([3, 4]);
    expect(p.indexOf(99)).toBe(-1);
    p.begin();
    expect([p.count, p.indexOf(42)]).toEqual([0, -1]);
  });

  it('keeps the index right while the columns grow', () => {
    const p = new MergedPlayers();
    p.begin();
    for (let id = 1000; id < 1300; id++) p.put(id, id, -id, 0, 0, 1);
    expect(p.count).toBe(300);
    for (let id = 1000; id < 1300; id++) expect(p.x[p.indexOf(id)]).toBe(id);
  });
});
