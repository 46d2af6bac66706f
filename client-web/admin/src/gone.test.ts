import { describe, expect, it } from 'vitest';
import type { Place, ShardRow } from './api.js';
import { drainPlan } from './dialogs.js';
import { SILENT_AFTER_MS, servingShardGone } from './gone.js';

function row(id: number, over: Partial<ShardRow> = {}): ShardRow {
  return {
    id,
    here: id === 1,
    players: 3,
    maxPlayers: 100,
    overloaded: false,
    tickHz: 20,
    ticksPerS: 20,
    latenessP99Ms: 1,
    relayLagP99Ms: null,
    redis: 'up',
    state: 'ready',
    drain: null,
    version: '0.1.0',
    uptimeMs: 1000,
    admin: null,
    ...over,
  };
}

function place(clustered: boolean, shards: ShardRow[]): Place {
  return { place: 'main', servedBy: 1, clustered, players: 3, shards };
}

describe('the drain confirmation', () => {
  it('says a standalone shard disconnects every player and stops, with no other shard to go to', () => {
    const one = row(1, { redis: 'standalone' });
    const plan = drainPlan(one, place(false, [one]));
    expect(plan.what).toContain('standalone');
    expect(plan.what).toContain('closes every player');
    expect(plan.what).toContain('exits');
    expect(plan.what).not.toContain('moves');
    expect(plan.warning).toContain('this console');
    expect(plan.confirm).toBe('Disconnect everyone and stop');
  });

  it('says clustered players move, and warns when no other shard is ready', () => {
    const shards = [row(1), row(2, { here: false })];
    expect(drainPlan(shards[1] as ShardRow, place(true, shards))).toMatchObject({ warning: null, confirm: 'Drain' });
    expect(drainPlan(shards[1] as ShardRow, place(true, shards)).what).toContain('moves its 3 players to the other shards');
    const alone = [row(1)];
    expect(drainPlan(alone[0] as ShardRow, place(true, alone)).warning).toContain('nowhere to go');
  });
});

describe('a serving shard that stops answering', () => {
  it('is gone at once when it was draining or a drain was ordered', () => {
    const draining = place(false, [row(1, { state: 'draining', drain: { from: 3, left: 3 } })]);
    expect(servingShardGone(draining, 0, false)).toMatchObject({ id: 1, kind: 'gone', state: 'gone: drained (every player disconnected) and stopped' });
    const ready = place(true, [row(1), row(2, { here: false })]);
    expect(servingShardGone(ready, 0, true)).toMatchObject({ kind: 'gone', state: 'gone: drained and stopped' });
  });

  it('is shown as not answering only after a while otherwise', () => {
    const ready = place(true, [row(1), row(2, { here: false })]);
    expect(servingShardGone(ready, SILENT_AFTER_MS - 1, false)).toBeNull();
    expect(servingShardGone(ready, SILENT_AFTER_MS, false)).toMatchObject({ id: 1, kind: 'silent', state: 'not answering' });
  });
});
