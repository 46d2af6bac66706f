// Name labels: who gets one, where, no DOM writes in a frame where nothing
// changed, and no allocation in a steady frame.
import { describe, expect, it } from 'vitest';
import { MergedPlayers } from '../interp/world.js';
import { Roster } from '../state/roster.js';
import { FRAME_BUDGET_BYTES, MEASURED_FRAMES, bytesPerFrame } from '../testing/allocation.js';
import { FakeDocument, type FakeElement } from '../testing/fake-dom.js';
import { WORLD } from '../testing/cells.js';
import { Camera } from './camera.js';
import { NameLabels } from './labels.js';

const OWN = 1;

/** Labels over an 800 x 600 view centred on (500, 500) at 1 CSS pixel per world unit. */
function scene(): { doc: FakeDocument; els: FakeElement[]; labels: NameLabels; camera: Camera; players: MergedPlayers; roster: Roster } {
  const doc = new FakeDocument();
  const container = doc.createElement('div');
  const labels = new NameLabels(container.asHtml());
  const camera = new Camera();
  camera.resize(800, 600, 1);
  camera.setBounds(WORLD);
  camera.follow(500, 500, 0);
  const roster = new Roster();
  roster.applyRoster({ kind: 'roster', players: [{ id: OWN, name: 'me', shard: 1 }] });
  return { doc, els: container.children as FakeElement[], labels, camera, players: new MergedPlayers(), roster };
}

/** Fills `p` with players at `xy` (ids 1, 2, ...). */
function place(p: MergedPlayers, xy: [number, number][]): void {
  p.begin();
  xy.forEach(([x, y], i) => p.put(i + 1, x, y, 0, 0, 1));
}

/** The visible labels' texts, in pool order. */
function shown(els: FakeElement[]): string[] {
  return els.filter((e) => !e.hidden).map((e) => e.textContent);
}

