// What the operator did from this page and what came of it, newest first
// (the server logs the same with the operator's name).

import { el } from './dom.js';

/** Entries kept. */
export const MAX_ENTRIES = 50;

/** How an entry reads. */
export type Outcome = 'ok' | 'error' | 'info';

/** The list of actions. */
export class ActionLog {
  constructor(
    private readonly list: HTMLOListElement,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Adds `text` at the top. */
  add(text: string, outcome: Outcome): void {
    const doc = this.list.ownerDocument;
    const time = this.now().toLocaleTimeString('en-GB', { hour12: false });
    const item = el(doc, 'li', null, { class: outcome });
    item.append(el(doc, 'time', time), ` ${text}`);
    this.list.prepend(item);
    while (this.list.children.length > MAX_ENTRIES) this.list.lastElementChild?.remove();
  }
}
