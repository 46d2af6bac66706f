// The shards table: one row a live shard with its figures, a drain button
// and the drain's progress. Rebuilt from each place answer; once the shard
// serving the page is gone, the last answer with that shard gone and the
// others unknown.

import { formatShardId } from '../../src/net/shard-id.js';
import type { Place, ShardRow } from './api.js';
import { shardColor } from './chart.js';
import { el } from './dom.js';
import type { Gone } from './gone.js';
import { drainProgress, formatMs, formatPlayers, formatRate, formatUptime, ticksBehind } from './format.js';

/** What the state column says. */
const STATE_TEXT: Readonly<Record<ShardRow['state'], string>> = {
  ready: 'ready',
  draining: 'draining',
  stopping: 'stopping',
  redis_down: 'not ready: Redis unreachable',
  id_taken: 'not ready: another process has this shard id',
};

/** The shards table. */
export class PlaceView {
  constructor(
    private readonly body: HTMLTableSectionElement,
    /** Asked when the operator presses a shard's drain button. */
    private readonly onDrain: (row: ShardRow, place: Place) => void,
  ) {}

  /** Shows `place`. */
  show(place: Place): void {
    const doc = this.body.ownerDocument;
    const rows = place.shards.map((r) => this.row(doc, r, place));
    this.body.replaceChildren(...rows);
  }

  /**
   * Shows `place`, the last answer, as no longer live: the shard that
   * served it (`gone`) with its state, the others unknown, no drain buttons.
   */
  showGone(place: Place, gone: Gone): void {
    this.show(place);
    for (const tr of Array.from(this.body.rows)) {
      const mine = tr.dataset.shard === String(gone.id);
      tr.dataset.state = mine ? gone.kind : 'unknown';
      const state = tr.querySelector('td.state');
      if (state) {
        state.textContent = mine ? gone.state : 'unknown: no shard to ask';
        state.className = 'state bad';
      }
      tr.querySelector('td.drain')?.replaceChildren();
    }
  }

  private row(doc: Document, r: ShardRow, place: Place): HTMLTableRowElement {
    const tr = el(doc, 'tr', null, { 'data-shard': String(r.id), 'data-state': r.state });
    const name = el(doc, 'th', null, { scope: 'row' });
    const swatch = el(doc, 'span', '■ ', { class: 'swatch', 'aria-hidden': 'true' });
    swatch.style.color = shardColor(r.id);
    name.append(swatch, `${formatShardId(r.id)}${r.here ? ' (this page)' : ''}`);
    const ticks = el(doc, 'td', formatRate(r.ticksPerS, r.tickHz), { class: 'ticks' });
    if (ticksBehind(r.ticksPerS, r.tickHz)) ticks.classList.add('bad');
    const players = el(doc, 'td', formatPlayers(r.players, r.maxPlayers), { class: 'players' });
    if (r.overloaded) players.append(el(doc, 'span', ' busy', { class: 'bad' }));
    const redis = el(doc, 'td', r.redis, { class: `redis ${r.redis === 'up' || r.redis === 'standalone' ? '' : 'bad'}` });
    const state = el(doc, 'td', STATE_TEXT[r.state], { class: `state ${r.state === 'ready' ? '' : 'warn'}` });
    tr.append(
      name,
      players,
      ticks,
      el(doc, 'td', formatMs(r.latenessP99Ms), { class: 'lateness' }),
      el(doc, 'td', formatMs(r.relayLagP99Ms), { class: 'relay' }),
      redis,
      state,
      el(doc, 'td', r.version, { class: 'version' }),
      el(doc, 'td', formatUptime(r.uptimeMs), { class: 'uptime' }),
      this.drainCell(doc, r, place),
    );
    return tr;
  }

  /** A drain button, or the drain's progress. */
  private drainCell(doc: Document, r: ShardRow, place: Place): HTMLTableCellElement {
    const td = el(doc, 'td', null, { class: 'drain' });
    if (r.drain) {
      const p = drainProgress(r.drain);
      const bar = el(doc, 'progress', null, { max: '1', value: String(p.done), 'aria-label': `shard ${formatShardId(r.id)} drain` });
      td.append(bar, el(doc, 'span', ` ${p.text}`, { class: 'drain-text' }));
      return td;
    }
    const button = el(doc, 'button', 'Drain…', { type: 'button', class: 'drain-button', 'data-shard': String(r.id) });
    button.disabled = r.state === 'stopping';
    button.addEventListener('click', () => this.onDrain(r, place));
    td.append(button);
    return td;
  }
}
