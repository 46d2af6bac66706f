// Player id -> slot in a set of player columns, for code that runs every frame
// or every snapshot: an open-addressing hash table (linear probing, Fibonacci
// hashing) over typed arrays. Clearing bumps a generation instead of touching
// the arrays, so rebuilding the index every frame costs one write per player
// and allocates nothing once the table has grown to the player count; it
// grows (doubling, at half load) only when more players appear. A single
// entry is removed by shifting the rest of its probe run back (no
// tombstones), so an index kept across frames stays as fast as a fresh one.

/** Fibonacci hashing multiplier: 2^32 / golden ratio, odd. */
const GOLDEN = 0x9e3779b1;

/** Map from uint32 player id to a non-negative slot number; see the module comment. */
export class IdIndex {
  private keys: Uint32Array;
  private slots: Int32Array;
  /** Entry h is live when stamps[h] equals the current generation. */
  private stamps: Uint32Array;
  private generation = 1;
  /** 32 - log2(table size): the hash is the top bits of id * GOLDEN. */
  private shift: number;
  /** Entries since the last clear. */
  size = 0;

  /** Room for `expected` ids before the first growth. */
  constructor(expected = 64) {
    let bits = 4;
    while (1 << bits < expected * 2) bits++;
    this.keys = new Uint32Array(1 << bits);
    this.slots = new Int32Array(1 << bits);
    this.stamps = new Uint32Array(1 << bits);
    this.shift = 32 - bits;
  }

  /** Forgets every entry, in O(1). */
  clear(): void {
    this.size = 0;
    if (++this.generation === 0xffff_ffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  /** Slot of `id`, or -1 when absent. */
  get(id: number): number {
    const mask = this.keys.length - 1;
    for (let h = Math.imul(id, GOLDEN) >>> this.shift; this.stamps[h] === this.generation; h = (h + 1) & mask) {
      if (this.keys[h] === id) return this.slots[h] as number;
    }
    return -1;
  }

  /** Maps `id` (a uint32) to `slot` (>= 0), replacing any earlier slot of `id`. */
  set(id: number, slot: number): void {
    if ((this.size + 1) * 2 > this.keys.length) this.grow();
    const mask = this.keys.length - 1;
    let h = Math.imul(id, GOLDEN) >>> this.shift;
    while (this.stamps[h] === this.generation) {
      if (this.keys[h] === id) {
        this.slots[h] = slot;
        return;
      }
      h = (h + 1) & mask;
    }
    this.stamps[h] = this.generation;
    this.keys[h] = id;
    this.slots[h] = slot;
    this.size++;
  }

  /** Removes `id`; returns whether it was present. Allocates nothing. */
  delete(id: number): boolean {
    const mask = this.keys.length - 1;
    let h = Math.imul(id, GOLDEN) >>> this.shift;
    while (this.stamps[h] === this.generation && this.keys[h] !== id) h = (h + 1) & mask;
    if (this.stamps[h] !== this.generation) return false;
    // Backward shift: move each later entry of the run whose home is not
    // between the hole and itself into the hole, so every lookup still finds
    // its key before the first empty entry.
    let hole = h;
    for (let j = (h + 1) & mask; this.stamps[j] === this.generation; j = (j + 1) & mask) {
      const home = Math.imul(this.keys[j] as number, GOLDEN) >>> this.shift;
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        this.keys[hole] = this.keys[j] as number;
        this.slots[hole] = this.slots[j] as number;
        hole = j;
      }
    }
    this.stamps[hole] = 0; // never a live generation
    this.size--;
    return true;
  }

  /** Doubles the table and re-inserts the live entries. */
  private grow(): void {
    const { keys, slots, stamps, generation } = this;
    const size = keys.length * 2;
    this.keys = new Uint32Array(size);
    this.slots = new Int32Array(size);
    this.stamps = new Uint32Array(size);
    this.shift--;
    this.generation = 1;
    this.size = 0;
    for (let h = 0; h < keys.length; h++) if (stamps[h] === generation) this.set(keys[h] as number, slots[h] as number);
  }
}
