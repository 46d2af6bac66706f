// The admin console: the place's shards refreshed every second, charts of
// the last minutes, drains and kicks, through the admin API of the shard
// serving this page (`/admin/api/`). Asks for a bearer token when the
// listener wants one, and keeps it for the tab's life only.

import { formatShardId } from '../../src/net/shard-id.js';
import './style.css';
import { ActionLog } from './action-log.js';
import { AdminApi, ApiError, type FoundPlayer, type Place, type ShardRow } from './api.js';
import { drawChart } from './chart.js';
import { askKickReason, confirmDrain } from './dialogs.js';
import { byId } from './dom.js';
import { servingShardGone, type Gone } from './gone.js';
import { HistoryModel } from './history.js';
import { PlaceView } from './place-view.js';
import { PlayersView } from './players-view.js';

/** Between two reads of the place, ms. */
const REFRESH_MS = 1000;
/** Between two reads once the shard serving this console is gone, ms (it may be started again). */
const GONE_REFRESH_MS = 10_000;
/** Between two reads of the history (the charts), ms. */
const HISTORY_MS = 2000;
/** What the charts show: the last five minutes, ms (the server keeps as much). */
const WINDOW_MS = 5 * 60_000;

class Console {
  private readonly api: AdminApi;
  private readonly placeView: PlaceView;
  private readonly playersView: PlayersView;
  private readonly log: ActionLog;
  private readonly history = new HistoryModel();
  private lastPlace: Place | null = null;
  private lastHistoryAt = 0;
  private lastOkAt = 0;
  /** This page asked the shard serving it to drain. */
  private drainedHere = false;
  /** The shard serving this console, once it is gone or silent. */
  private gone: Gone | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly doc: Document) {
    const apiBase = new URL('api/', doc.baseURI).pathname;
    this.api = new AdminApi(apiBase, sessionStorage);
    this.log = new ActionLog(byId(doc, 'action-log', HTMLOListElement));
    const shards = byId(doc, 'shards', HTMLTableElement);
    this.placeView = new PlaceView(shards.tBodies[0] ?? shards.createTBody(), (row, place) => void this.drain(row, place));
    this.playersView = new PlayersView(byId(doc, 'found', HTMLTableElement), byId(doc, 'search-note', HTMLElement), (p) => void this.kick(p));
    byId(doc, 'login', HTMLFormElement).addEventListener('submit', (e) => this.signIn(e));
    byId(doc, 'search-form', HTMLFormElement).addEventListener('submit', (e) => {
      e.preventDefault();
      void this.search();
    });
    byId(doc, 'forget-token', HTMLButtonElement).addEventListener('click', () => {
      this.api.token = null;
      this.showLogin('Token forgotten.');
    });
  }

  start(): void {
    void this.tick();
  }

  /** Reads the place (and now and then the history), then again in a second. */
  private async tick(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    try {
      const place = await this.api.place();
      if (this.gone) {
        // Started again (or back on the network): a new life.
        this.log.add(`shard ${this.gone.id} answers again`, 'info');
        this.drainedHere = false;
      }
      this.gone = null;
      this.showPlace(place);
      if (Date.now() - this.lastHistoryAt >= HISTORY_MS) {
        this.history.replace(await this.api.history());
        this.lastHistoryAt = Date.now();
        this.drawCharts();
      }
      this.lastOkAt = Date.now();
      this.freshness(null);
    } catch (e) {
      if (e instanceof ApiError && e.kind === 'unauthorized') {
        this.showLogin(this.api.token ? 'That token was refused.' : '');
        return;
      }
      this.unanswered(e instanceof Error ? e.message : String(e));
    }
    this.timer = setTimeout(() => void this.tick(), this.gone?.kind === 'gone' ? GONE_REFRESH_MS : REFRESH_MS);
  }

  /**
   * A read failed: the figures are no longer live. A serving shard that was
   * draining (or asked to) is gone, said at once; one silent for a while is
   * shown as not answering. Its row says so, the other shards' rows are
   * unknown (there is no shard left to ask), and the headline says what to do.
   */
  private unanswered(error: string): void {
    const last = this.lastPlace;
    const gone = last ? servingShardGone(last, Date.now() - this.lastOkAt, this.drainedHere) : null;
    if (!last || !gone) {
      this.freshness(error);
      return;
    }
    if (this.gone?.kind !== gone.kind) {
      this.log.add(gone.kind === 'gone' ? `shard ${gone.id} (this page) ${gone.state.replace('gone: ', '')}` : `shard ${gone.id} (this page) does not answer`, 'info');
    }
    this.gone = gone;
    this.placeView.showGone(last, gone);
    byId(this.doc, 'summary', HTMLElement).textContent = gone.summary;
    const node = byId(this.doc, 'freshness', HTMLElement);
    const since = new Date(this.lastOkAt).toLocaleTimeString('en-GB', { hour12: false });
    node.textContent =
      gone.kind === 'gone'
        ? `last answer ${since}; looking again every ${GONE_REFRESH_MS / 1000} s in case it is started again`
        : `no answer since ${since}: ${error}; retrying`;
    node.className = 'bad';
  }

  private showPlace(place: Place): void {
    const doc = this.doc;
    byId(doc, 'login', HTMLFormElement).hidden = true;
    byId(doc, 'console', HTMLElement).hidden = false;
    byId(doc, 'forget-token', HTMLButtonElement).hidden = !this.api.token;
    const n = place.shards.length;
    byId(doc, 'summary', HTMLElement).textContent =
      `place ${place.place} · ${n} shard${n === 1 ? '' : 's'} · ${place.players} player${place.players === 1 ? '' : 's'} · ` +
      `served by shard ${formatShardId(place.servedBy)}${place.clustered ? '' : ' (standalone)'}`;
    this.noteDepartures(place);
    this.placeView.show(place);
    this.lastPlace = place;
  }

  /** Logs the shards that left the place since the last read. */
  private noteDepartures(place: Place): void {
    if (!this.lastPlace) return;
    const now = new Set(place.shards.map((s) => s.id));
    for (const old of this.lastPlace.shards) {
      if (now.has(old.id)) continue;
      const how = old.drain ? 'drained and left the place' : 'left the place (its players resume on the others)';
      this.log.add(`shard ${formatShardId(old.id)} ${how}`, 'info');
    }
    for (const s of place.shards) {
      if (!this.lastPlace.shards.some((o) => o.id === s.id)) this.log.add(`shard ${formatShardId(s.id)} joined the place`, 'info');
    }
  }

  private drawCharts(): void {
    // A fixed window ending at the newest sample: lines grow in from the right.
    const newest = this.history.span()?.[1];
    const span = newest === undefined ? null : ([newest - WINDOW_MS, newest] as const);
    const gap = 3000;
    drawChart(byId(this.doc, 'chart-players', HTMLElement), this.history.series('players'), span, '', gap);
    drawChart(byId(this.doc, 'chart-lateness', HTMLElement), this.history.series('latenessP99Ms'), span, ' ms', gap);
  }

  /** How fresh the figures are; `error` when the last read failed. */
  private freshness(error: string | null): void {
    const node = byId(this.doc, 'freshness', HTMLElement);
    if (error === null) {
      node.textContent = `live · ${new Date(this.lastOkAt).toLocaleTimeString('en-GB', { hour12: false })}`;
      node.className = 'ok';
      return;
    }
    const since = this.lastOkAt ? ` since ${new Date(this.lastOkAt).toLocaleTimeString('en-GB', { hour12: false })}` : '';
    node.textContent = `no answer${since}: ${error}; retrying`;
    node.className = 'bad';
  }

  private showLogin(message: string): void {
    byId(this.doc, 'console', HTMLElement).hidden = true;
    const form = byId(this.doc, 'login', HTMLFormElement);
    form.hidden = false;
    const error = form.querySelector('.error');
    if (error) error.textContent = message;
    byId(this.doc, 'summary', HTMLElement).textContent = 'sign in';
    byId(this.doc, 'token-input', HTMLInputElement).focus();
  }

  private signIn(e: SubmitEvent): void {
    e.preventDefault();
    const input = byId(this.doc, 'token-input', HTMLInputElement);
    this.api.token = input.value.trim();
    input.value = '';
    void this.tick();
  }

  private async drain(row: ShardRow, place: Place): Promise<void> {
    if (!(await confirmDrain(byId(this.doc, 'drain-dialog', HTMLDialogElement), row, place))) return;
    try {
      const a = await this.api.drain(row.id);
      this.drainedHere ||= row.here;
      const players = a.players ?? row.players;
      if (place.clustered) {
        const via = a.via === 'here' ? 'this shard drains' : 'sent through Redis';
        this.log.add(`drain of shard ${formatShardId(a.shard)}: ${players} players to move (${via})`, 'ok');
      } else {
        const who = `its ${players} player${players === 1 ? '' : 's'}`;
        this.log.add(`drain of shard ${formatShardId(a.shard)} (standalone): ${who} disconnected, then it stops`, 'ok');
      }
    } catch (e) {
      this.log.add(`drain of shard ${formatShardId(row.id)} refused: ${e instanceof Error ? e.message : String(e)}`, 'error');
    }
    void this.tick();
  }

  private async kick(player: FoundPlayer): Promise<void> {
    const reason = await askKickReason(byId(this.doc, 'kick-dialog', HTMLDialogElement), player);
    if (reason === null) return;
    try {
      const a = await this.api.kick(player.id, reason);
      const via = a.via === 'here' ? 'on this shard' : `on shard ${formatShardId(a.shard)}, through Redis`;
      this.log.add(`player ${player.id} (${player.name}) kicked ${via}: “${reason}”`, 'ok');
      this.playersView.remove(player.id);
    } catch (e) {
      this.log.add(`kick of player ${player.id} (${player.name}) refused: ${e instanceof Error ? e.message : String(e)}`, 'error');
    }
  }

  private async search(): Promise<void> {
    const q = byId(this.doc, 'search-input', HTMLInputElement).value;
    try {
      this.playersView.show(await this.api.search(q));
    } catch (e) {
      this.playersView.error(`Search failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

new Console(document).start();