describe('name labels', () => {
  it('label the local player first, then the nearest on screen, with roster names or ids', () => {
    const s = scene();
    s.roster.applyPresence({ kind: 'presence', shardId: 1, joined: [{ id: 3, name: 'ada' }], left: [] });
    // 1: own at the centre; 2..9 at growing distances; 10 off screen.
    place(s.players, [[500, 500], ...Array.from({ length: 8 }, (_, i): [number, number] => [500 + 10 * (i + 1), 500]), [950, 950]]);
    s.labels.update(s.players, OWN, s.camera, s.roster);
    expect(shown(s.els)).toEqual(['me', '#2', 'ada', '#4', '#5', '#6', '#7']);
    expect(s.els[0]?.classList.contains('own')).toBe(true);
    expect(s.els[1]?.classList.contains('own')).toBe(false);
    // Centre of the view, lifted above the body: (400, 300 - (9 * 1.4 + 2)).
    expect([s.els[0]?.style.getPropertyValue('--x'), s.els[0]?.style.getPropertyValue('--y')]).toEqual(['400px', '285px']);
  });

  it('label the player under the mouse, however far from the local one', () => {
    const s = scene();
    place(s.players, [[500, 500], ...Array.from({ length: 7 }, (_, i): [number, number] => [510 + i, 500]), [200, 300]]);
    s.labels.setMouse(s.camera.screenX(200) + 3, s.camera.screenY(300));
    s.labels.update(s.players, OWN, s.camera, s.roster);
    expect(s.labels.hovered).toBe(9);
    expect(shown(s.els).slice(0, 2)).toEqual(['me', '#9']);
    s.labels.clearMouse();
    s.labels.update(s.players, OWN, s.camera, s.roster);
    expect(s.labels.hovered).toBe(-1);
    expect(shown(s.els)).not.toContain('#9');
  });

  it('write nothing when nothing visible changed, and only what changed otherwise', () => {
    const s = scene();
    // Far enough apart that no label has to give way to another.
    place(s.players, [[500, 500], [560, 500], [620, 500]]);
    s.labels.update(s.players, OWN, s.camera, s.roster);
    const writes = { ...s.doc.writes };
    s.labels.update(s.players, OWN, s.camera, s.roster);
    place(s.players, [[500, 500], [560.3, 500.2], [620, 500]]); // under half a pixel
    s.labels.update(s.players, OWN, s.camera, s.roster);
    expect(s.doc.writes).toEqual(writes);
    place(s.players, [[500, 500], [563, 500], [620, 500]]);
    s.labels.update(s.players, OWN, s.camera, s.roster);
    expect(s.doc.writes).toEqual({ ...writes, style: writes.style + 1 });
    s.roster.applyPresence({ kind: 'presence', shardId: 1, joined: [{ id: 2, name: 'bo' }], left: [] });
    s.labels.update(s.players, OWN, s.camera, s.roster);
    expect(s.doc.writes).toEqual({ ...writes, style: writes.style + 1, text: writes.text + 1 });
    expect(shown(s.els)).toEqual(['me', 'bo', '#3']);
  });

  it('never lets labels cover each other or the own player: they move aside, or wait when there is no room', () => {
    const s = scene();
    // A crowd around the own player, bodies 6 units apart: most names cannot fit.
    place(s.players, [[500, 500], ...Array.from({ length: 8 }, (_, i): [number, number] => [500 + 6 * (i - 4), 506 + (i % 2) * 6])]);
    s.labels.update(s.players, OWN, s.camera, s.roster);
    const rects = s.els
      .filter((e) => !e.hidden)
      .map((e) => {
        const x = parseFloat(e.style.getPropertyValue('--x'));
        const y = parseFloat(e.style.getPropertyValue('--y'));
        const w = e.textContent.length * 7 + 8;
        return [x - w / 2, y - 17, x + w / 2, y] as const;
      });
    expect(rects.length).toBeGreaterThanOrEqual(3);
    expect(rects.length).toBeLessThan(8);
    expect(shown(s.els)[0]).toBe('me');
    const overlap = (a: readonly number[], b: readonly number[]): boolean =>
      (a[0] as number) < (b[2] as number) && (a[2] as number) > (b[0] as number) && (a[1] as number) < (b[3] as number) && (a[3] as number) > (b[1] as number);
    // The own body (its ring: 9 units x 1.4 at one pixel per unit) at the centre of the 800 x 600 view.
    const ownBody = [400 - 12.6, 300 - 12.6, 400 + 12.6, 300 + 12.6];
    rects.forEach((r, i) => {
      expect(overlap(r, ownBody), `label ${i} over the own player`).toBe(false);
      rects.forEach((q, j) => expect(i === j || !overlap(r, q), `labels ${i} and ${j} overlap`).toBe(true));
    });
  });

  it("keep clear of the page's panels: a name that would lie under one moves aside or waits", () => {
    const s = scene();
    // A panel over the right of the view, from x = 560 (CSS px), and the HUD over the top left.
    const panel = { left: 560, top: 0, right: 800, bottom: 600 };
    const hud = { left: 0, top: 0, right: 300, bottom: 40 };
    s.labels.setCovered([panel, hud]);
    // 2 stands just left of the panel (its name would reach into it above the body), 3 under it, 4 under the HUD (its name goes below).
    place(s.players, [[500, 500], [640, 500], [700, 480], [150, 790]]);
    s.labels.update(s.players, OWN, s.camera, s.roster);
    const boxes = s.els
      .filter((e) => !e.hidden)
      .map((e) => {
        const x = parseFloat(e.style.getPropertyValue('--x'));
        const y = parseFloat(e.style.getPropertyValue('--y'));
        const w = e.textContent.length * 7 + 8;
        return { text: e.textContent, box: [x - w / 2, y - 17, x + w / 2, y] as const };
      });
    expect(boxes.map((b) => b.text)).toContain('me');
    for (const { text, box } of boxes) {
      for (const r of [panel, hud]) expect(box[0] < r.right && box[2] > r.left && box[1] < r.bottom && box[3] > r.top, `${text} under a panel`).toBe(false);
    }
    expect(shown(s.els)).not.toContain('#3');
    // Without panels, they are labelled.
    s.labels.setCovered([]);
    s.labels.update(s.players, OWN, s.camera, s.roster);
    expect(shown(s.els)).toEqual(expect.arrayContaining(['#2', '#3', '#4']));
  });

  it('with area of interest, label only the players within the view radius', () => {
    const s = scene();
    s.camera.setViewRadius(100);
    s.camera.zoomBy(0.001);
    s.camera.follow(500, 500, 0);
    place(s.players, [[500, 500], [590, 500], [640, 500]]);
    s.labels.update(s.players, OWN, s.camera, s.roster);
    expect(shown(s.els)).toEqual(['me', '#2']);
  });

  it('hide labels of players that are gone', () => {
    const s = scene();
    place(s.players, [[500, 500], [520, 500]]);
    s.labels.update(s.players, OWN, s.camera, s.roster);
    place(s.players, [[500, 500]]);
    s.labels.update(s.players, OWN, s.camera, s.roster);
    expect(shown(s.els)).toEqual(['me']);
  });
});

describe('a steady frame of labels', () => {
  it('allocates nothing while 500 players walk under them', async () => {
    const s = scene();
    s.roster.applyRoster({ kind: 'roster', players: Array.from({ length: 500 }, (_, i) => ({ id: i + 1, name: `p${i + 1}`, shard: 1 })) });
    let frame = 0;
    const bytes = await bytesPerFrame(() => {
      const t = frame++ * 0.31;
      s.players.begin();
      for (let i = 0; i < 500; i++) s.players.put(i + 1, 350 + Math.abs(((i * 37 + t) % 600) - 300), 100 + ((i * 53) % 800), 0, 1, 1);
      s.labels.update(s.players, OWN, s.camera, s.roster);
    });
    expect(s.doc.writes.style, 'labels moved').toBeGreaterThan(MEASURED_FRAMES);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});
