// The side panels (the player list and the chat) fold away with a button in
// their heading, so they never stand between the player and the world; the
// choice is remembered (localStorage, like the name). Folded, a panel keeps
// its heading (and the chat its input line).

/** localStorage key of a panel's folded state. */
export function foldKey(panel: string): string {
  return `mino.fold.${panel}`;
}

/**
 * Makes `section` foldable with `button` (in its heading): a click toggles
 * the class `folded` on it, the button's aria-expanded and its sign. `name`
 * keys the remembered state in `storage`. Calls `changed` after each toggle
 * (the panel's size changed).
 */
export function foldable(section: HTMLElement, button: HTMLButtonElement, name: string, storage: Storage | null, changed: () => void): void {
  const set = (folded: boolean): void => {
    section.classList.toggle('folded', folded);
    button.setAttribute('aria-expanded', String(!folded));
    button.textContent = folded ? '+' : '−';
    button.title = folded ? 'Show' : 'Hide';
  };
  set(read(storage, name));
  button.addEventListener('click', () => {
    const folded = !section.classList.contains('folded');
    set(folded);
    write(storage, name, folded);
    // Keys go back to the world: Enter or Space must not toggle it again.
    button.blur();
    changed();
  });
}

function read(storage: Storage | null, name: string): boolean {
  try {
    return storage?.getItem(foldKey(name)) === '1';
  } catch {
    return false;
  }
}

function write(storage: Storage | null, name: string, folded: boolean): void {
  try {
    storage?.setItem(foldKey(name), folded ? '1' : '0');
  } catch {
    // Not remembered; it works all the same.
  }
}
