// The players in view (area of interest) as the players panel lists them:
// whoever the world drew in its last frame, named from the name book (or
// "#id" until the name arrives). Its version moves whenever the set drawn or
// a name changes, so the panel redraws only then.

import type { NameBook } from './names.js';

/** The part of the world the directory reads: the drawn players and a counter of changes to that set. */
export interface DrawnPlayers {
  readonly viewVersion: number;
  readonly players: { readonly count: number; readonly ids: Uint32Array };
}

/** The players in view, named; see the module comment. */
export class InViewDirectory {
  constructor(
    private readonly world: DrawnPlayers,
    private readonly names: NameBook,
  ) {}

  /** Changes whenever the set in view or a name changes (both counters only grow). */
  get version(): number {
    return this.world.viewVersion + this.names.version;
  }

  /** The players in view, by name then id. Allocates: call on redraw only. */
  sorted(): { id: number; name: string }[] {
    const p = this.world.players;
    const out: { id: number; name: string }[] = [];
    for (let i = 0; i < p.count; i++) {
      const id = p.ids[i] as number;
      out.push({ id, name: this.names.name(id) ?? `#${id}` });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
  }
}
