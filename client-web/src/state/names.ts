// Names of players under area of interest: the server sends no roster and no
// presence then (they would grow with the square of the place), so the client
// asks for the names of the ids it sees in view frames, in batches: a
// NamesRequest of at most MAX_NAMES_REQUEST_IDS ids, at most one every
// minIntervalMs (250 ms: 4 a second, which with at most 20 inputs and one
// ping every 2 s stays well under the server's 30 input messages a second).
// An id is asked once. The server leaves out ids it does not know (a player
// of another shard whose presence has not reached it yet): those are asked
// again after retryMs, doubling, a few times at most, while still in view.
// Requests lost with a socket are asked again on the next one. Names are
// plain strings from the network; whoever shows them sets them as text.

import { MAX_NAMES_REQUEST_IDS, encodeNamesRequest, type NamesMsg } from '../net/protocol.js';

/** Tuning of a [`NameBook`]; times are ms. */
export interface NameBookOptions {
  /** Least time between two NamesRequests. */
  readonly minIntervalMs: number;
  /** Most ids in one NamesRequest. */
  readonly maxIds: number;
  /** First wait before asking again for an id the server did not know; doubles each time. */
  readonly retryMs: number;
  /** Most times one id is asked. */
  readonly maxAsks: number;
  /** Names kept at most; the oldest are forgotten past it (asked again if seen again). */
  readonly capacity: number;
}

export const DEFAULT_NAME_BOOK: NameBookOptions = {
  minIntervalMs: 250,
  maxIds: MAX_NAMES_REQUEST_IDS,
  retryMs: 2000,
  maxAsks: 3,
  capacity: 10_000,
};

/** An id the server did not name: when to ask again, and how often it was asked. */
interface Retry {
  at: number;
  asks: number;
}

/** Player id -> display name, asked for as ids come into view; see the module comment. */
export class NameBook {
  /** Bumped whenever a name is learnt, so labels and lists redraw only then. */
  version = 0;
  /** NamesRequests sent, and ids asked in them, so far. */
  requests = 0;
  idsAsked = 0;
  private readonly names = new Map<number, string>();
  /** Ids to ask, oldest first, and the same as a set. */
  private pending: number[] = [];
  private readonly queued = new Set<number>();
  /** Ids asked and not named (in flight, waiting to be asked again, or given up), with how often. */
  private readonly asked = new Map<number, number>();
  /** Batches sent and not answered yet, oldest first: each Names answers the oldest. */
  private readonly inflight: number[][] = [];
  private readonly retries = new Map<number, Retry>();
  private lastSentMs = Number.NEGATIVE_INFINITY;
  private lastRetryCheckMs = Number.NEGATIVE_INFINITY;
  private ownId = 0;
  /** The time of the running flush, and its retry callback, made once. */
  private flushNow = 0;
  private readonly retryDue = (r: Retry, id: number): void => {
    if (r.at > this.flushNow) return;
    this.retries.delete(id);
    // Out of view: not asked now; asked afresh if it comes back.
    if (this.tracked(id)) this.queue(id);
    else this.asked.delete(id);
  };

  constructor(
    /** Sends one encoded message; false when there is no live connection. */
    private readonly send: (bytes: Uint8Array) => boolean,
    /** Whether a player is still in view (an id out of view is not asked again). */
    private readonly tracked: (id: number) => boolean,
    private readonly opts: NameBookOptions = DEFAULT_NAME_BOOK,
  ) {}

  /** The name of `id`, if known. */
  name(id: number): string | undefined {
    return this.names.get(id);
  }

  /** Number of names known. */
  get size(): number {
    return this.names.size;
  }

  /** Ids waiting to be asked. */
  get waiting(): number {
    return this.pending.length;
  }

  /** Our own player, from a Welcome (never asked for, never forgotten). */
  setOwn(id: number, name: string): void {
    this.ownId = id;
    this.learn(id, name);
  }

  /** A name learnt on the way (a chat line carries its sender's). */
  learn(id: number, name: string): void {
    this.asked.delete(id);
    this.retries.delete(id);
    if (this.names.get(id) === name) return;
    this.names.delete(id); // re-inserted last: the newest
    this.names.set(id, name);
    this.version++;
    this.trim();
  }

  /** Player `id` is in view: its name is asked for unless known, asked or waiting. Cheap when nothing changes. */
  want(id: number): void {
    if (this.names.has(id) || this.queued.has(id) || this.asked.has(id)) return;
    this.queue(id);
  }

  /** Takes a Names answer (to the oldest request in flight) at local time `nowMs`. */
  apply(msg: NamesMsg, nowMs: number): void {
    for (const p of msg.players) this.learn(p.id, p.name);
    const batch = this.inflight.shift();
    if (!batch) return;
    for (const id of batch) {
      const asks = this.asked.get(id);
      if (asks === undefined || asks >= this.opts.maxAsks) continue; // named, or given up
      this.retries.set(id, { at: nowMs + this.opts.retryMs * 2 ** (asks - 1), asks });
    }
  }

  /**
   * A new socket: the requests in flight on the old one are lost, so their
   * ids are asked again.
   */
  reconnected(): void {
    for (const batch of this.inflight.splice(0)) {
      for (const id of batch) {
        if (!this.asked.has(id)) continue;
        this.asked.set(id, Math.max(0, (this.asked.get(id) ?? 1) - 1));
        this.queue(id);
      }
    }
  }

  /**
   * Sends the next NamesRequest if one is due at local time `nowMs` (call
   * every frame; with nothing to ask it allocates nothing). Ids whose retry is
   * due, and still in view, are asked again.
   */
  flush(nowMs: number): void {
    if (this.retries.size && nowMs - this.lastRetryCheckMs >= this.opts.minIntervalMs) {
      this.lastRetryCheckMs = nowMs;
      this.flushNow = nowMs;
      this.retries.forEach(this.retryDue);
    }
    if (!this.pending.length || nowMs - this.lastSentMs < this.opts.minIntervalMs) return;
    const batch = this.pending.slice(0, this.opts.maxIds);
    // Not sent (no live socket): tried again an interval later, not every frame.
    this.lastSentMs = nowMs;
    if (!this.send(encodeNamesRequest(batch))) return;
    this.pending = this.pending.slice(batch.length);
    this.requests++;
    this.idsAsked += batch.length;
    this.inflight.push(batch);
    for (const id of batch) {
      this.queued.delete(id);
      this.asked.set(id, (this.asked.get(id) ?? 0) + 1);
    }
  }

  private queue(id: number): void {
    if (this.queued.has(id) || this.names.has(id)) return;
    this.queued.add(id);
    this.pending.push(id);
  }

  /** Forgets the oldest names and asks past the capacity (our own name stays). */
  private trim(): void {
    for (const id of this.names.keys()) {
      if (this.names.size <= this.opts.capacity) break;
      if (id !== this.ownId) this.names.delete(id);
    }
    for (const id of this.asked.keys()) {
      if (this.asked.size <= this.opts.capacity) break;
      this.asked.delete(id);
    }
  }
}
