// Who is in the place: player id -> display name, from the Roster sent after
// Welcome and the Presence messages of every shard. Names are plain strings
// from the network; whoever shows them sets them as text.
//
// Players move between shards (a resume after their shard died or drained),
// so each player is kept with the shards that announced it and have not
// announced it left: from the Roster (each entry names its shard), a
// Presence "joined", or our own Welcome. A "left" from shard S removes S
// only; the player goes when no shard has it any more. So when shard A dies
// after its players resumed on B, the "left" B announces on A's behalf
// leaves every one of them listed (B has them), whichever came first: the
// Roster, B's "joined" or A's "left". A player whose shard is not known (a
// Roster from a server older than the shard field) goes on any "left".

import type { PresenceMsg, RosterMsg } from '../net/protocol.js';
import { comparePlayers } from './player-order.js';

/** A present player: display name and the shards that have it (null: not known, any "left" removes it). */
interface Entry {
  name: string;
  shards: Set<number> | null;
}

/** The present players, their names and shards. */
export class Roster {
  private readonly players = new Map<number, Entry>();
  /** Our own player (from Welcome), kept through Roster replacements. */
  private own: { readonly id: number; readonly name: string; readonly shard: number } | null = null;
  /** Bumped on every change of who is present or of a name, so views redraw only when needed. */
  version = 0;
  /** "left" entries received from each shard so far (a shard's own, or announced on its behalf when it died). */
  private readonly lefts = new Map<number, number>();

  /** Replaces everything with a Roster (sent once per Welcome); our own player keeps its shard. */
  applyRoster(msg: RosterMsg): void {
    this.players.clear();
    for (const p of msg.players) {
      const was = this.players.get(p.id);
      if (!was) this.players.set(p.id, { name: p.name, shards: p.shard === null ? null : new Set([p.shard]) });
      else if (was.shards && p.shard !== null) was.shards.add(p.shard);
      else was.shards = null;
    }
    if (this.own) this.players.set(this.own.id, { name: this.players.get(this.own.id)?.name ?? this.own.name, shards: new Set([this.own.shard]) });
    this.version++;
  }

  /**
   * Applies the joins and leaves of shard `msg.shardId`: a leave takes that
   * shard off the player (and the player off the list when no shard has it
   * any more); a join adds the shard.
   */
  applyPresence(msg: PresenceMsg): void {
    const shard = msg.shardId;
    if (msg.left.length) this.lefts.set(shard, (this.lefts.get(shard) ?? 0) + msg.left.length);
    let changed = false;
    for (const id of msg.left) {
      const p = this.players.get(id);
      if (!p || (p.shards && !p.shards.delete(shard))) continue;
      if (p.shards?.size) continue;
      this.players.delete(id);
      changed = true;
    }
    for (const j of msg.joined) {
      const p = this.players.get(j.id);
      if (!p) {
        this.players.set(j.id, { name: j.name, shards: new Set([shard]) });
        changed = true;
        continue;
      }
      (p.shards ??= new Set()).add(shard);
      if (p.name !== j.name) {
        p.name = j.name;
        changed = true;
      }
    }
    if (changed) this.version++;
  }

  /** Our own player, from a Welcome: id, name and the shard that welcomed it. */
  setOwn(id: number, name: string, shard: number): void {
    this.own = { id, name, shard };
    const was = this.players.get(id);
    this.players.set(id, { name, shards: new Set([shard]) });
    if (was?.name !== name) this.version++;
  }

  /** The name of `id`, if present. */
  name(id: number): string | undefined {
    return this.players.get(id)?.name;
  }

  /** The shards that have `id`, ascending: undefined if absent, null if not known. */
  shards(id: number): number[] | null | undefined {
    const p = this.players.get(id);
    if (!p) return undefined;
    return p.shards ? [...p.shards].sort((a, b) => a - b) : null;
  }

  /** How many players shard `shard` has announced as left so far. */
  leftsFrom(shard: number): number {
    return this.lefts.get(shard) ?? 0;
  }

  /** Number of present players. */
  get size(): number {
    return this.players.size;
  }

  /** Every present player, in list order (natural order of names, then id). */
  sorted(): { id: number; name: string }[] {
    return [...this.players].map(([id, p]) => ({ id, name: p.name })).sort(comparePlayers);
  }
}
