// Per-player rings of positions: order, bounds, removal by moving the last
// player in, and interpolation between the two samples around a time.
import { describe, expect, it } from 'vitest';
import { MergedPlayers } from './world.js';
import { PlayerTracks, SAMPLES } from './player-tracks.js';

/** Draws `slot` at server time `t` and returns [x, y, heading]. */
function at(tr: PlayerTracks, slot: number, t: number): [number, number, number] {
  const out = new MergedPlayers();
  out.begin();
  tr.drawMs = t;
  tr.emit(slot, out);
  const i = out.indexOf(tr.ids[slot] as number);
  return [out.x[i] as number, out.y[i] as number, out.heading[i] as number];
}

describe('player tracks', () => {
  it('keeps samples in time order, drops duplicates and old ones, and the newest SAMPLES', () => {
    const tr = new PlayerTracks(2);
    const s = tr.add(42, 50);
    expect(tr.push(s, 100, 1, 1, 0, 0)).toBe(true);
    expect(tr.push(s, 100, 2, 2, 0, 0)).toBe(false);
    expect(tr.push(s, 50, 3, 3, 0, 0)).toBe(false);
    for (let t = 150; t < 150 + 50 * SAMPLES; t += 50) tr.push(s, t, t, 0, 0, 0);
    expect(tr.samples(s)).toBe(SAMPLES);
    expect(tr.newestMs(s)).toBe(100 + 50 * SAMPLES);
    // 1 + SAMPLES pushed: the first (t = 100) went; drawn before the oldest kept, it stays there.
    expect(at(tr, s, 0)[0]).toBe(150);
  });

  it('interpolates between the samples around the time, and holds the newest after it', () => {
    const tr = new PlayerTracks();
    tr.speed = 300;
    tr.tickMs = 50;
    const s = tr.add(7, 50);
    tr.push(s, 0, 0, 0, 0, 1);
    tr.push(s, 50, 15, 0, Math.PI / 2, 1);
    tr.push(s, 100, 30, 0, Math.PI / 2, 1);
    const [x, y, h] = at(tr, s, 25);
    expect([x, y]).toEqual([7.5, 0]);
    expect(h).toBeCloseTo(Math.PI / 4, 6);
    expect(at(tr, s, 75)[0]).toBe(22.5);
    expect(at(tr, s, 125)[0]).toBe(30); // never extrapolated: a walker's next sample may show a stop or a turn
    expect(at(tr, s, 1000)[0]).toBe(30);
    tr.drawMs = Number.NaN;
    expect(at(tr, s, Number.NaN)[0]).toBe(30); // no render time yet: the newest
  });

  it('does not slide a teleport', () => {
    const tr = new PlayerTracks();
    tr.speed = 300;
    tr.tickMs = 50;
    const s = tr.add(7, 50);
    tr.push(s, 0, 10, 10, 0, 0);
    tr.push(s, 50, 900, 10, 0, 0);
    expect(at(tr, s, 25)[0]).toBe(900);
  });

  it('moves the last player into a removed slot, samples and all, and finds it by id', () => {
    const tr = new PlayerTracks(1);
    for (let id = 1; id <= 100; id++) {
      const s = tr.add(id, 50);
      tr.push(s, 0, id, -id, 0, 0);
      tr.interval[s] = id;
    }
    tr.remove(tr.slotOf(10));
    tr.remove(tr.slotOf(100));
    tr.remove(tr.slotOf(1));
    expect(tr.count).toBe(97);
    expect([tr.slotOf(1), tr.slotOf(10), tr.slotOf(100)]).toEqual([-1, -1, -1]);
    for (let id = 2; id < 100; id++) {
      if (id === 10) continue;
      const s = tr.slotOf(id);
      expect(tr.ids[s]).toBe(id);
      expect(tr.interval[s]).toBe(id);
      expect(at(tr, s, 0).slice(0, 2)).toEqual([id, -id]);
    }
  });
});
