// Who is in the place: player id -> display name, from the Roster sent after
// Welcome and the Presence messages of every shard. Names are plain strings
// from the network; whoever shows them sets them as text.
//
// Players move between shards (a resume after their shard died or drained), so
// each player's current shard is remembered as far as it is known: from the
// Presence "joined" that announced it, or from our own Welcome. A "left" from
// shard S removes a player only if S is that player's current shard (or its
// shard is unknown, as for players known only from the Roster, which carries
// no shard ids): when shard A dies after its player resumed on B, the "left"
// another shard announces on A's behalf must not remove the player B now has.

import type { PresenceMsg, RosterMsg } from '../net/protocol.js';

/** A present player: display name and current shard (null when unknown). */
interface Entry {
  readonly name: string;
  readonly shard: number | null;
}

/** The present players, their names and shards. */
export class Roster {
  private readonly players = new Map<number, Entry>();
  /** Our own player (from Welcome), kept through Roster replacements. */
  private own: { readonly id: number; readonly name: string; readonly shard: number } | null = null;
  /** Bumped on every change of who is present or of a name, so views redraw only when needed. */
  version = 0;

  /** Replaces everything with a Roster (sent once per Welcome); our own player keeps its shard. */
  applyRoster(msg: RosterMsg): void {
    this.players.clear();
    for (const p of msg.players) this.players.set(p.id, { name: p.name, shard: null });
    if (this.own) this.players.set(this.own.id, { name: this.players.get(this.own.id)?.name ?? this.own.name, shard: this.own.shard });
    this.version++;
  }

  /**
   * Applies the joins and leaves of shard `msg.shardId`: a leave is ignored
   * for a player currently on another shard; a join records the shard.
   */
  applyPresence(msg: PresenceMsg): void {
    let changed = false;
    for (const id of msg.left) {
      const p = this.players.get(id);
      if (!p || (p.shard !== null && p.shard !== msg.shardId)) continue;
      this.players.delete(id);
      changed = true;
    }
    for (const p of msg.joined) {
      const was = this.players.get(p.id);
      this.players.set(p.id, { name: p.name, shard: msg.shardId });
      changed ||= was?.name !== p.name;
    }
    if (changed) this.version++;
  }

  /** Our own player, from a Welcome: id, name and the shard that welcomed it. */
  setOwn(id: number, name: string, shard: number): void {
    this.own = { id, name, shard };
    const was = this.players.get(id);
    this.players.set(id, { name, shard });
    if (was?.name !== name) this.version++;
  }

  /** The name of `id`, if present. */
  name(id: number): string | undefined {
    return this.players.get(id)?.name;
  }

  /** The shard `id` is on as far as known: undefined if absent, null if unknown. */
  shard(id: number): number | null | undefined {
    return this.players.get(id)?.shard;
  }

  /** Number of present players. */
  get size(): number {
    return this.players.size;
  }

  /** Every present player, sorted by name (then id). */
  sorted(): { id: number; name: string }[] {
    return [...this.players].map(([id, p]) => ({ id, name: p.name })).sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
  }
}
