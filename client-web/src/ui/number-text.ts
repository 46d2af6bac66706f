// The text of numbers that per-frame code shows (the HUD's figures, the name
// labels' pixel offsets): each string is made once, the first time its number
// is shown, and handed out again afterwards, so showing a number that was seen
// before allocates nothing.

/** Strings of integer keys, formatted by one function and cached; see the module comment. */
export class NumberText {
  private readonly cache = new Map<number, string>();

  constructor(
    /** The text of an integer key, e.g. `(k) => `${k}px``. */
    private readonly format: (key: number) => string,
    /** Keys cached at most; past that, new keys are formatted on each call (still correct, no longer free). */
    private readonly capacity = 4096,
  ) {}

  /** The text of integer `key`. */
  text(key: number): string {
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    const made = this.format(key);
    if (this.cache.size < this.capacity) this.cache.set(key, made);
    return made;
  }
}
