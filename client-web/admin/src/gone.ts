// What the console says when the shard serving it stops answering: a shard
// that drained (or was stopping) is gone, and says so at once; one that just
// went silent is shown as not answering once that lasted longer than a
// shard's heartbeat TTL. Either way its figures are no longer shown as live,
// and the other shards' rows are unknown (there is no shard left to ask).
// Pure.

import type { Place, ShardRow } from './api.js';

/** Without an answer this long, a shard that was not draining is shown as not answering, ms (a shard's default TTL is 3 s). */
export const SILENT_AFTER_MS = 5000;

/** The serving shard that does not answer, and how to show it. */
export interface Gone {
  /** The shard that served this console. */
  readonly id: number;
  /** Drained or stopped on purpose (`gone`), or just silent. */
  readonly kind: 'gone' | 'silent';
  /** Its state cell's text. */
  readonly state: string;
  /** The page's headline. */
  readonly summary: string;
}

/**
 * How to show `last` (the newest answer) now that the shard serving this
 * console has not answered for `silentMs`; `drainOrdered`: this page asked
 * that shard to drain. Null while it is too early to say (a read or two
 * failed).
 */
export function servingShardGone(last: Place, silentMs: number, drainOrdered: boolean): Gone | null {
  const here: ShardRow | undefined = last.shards.find((s) => s.here);
  if (!here) return null;
  const stopping = drainOrdered || here.drain !== null || here.state === 'draining' || here.state === 'stopping';
  if (stopping) {
    const how = last.clustered ? 'drained and stopped' : 'drained (every player disconnected) and stopped';
    return {
      id: here.id,
      kind: 'gone',
      state: `gone: ${how}`,
      summary: `place ${last.place} · shard ${here.id}, which served this console, is gone: ${how}. Open the console of a running shard.`,
    };
  }
  if (silentMs < SILENT_AFTER_MS) return null;
  return {
    id: here.id,
    kind: 'silent',
    state: 'not answering',
    summary: `place ${last.place} · shard ${here.id}, which serves this console, does not answer: the figures below are its last.`,
  };
}
