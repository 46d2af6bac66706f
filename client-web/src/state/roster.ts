// Who is in the place: player id -> display name, from the Roster sent after
// Welcome and the Presence messages of every shard. Names are plain strings
// from the network; whoever shows them sets them as text.

import type { PresenceMsg, RosterMsg } from '../net/protocol.js';

/** The present players and their names. */
export class Roster {
  private readonly names = new Map<number, string>();
  /** Bumped on every change, so views redraw only when needed. */
  version = 0;

  /** Replaces everything with a Roster (sent once per Welcome). */
  applyRoster(msg: RosterMsg): void {
    this.names.clear();
    for (const p of msg.players) this.names.set(p.id, p.name);
    this.version++;
  }

  /** Applies the joins and leaves of one shard. */
  applyPresence(msg: PresenceMsg): void {
    for (const id of msg.left) this.names.delete(id);
    for (const p of msg.joined) this.names.set(p.id, p.name);
    if (msg.left.length || msg.joined.length) this.version++;
  }

  /** Adds or renames one player (our own, from Welcome). */
  set(id: number, name: string): void {
    if (this.names.get(id) === name) return;
    this.names.set(id, name);
    this.version++;
  }

  /** The name of `id`, if present. */
  name(id: number): string | undefined {
    return this.names.get(id);
  }

  /** Number of present players. */
  get size(): number {
    return this.names.size;
  }

  /** Every present player, sorted by name (then id). */
  sorted(): { id: number; name: string }[] {
    return [...this.names].map(([id, name]) => ({ id, name })).sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
  }
}
