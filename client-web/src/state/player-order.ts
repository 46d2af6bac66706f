// The order players are listed in: by name as people read it, numbers by
// their value (bot-2 before bot-10), case and accents second, then by id so
// two players of one name keep their places.

/** A listed player. */
export interface ListedPlayer {
  readonly id: number;
  readonly name: string;
}

const NAMES = new Intl.Collator(undefined, { numeric: true, sensitivity: 'variant' });

/** Compares two players for a list: natural order of names, then id. */
export function comparePlayers(a: ListedPlayer, b: ListedPlayer): number {
  return NAMES.compare(a.name, b.name) || a.id - b.id;
}
