// The players in view (area of interest) as the HUD counts them and the
// players panel lists them: those drawn within the view radius of the local
// player (the local one included), named from the name book (or "#id" until
// the name arrives). The server also sends whole cells and a prefetch ring
// beyond the radius; those players are tracked and drawn fading out at the
// circle's edge, but they are not "in view". The set is measured when the
// HUD refreshes; its version moves whenever the set or a name changes, so the
// panel redraws only then. Measuring allocates nothing.

import type { NameBook } from './names.js';
import { comparePlayers } from './player-order.js';

/** The part of the world the directory reads: the drawn players, by id and position (world units). */
export interface DrawnPlayers {
  readonly players: { readonly count: number; readonly ids: Uint32Array; readonly x: Float32Array; readonly y: Float32Array };
}

/** The players within the view radius, named; see the module comment. */
export class InViewDirectory {
  /** Ids within the radius at the last measure, ascending, [0, n) valid; `spare` is written by the next measure, then they swap. */
  private ids = new Uint32Array(64);
  private spare = new Uint32Array(64);
  private n = 0;
  private changes = 0;

  constructor(
    private readonly world: DrawnPlayers,
    private readonly names: NameBook,
  ) {}

  /** Players within the radius at the last measure, the local one included. */
  get count(): number {
    return this.n;
  }

  /** Changes whenever the set in view or a name changes (both counters only grow). */
  get version(): number {
    return this.changes + this.names.version;
  }

  /**
   * Measures who of the drawn players is within `radius` world units of
   * (`x`, `y`), the local player's position; a radius of 0 or less counts
   * every drawn player.
   */
  measure(x: number, y: number, radius: number): void {
    const p = this.world.players;
    if (this.spare.length < p.count) {
      const size = Math.max(p.count, 2 * this.spare.length);
      this.spare = new Uint32Array(size);
      const kept = new Uint32Array(size);
      kept.set(this.ids);
      this.ids = kept;
    }
    const next = this.spare;
    const r2 = radius * radius;
    let m = 0;
    for (let i = 0; i < p.count; i++) {
      const dx = (p.x[i] as number) - x;
      const dy = (p.y[i] as number) - y;
      if (radius > 0 && dx * dx + dy * dy > r2) continue;
      // Insertion into the ascending list (a few hundred at most).
      const id = p.ids[i] as number;
      let j = m++;
      while (j > 0 && (next[j - 1] as number) > id) {
        next[j] = next[j - 1] as number;
        j--;
      }
      next[j] = id;
    }
    let same = m === this.n;
    for (let k = 0; k < m && same; k++) same = next[k] === this.ids[k];
    this.spare = this.ids;
    this.ids = next;
    this.n = m;
    if (!same) this.changes++;
  }

  /** The players within the radius, in list order (natural order of names, then id). Allocates: call on redraw only. */
  sorted(): { id: number; name: string }[] {
    const out: { id: number; name: string }[] = [];
    for (let k = 0; k < this.n; k++) {
      const id = this.ids[k] as number;
      out.push({ id, name: this.names.name(id) ?? `#${id}` });
    }
    return out.sort(comparePlayers);
  }
}
