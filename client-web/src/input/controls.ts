// One direction from every input source: an active touch drag wins over the
// keyboard; either change goes to the DirectionSender, which sends only changes.

import { STILL, type Direction } from './direction.js';
import { Keyboard } from './keyboard.js';
import { TouchDrag } from './touch.js';

/** Keyboard and touch input combined into the wanted direction. */
export class Controls {
  private keys: Direction = STILL;
  private touch: Direction | null = null;
  private readonly keyboard: Keyboard;
  private readonly drag: TouchDrag;
  private readonly abort = new AbortController();

  constructor(win: Window, surface: HTMLElement, onChange: (dir: Direction) => void) {
    const report = (): void => onChange(this.touch ?? this.keys);
    this.keyboard = new Keyboard(win, (d) => {
      this.keys = d;
      report();
    });
    this.drag = new TouchDrag(surface, (d) => {
      this.touch = d;
      report();
    });
    // Losing focus stops a drag as it releases the keys.
    win.addEventListener(
      'blur',
      () => {
        this.touch = null;
        report();
      },
      { signal: this.abort.signal },
    );
  }

  /** Removes every listener. */
  dispose(): void {
    this.keyboard.dispose();
    this.drag.dispose();
    this.abort.abort();
  }
}
