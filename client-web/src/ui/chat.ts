// The chat box: a bounded log of lines (name and text set as textContent,
// never as HTML) and an input that sends a line on Enter, within the server's
// limits (200 characters; 1 line a second with bursts of 5, kept client-side
// so the page is never closed for flooding). Enter in the world opens it;
// sending a line (or Enter on an empty box, or Escape) gives the keys back to
// the world, so WASD walks again instead of typing into the box. A line that
// could not be sent stays, with the box, for another Enter.

import { MAX_CHAT_CHARS, chatLine, encodeChat } from '../net/protocol.js';
import type { ChatMsg } from '../net/protocol.js';

/** Lines kept in the log. */
const MAX_LINES = 100;

/** A token bucket: `rate` tokens a second, at most `burst` saved up. */
export class TokenBucket {
  private tokens: number;
  private last = Number.NaN;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  /** Takes one token at time `nowMs` if there is one. */
  take(nowMs: number): boolean {
    if (!Number.isNaN(this.last)) this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.last) / 1000) * this.rate);
    this.last = nowMs;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** The chat log and input. */
export class Chat {
  // Slightly under the server's 1/s and 5 so clock differences never trip it.
  private readonly bucket = new TokenBucket(0.9, 4);

  constructor(
    private readonly log: HTMLElement,
    private readonly input: HTMLInputElement,
    /** Sends one encoded message; false when not connected. */
    private readonly send: (bytes: Uint8Array) => boolean,
    private readonly ownId: () => number,
  ) {
    input.maxLength = MAX_CHAT_CHARS;
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.submit();
      } else if (e.key === 'Escape') {
        input.blur();
      }
      e.stopPropagation();
    });
    input.ownerDocument.defaultView?.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !(e.target instanceof HTMLInputElement)) {
        e.preventDefault();
        input.focus();
      }
    });
  }

  private submit(): void {
    // As the server takes it (a line it would refuse would close the socket).
    const text = chatLine([...this.input.value.trim()].slice(0, MAX_CHAT_CHARS).join(''));
    if (!text) {
      this.input.value = '';
      this.input.blur();
      return;
    }
    if (!this.bucket.take(performance.now())) {
      this.system('Slow down: at most one line a second.');
      return;
    }
    if (!this.send(encodeChat(text))) {
      this.system('Not connected; the line was not sent.');
      return;
    }
    this.input.value = '';
    this.input.blur();
  }

  /** Appends a line from the network. */
  add(msg: ChatMsg): void {
    const line = this.line();
    const name = line.ownerDocument.createElement('span');
    name.className = msg.fromId === this.ownId() ? 'name own' : 'name';
    name.textContent = msg.name || `#${msg.fromId}`;
    const text = line.ownerDocument.createElement('span');
    text.className = 'text';
    text.textContent = msg.text;
    line.append(name, text);
  }

  /** Appends a line from the page itself. */
  system(text: string): void {
    const line = this.line();
    line.classList.add('system');
    line.textContent = text;
  }

  private line(): HTMLElement {
    const line = this.log.ownerDocument.createElement('div');
    line.className = 'line';
    this.log.append(line);
    while (this.log.childElementCount > MAX_LINES) this.log.firstElementChild?.remove();
    this.log.scrollTop = this.log.scrollHeight;
    return line;
  }
}
