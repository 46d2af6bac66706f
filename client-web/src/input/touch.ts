// Drag-to-walk on touch screens: a finger (or pen) put down on the world and
// moved sets the direction from where it went down; lifting it stops.

import { STILL, dragToDirection, type Direction } from './direction.js';

/** Reports the direction of an active touch drag on `surface`. */
export class TouchDrag {
  private pointer: number | null = null;
  private startX = 0;
  private startY = 0;
  private readonly abort = new AbortController();

  constructor(
    surface: HTMLElement,
    private readonly onChange: (dir: Direction | null) => void,
  ) {
    const opts = { signal: this.abort.signal };
    surface.addEventListener('pointerdown', (e) => this.down(surface, e), opts);
    surface.addEventListener('pointermove', (e) => this.move(e), opts);
    for (const type of ['pointerup', 'pointercancel', 'lostpointercapture'] as const) {
      surface.addEventListener(type, (e) => this.up(e), opts);
    }
  }

  private down(surface: HTMLElement, e: PointerEvent): void {
    if (e.pointerType === 'mouse' || this.pointer !== null) return;
    this.pointer = e.pointerId;
    this.startX = e.clientX;
    this.startY = e.clientY;
    surface.setPointerCapture(e.pointerId);
    e.preventDefault();
    this.onChange(STILL);
  }

  private move(e: PointerEvent): void {
    if (e.pointerId !== this.pointer) return;
    this.onChange(dragToDirection(e.clientX - this.startX, e.clientY - this.startY));
  }

  private up(e: PointerEvent): void {
    if (e.pointerId !== this.pointer) return;
    this.pointer = null;
    // null: no drag any more, the keyboard decides again.
    this.onChange(null);
  }

  /** Removes the listeners. */
  dispose(): void {
    this.abort.abort();
  }
}
