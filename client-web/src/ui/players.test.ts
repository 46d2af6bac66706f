// The players panel: the place's roster, or with area of interest the players
// in view, named when the names arrive; redrawn only when something changed.
import { describe, expect, it } from 'vitest';
import { MergedPlayers } from '../interp/world.js';
import { InViewDirectory } from '../state/in-view.js';
import { NameBook } from '../state/names.js';
import { Roster } from '../state/roster.js';
import { FakeDocument, type FakeElement } from '../testing/fake-dom.js';
import { PlayerList } from './players.js';

function panel(): { list: PlayerList; items: () => string[]; count: FakeElement; title: FakeElement; doc: FakeDocument } {
  const doc = new FakeDocument();
  const ul = doc.createElement('ul');
  const count = doc.createElement('span');
  const title = doc.createElement('span');
  const items = (): string[] => ul.children.map((c) => c.textContent);
  return { list: new PlayerList(ul.asHtml(), count.asHtml(), title.asHtml()), items, count, title, doc };
}

describe('players panel', () => {
  it('lists the roster under "Players", the local player marked', () => {
    const p = panel();
    const roster = new Roster();
    roster.applyRoster({ kind: 'roster', players: [{ id: 2, name: 'bo', shard: 1 }, { id: 1, name: 'ada', shard: 1 }] });
    p.list.show(roster, 'Players');
    p.list.update(1, 0);
    expect(p.items()).toEqual(['ada (you)', 'bo']);
    expect([p.title.textContent, p.count.textContent]).toEqual(['Players', '2']);
  });

  it('lists the players within the view radius, by name once known, and redraws only when that set or a name changed', () => {
    const p = panel();
    const world = { players: new MergedPlayers() };
    const names = new NameBook(() => true, () => true);
    names.setOwn(1, 'me');
    const view = new InViewDirectory(world, names);
    p.list.show(view, 'In view');
    world.players.begin();
    world.players.put(1, 100, 100, 0, 0, 0);
    world.players.put(7, 150, 100, 0, 0, 0);
    // Sent (a whole cell, the prefetch ring) and drawn, but beyond the view radius of 100: not in view.
    world.players.put(9, 100, 220, 0, 0, 0);
    view.measure(100, 100, 100);
    p.list.update(1, 0);
    expect(p.items()).toEqual(['#7', 'me (you)']);
    expect([p.title.textContent, p.count.textContent]).toEqual(['In view', '2']);
    expect(view.count).toBe(2);
    const writes = p.doc.totalWrites();
    view.measure(100, 100, 100);
    p.list.update(1, 1000);
    expect(p.doc.totalWrites()).toBe(writes);
    names.apply({ kind: 'names', players: [{ id: 7, name: 'zoë' }] }, 1000);
    p.list.update(1, 1100);
    expect(p.items()).toEqual(['me (you)', 'zoë']);
    // 7 walks out of the radius, 9 into it.
    world.players.begin();
    world.players.put(1, 100, 100, 0, 0, 0);
    world.players.put(7, 250, 100, 0, 0, 0);
    world.players.put(9, 100, 180, 0, 0, 0);
    view.measure(100, 100, 100);
    p.list.update(1, 1300); // within half a second of the last redraw: later
    expect(p.items()).toEqual(['me (you)', 'zoë']);
    p.list.update(1, 1600);
    expect(p.items()).toEqual(['#9', 'me (you)']);
    expect(p.count.textContent).toBe('2');
  });

  it('lists names in natural order: bot-2 before bot-10', () => {
    const p = panel();
    const roster = new Roster();
    roster.applyRoster({ kind: 'roster', players: ['bot-10', 'bot-1', 'bot-2', 'ada'].map((name, i) => ({ id: i + 1, name, shard: 1 })) });
    p.list.show(roster, 'Players');
    p.list.update(0, 0);
    expect(p.items()).toEqual(['ada', 'bot-1', 'bot-2', 'bot-10']);
  });
});
