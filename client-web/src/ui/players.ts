// The list of present players, redrawn from the Roster at most twice a second
// and only when it changed; names are set as textContent. Long lists show the
// first MAX_SHOWN and a count of the rest.

import type { Roster } from '../state/roster.js';

const MAX_SHOWN = 200;
const REDRAW_MS = 500;

/** The present-players panel. */
export class PlayerList {
  private drawnVersion = -1;
  private drawnAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly list: HTMLElement,
    private readonly count: HTMLElement,
  ) {}

  /** Redraws if the roster changed and the last redraw is old enough. */
  update(roster: Roster, ownId: number, nowMs: number): void {
    if (roster.version === this.drawnVersion || nowMs - this.drawnAt < REDRAW_MS) return;
    this.drawnVersion = roster.version;
    this.drawnAt = nowMs;
    const doc = this.list.ownerDocument;
    const all = roster.sorted();
    const items = all.slice(0, MAX_SHOWN).map((p) => {
      const li = doc.createElement('li');
      li.textContent = p.id === ownId ? `${p.name} (you)` : p.name;
      if (p.id === ownId) li.className = 'own';
      return li;
    });
    if (all.length > MAX_SHOWN) {
      const more = doc.createElement('li');
      more.className = 'more';
      more.textContent = `and ${all.length - MAX_SHOWN} more`;
      items.push(more);
    }
    this.list.replaceChildren(...items);
    this.count.textContent = String(all.length);
  }
}
