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
    roster.applyRoster({ kind: 'roster', players: [{ id: 2, name: 'bo' }, { id: 1, name: 'ada' }] });
    p.list.show(roster, 'Players');
    p.list.update(1, 0);
    expect(p.items()).toEqual(['ada (you)', 'bo']);
    expect([p.title.textContent, p.count.textContent]).toEqual(['Players', '2']);
  });

  it('lists the players in view, by name once known, and redraws only when the view or a name changed', () => {
    const p = panel();
    const world = { viewVersion: 0, players: new MergedPlayers() };
    const names = new NameBook(() => true, () => true);
    names.setOwn(1, 'me');
    const view = new InViewDirectory(world, names);
    p.list.show(view, 'In view');
    world.players.begin();
    world.players.put(1, 0, 0, 0, 0, 0);
    world.players.put(7, 0, 0, 0, 0, 0);
    world.viewVersion++;
    p.list.update(1, 0);
    expect(p.items()).toEqual(['#7', 'me (you)']);
    expect([p.title.textContent, p.count.textContent]).toEqual(['In view', '2']);
    const writes = p.doc.totalWrites();
    p.list.update(1, 1000);
    expect(p.doc.totalWrites()).toBe(writes);
    names.apply({ kind: 'names', players: [{ id: 7, name: 'zoë' }] }, 1000);
    p.list.update(1, 1100);
    expect(p.items()).toEqual(['me (you)', 'zoë']);
    world.players.begin();
    world.players.put(1, 0, 0, 0, 0, 0);
    world.viewVersion++;
    p.list.update(1, 1300); // within half a second of the last redraw: later
    expect(p.items()).toEqual(['me (you)', 'zoë']);
    p.list.update(1, 1600);
    expect(p.items()).toEqual(['me (you)']);
    expect(p.count.textContent).toBe('1');
  });
});
