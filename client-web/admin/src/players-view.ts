// The players search: results with where each player is, and a kick
// button. Pure of the API: it shows what it is given.

import { formatShardId } from '../../src/net/shard-id.js';
import type { FoundPlayer, SearchResult } from './api.js';
import { el } from './dom.js';
import { formatPosition } from './format.js';

/** The search results. */
export class PlayersView {
  constructor(
    private readonly table: HTMLTableElement,
    private readonly note: HTMLElement,
    /** Asked when the operator presses a player's kick button. */
    private readonly onKick: (player: FoundPlayer) => void,
  ) {}

  /** Shows a search's answer. */
  show(result: SearchResult): void {
    const doc = this.table.ownerDocument;
    const body = this.table.tBodies[0] ?? this.table.createTBody();
    body.replaceChildren(...result.players.map((p) => this.row(doc, p)));
    this.table.hidden = result.players.length === 0;
    const n = result.players.length;
    let note = n === 0 ? `No player matches “${result.query}”.` : `${n} player${n === 1 ? '' : 's'} match “${result.query}”`;
    if (result.truncated) note += ' (more match: refine the search)';
    if (result.partial) note += '. Redis is out of reach: only this shard was searched';
    this.note.textContent = n === 0 ? note : `${note}.`;
  }

  /** Says why a search failed. */
  error(message: string): void {
    this.note.textContent = message;
  }

  /** Takes a kicked player off the results. */
  remove(id: number): void {
    this.table.querySelector(`tr[data-player="${id}"]`)?.remove();
  }

  private row(doc: Document, p: FoundPlayer): HTMLTableRowElement {
    const tr = el(doc, 'tr', null, { 'data-player': String(p.id) });
    const kick = el(doc, 'button', 'Kick…', { type: 'button', class: 'kick-button', 'data-player': String(p.id) });
    kick.addEventListener('click', () => this.onKick(p));
    const cell = el(doc, 'td');
    cell.append(kick);
    tr.append(
      el(doc, 'td', String(p.id)),
      el(doc, 'td', p.name, { class: 'name' }),
      el(doc, 'td', `${formatShardId(p.shard)}${p.here ? ' (this page)' : ''}`, { class: 'shard' }),
      el(doc, 'td', formatPosition(p.x, p.y), { class: 'position' }),
      cell,
    );
    return tr;
  }
}
