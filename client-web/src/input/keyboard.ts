// Movement keys (WASD and arrows) held down, as a direction. Keys typed into a
// text field (the chat box) are not movement. Losing focus (window blur, tab
// hidden) releases every key, so the player stops instead of walking on.

import { STILL, isMovementKey, keysToDirection, type Direction } from './direction.js';

function typingInto(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

/** Tracks the movement keys and reports each change of direction. */
export class Keyboard {
  private readonly held = new Set<string>();
  private readonly abort = new AbortController();

  constructor(
    target: Window,
    private readonly onChange: (dir: Direction) => void,
  ) {
    const opts = { signal: this.abort.signal };
    target.addEventListener('keydown', (e) => this.key(e, true), opts);
    target.addEventListener('keyup', (e) => this.key(e, false), opts);
    target.addEventListener('blur', () => this.releaseAll(), opts);
    target.document.addEventListener('visibilitychange', () => target.document.hidden && this.releaseAll(), opts);
  }

  private key(e: KeyboardEvent, down: boolean): void {
    if (!isMovementKey(e.code) || (down && typingInto(e.target))) return;
    e.preventDefault();
    const had = this.held.has(e.code);
    if (down === had) return;
    if (down) this.held.add(e.code);
    else this.held.delete(e.code);
    this.onChange(keysToDirection(this.held));
  }

  /** Forgets every held key (focus moved elsewhere) and reports STILL. */
  releaseAll(): void {
    if (!this.held.size) return;
    this.held.clear();
    this.onChange(STILL);
  }

  /** Removes the listeners. */
  dispose(): void {
    this.abort.abort();
  }
}
