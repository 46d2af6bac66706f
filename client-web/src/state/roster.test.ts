// The roster across shards: joins and leaves per shard, players that move
// between shards on resume (in every order the Roster, the joins and the
// dead shard's "left" can come in), and our own player kept through a Roster.
import { describe, expect, it } from 'vitest';
import type { PlayerName, PresenceMsg, RosterEntry, RosterMsg } from '../net/protocol.js';
import { Roster } from './roster.js';

function presence(shardId: number, joined: PlayerName[], left: number[] = []): PresenceMsg {
  return { kind: 'presence', shardId, joined, left };
}

function rosterOf(...players: RosterEntry[]): RosterMsg {
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
    expect(r.shards(10)).toEqual([1]);
    r.applyPresence(presence(1, [], [10]));
    expect(ids(r)).toEqual([11]);
    expect(r.name(10)).toBeUndefined();
    expect(r.shards(10)).toBeUndefined();
  });

  it('ignores a "left" from the shard a player moved away from', () => {
    const r = new Roster();
    r.applyPresence(presence(1, [{ id: 10, name: 'ada' }]));
    // Shard 1 died; ada resumed on shard 2, which announces her...
    r.applyPresence(presence(2, [{ id: 10, name: 'ada' }]));
    const version = r.version;
    // ...and then shard 2 announces every player of dead shard 1 as left, on 1's behalf.
    r.applyPresence(presence(1, [], [10]));
    expect(r.name(10)).toBe('ada');
    expect(r.shards(10)).toEqual([2]);
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
    expect(r.shards(10)).toEqual([2]);
    expect(r.size).toBe(1);
  });

  it('after a failover, the Roster of the survivor keeps everyone who moved with us through the dead shard\'s "left"', () => {
    // We and two others were on shard 1; shard 1 died; all three resumed on
    // shard 2, the others first: shard 2's Roster lists them on shard 2, and
    // bob (never on shard 1) too. Shard 2's "left" for shard 1 comes seconds later.
    const r = new Roster();
    r.setOwn(5, 'me', 1);
    r.applyPresence(presence(1, [{ id: 10, name: 'bot-1' }, { id: 11, name: 'bot-2' }, { id: 12, name: 'stayed' }]));
    r.setOwn(5, 'me', 2);
    r.applyRoster(rosterOf({ id: 5, name: 'me', shard: 2 }, { id: 10, name: 'bot-1', shard: 2 }, { id: 11, name: 'bot-2', shard: 2 }, { id: 20, name: 'bob', shard: 2 }, { id: 12, name: 'stayed', shard: 1 }));
    r.applyPresence(presence(1, [], [5, 10, 11, 12]));
    expect(r.sorted().map((p) => p.name)).toEqual(['bob', 'bot-1', 'bot-2', 'me']);
    expect(r.shards(10)).toEqual([2]);
  });

  it('a Roster that lists a player on two shards (it moved; the old one has not said "left" yet) keeps it through that "left"', () => {
    const r = new Roster();
    r.applyRoster(rosterOf({ id: 10, name: 'ada', shard: 1 }, { id: 10, name: 'ada', shard: 3 }));
    expect(r.size).toBe(1);
    expect(r.shards(10)).toEqual([1, 3]);
    r.applyPresence(presence(1, [], [10]));
    expect(r.shards(10)).toEqual([3]);
    r.applyPresence(presence(3, [], [10]));
    expect(r.size).toBe(0);
  });

  it('a "left" of another shard does not remove a player the Roster has on its shard, and one of its shard does', () => {
    const r = new Roster();
    r.applyRoster(rosterOf({ id: 10, name: 'ada', shard: 2 }, { id: 11, name: 'bob', shard: 2 }));
    r.applyPresence(presence(7, [], [10]));
    expect(ids(r)).toEqual([10, 11]);
    r.applyPresence(presence(2, [], [10]));
    expect(ids(r)).toEqual([11]);
  });

  it('players from a Roster without shards (an older server) go on any "left"', () => {
    const r = new Roster();
    r.applyRoster(rosterOf({ id: 10, name: 'ada', shard: null }, { id: 11, name: 'bob', shard: null }));
    expect(r.shards(10)).toBeNull();
    r.applyPresence(presence(7, [], [10]));
    expect(ids(r)).toEqual([11]);
    // A join says where it is from then on.
    r.applyPresence(presence(2, [{ id: 11, name: 'bob' }]));
    r.applyPresence(presence(7, [], [11]));
    expect(ids(r)).toEqual([11]);
  });

  it('keeps our own player, on the shard that welcomed it, through a Roster and a dead shard', () => {
    const r = new Roster();
    // Welcomed on shard 1; the Roster that follows lists everyone.
    r.setOwn(5, 'me', 1);
    r.applyRoster(rosterOf({ id: 5, name: 'me', shard: 1 }, { id: 11, name: 'bob', shard: 1 }));
    expect(r.shards(5)).toEqual([1]);
    // Shard 1 dies; we resume on shard 2 with the same id.
    r.setOwn(5, 'me', 2);
    r.applyRoster(rosterOf({ id: 5, name: 'me', shard: 2 }, { id: 11, name: 'bob', shard: 1 }));
    expect(r.size).toBe(2);
    r.applyPresence(presence(1, [], [5, 11]));
    expect(r.name(5)).toBe('me');
    expect(r.shards(5)).toEqual([2]);
    expect(ids(r)).toEqual([5]);
    expect(r.sorted()).toEqual([{ id: 5, name: 'me' }]);
  });

  it('a Roster that lacks our own player still lists it', () => {
    const r = new Roster();
    r.setOwn(5, 'me', 3);
    r.applyRoster(rosterOf({ id: 11, name: 'bob', shard: 3 }));
    expect(ids(r)).toEqual([5, 11]);
    expect(r.shards(5)).toEqual([3]);
  });

  it('sorts names naturally: bot-2 before bot-10, then by id', () => {
    const r = new Roster();
    r.applyPresence(presence(1, ['bot-10', 'bot-2', 'Bot-1', 'bot-1', 'ada'].map((name, i) => ({ id: 20 - i, name }))));
    r.applyPresence(presence(1, [{ id: 3, name: 'bot-2' }]));
    expect(r.sorted().map((p) => `${p.name}#${p.id}`)).toEqual(['ada#16', 'bot-1#17', 'Bot-1#18', 'bot-2#3', 'bot-2#19', 'bot-10#20']);
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
    r.applyPresence(presence(2, [{ id: 12, name: 'cyd' }]));
    expect(r.version).toBe(v0 + 3);
  });
});
