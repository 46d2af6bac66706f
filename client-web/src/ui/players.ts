// The list of players, redrawn from a directory (the Roster of the place, or
// with area of interest the players in view) at most twice a second and only
// when it changed; names are set as textContent. Long lists show the first
// MAX_SHOWN and a count of the rest.

const MAX_SHOWN = 200;
const REDRAW_MS = 500;

/** Whom the list shows: `version` changes whenever the list or a name may have. */
export interface PlayerDirectory {
  readonly version: number;
  /** Every player listed, in list order (state/player-order: natural order of names, then id). */
  sorted(): { id: number; name: string }[];
}

/** The players panel: its title, its list and its count. */
export class PlayerList {
  private drawnVersion = -1;
  private drawnAt = Number.NEGATIVE_INFINITY;
  private directory: PlayerDirectory | null = null;

  constructor(
    private readonly list: HTMLElement,
    private readonly count: HTMLElement,
    private readonly title?: HTMLElement,
  ) {}

  /** Lists `directory` from now on, under `title` ("Players", "In view"), redrawing at the next update. */
  show(directory: PlayerDirectory, title: string): void {
    if (directory === this.directory) return;
    this.directory = directory;
    this.drawnVersion = -1;
    this.drawnAt = Number.NEGATIVE_INFINITY;
    if (this.title) this.title.textContent = title;
  }

  /** Redraws if the directory changed and the last redraw is old enough. */
  update(ownId: number, nowMs: number): void {
    const d = this.directory;
    if (!d || d.version === this.drawnVersion || nowMs - this.drawnAt < REDRAW_MS) return;
    this.drawnVersion = d.version;
    this.drawnAt = nowMs;
    const doc = this.list.ownerDocument;
    const all = d.sorted();
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
