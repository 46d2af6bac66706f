// The roster across shards: joins and leaves per shard, players that move
// between shards on resume, and our own player kept through a Roster.
import { describe, expect, it } from 'vitest';
import type { PlayerName, PresenceMsg, RosterMsg } from '../net/protocol.js';
import { Roster } from './roster.js';

function presence(shardId: number, joined: PlayerName[], left: number[] = []): PresenceMsg {
  return { kind: 'presence', shardId, joined, left };
}

function rosterOf(...players: PlayerName[]): RosterMsg {
  return { kind: 'roster', players };
}

function ids(r: Roster): number[] {
  return r.sorted().map((p) => p.id).sort((a, b) => a - b);
}

describe('roster', () => {
  it('applies joins and leaves of one shard', () => {
    const r = new Roster();
    r.applyPresence(presence(1, [{ id: 10, name: 'ada' }, { id: 11, name: 'bob' }]));
    expect(ids(r)).toEqual([10, 11]);
    expect(r.shard(10)).toBe(1);
    r.applyPresence(presence(1, [], [10]));
    expect(ids(r)).toEqual([11]);
    expect(r.name(10)).toBeUndefined();
    expect(r.shard(10)).toBeUndefined();
  });

  it('ignores a "left" from the shard a player moved away from', () => {
    const r = new Roster();
    r.applyPresence(presence(1, [{ id: 10, name: 'ada' }]));
    // Shard 1 died; ada resumed on shard 2, which announces her...
    r.applyPresence(presence(2, [{ id: 10, name: 'ada' }]));
    expect(r.shard(10)).toBe(2);
    const version = r.version;
    // ...and then shard 2 announces every player of dead shard 1 as left, on 1's behalf.
    r.applyPresence(presence(1, [], [10]));
    expect(r.name(10)).toBe('ada');
    expect(r.version).toBe(version);
    // Leaving her current shard does remove her.
    r.applyPresence(presence(2, [], [10]));
    expect(r.name(10)).toBeUndefined();
    expect(r.version).toBe(version + 1);
  });

  it('a leave then a join in the other order leaves the player present too', () => {
    const r = new Roster();
    r.applyPresence(presence(1, [{ id: 10, name: 'ada' }]));
    r.applyPresence(presence(1, [], [10]));
    r.applyPresence(presence(2, [{ id: 10, name: 'ada' }]));
    expect(r.shard(10)).toBe(2);
    expect(r.size).toBe(1);
  });

  it('players known only from a Roster have no shard: any leave removes them', () => {
    const r = new Roster();
    r.applyRoster(rosterOf({ id: 10, name: 'ada' }, { id: 11, name: 'bob' }));
    expect(r.shard(10)).toBeNull();
    r.applyPresence(presence(7, [], [10]));
    expect(ids(r)).toEqual([11]);
  });

  it('keeps our own player, on the shard that welcomed it, through a Roster and a dead shard', () => {
    const r = new Roster();
    // Welcomed on shard 1; the Roster that follows lists everyone.
    r.setOwn(5, 'me', 1);
    r.applyRoster(rosterOf({ id: 5, name: 'me' }, { id: 11, name: 'bob' }));
    expect(r.shard(5)).toBe(1);
    // Shard 1 dies; we resume on shard 2 with the same id. Its Roster may still
    // list us as a player of shard 1 as well; its "left" for shard 1 comes later.
    r.setOwn(5, 'me', 2);
    r.applyRoster(rosterOf({ id: 5, name: 'me' }, { id: 11, name: 'bob' }, { id: 5, name: 'me' }));
    expect(r.size).toBe(2);
    r.applyPresence(presence(1, [], [5, 11]));
    expect(r.name(5)).toBe('me');
    expect(r.shard(5)).toBe(2);
    expect(ids(r)).toEqual([5]);
    expect(r.sorted()).toEqual([{ id: 5, name: 'me' }]);
  });

  it('a Roster that lacks our own player still lists it', () => {
    const r = new Roster();
    r.setOwn(5, 'me', 3);
    r.applyRoster(rosterOf({ id: 11, name: 'bob' }));
    expect(ids(r)).toEqual([5, 11]);
    expect(r.shard(5)).toBe(3);
  });

  it('bumps the version only on changes', () => {
    const r = new Roster();
    const v0 = r.version;
    r.setOwn(5, 'me', 1);
    expect(r.version).toBe(v0 + 1);
    r.setOwn(5, 'me', 2);
    expect(r.version).toBe(v0 + 1);
    r.applyPresence(presence(1, [], [99]));
    expect(r.version).toBe(v0 + 1);
    r.applyPresence(presence(1, [{ id: 12, name: 'cy' }]));
    expect(r.version).toBe(v0 + 2);
    r.applyPresence(presence(2, [{ id: 12, name: 'cy' }]));
    expect(r.version).toBe(v0 + 2);
  });
});
