// The HUD: its text, its refresh rate, DOM writes only for figures that
// changed, and no allocation in a steady frame.
import { describe, expect, it } from 'vitest';
import { FrameStats } from '../render/frame-stats.js';
import { Roster } from '../state/roster.js';
import { FRAME_BUDGET_BYTES, bytesPerFrame } from '../testing/allocation.js';
import { FakeDocument } from '../testing/fake-dom.js';
import { HUD_REFRESH_MS, Hud, type HudValues } from './hud.js';
import { PlayerList } from './players.js';

function hud(): { hud: Hud; doc: FakeDocument; text: () => string } {
  const doc = new FakeDocument();
  const el = doc.createElement('div');
  return { hud: new Hud(el.asHtml()), doc, text: () => el.textContent };
}

const values = (v: Partial<HudValues> = {}): HudValues => ({
  pingMs: 12.4,
  shard: 3,
  players: 6,
  inView: 3,
  delayMs: 100.2,
  fps: 59.7,
  frameCpuMs: 0.424,
  catchingUp: false,
  live: true,
  transport: '',
  ...v,
});

describe('hud', () => {
  it('shows every figure, and a dash for what is not known yet', () => {
    const h = hud();
    expect(h.hud.due(0)).toBe(true);
    h.hud.show(values({ pingMs: Number.NaN, frameCpuMs: Number.NaN, shard: 0 }));
    expect(h.text()).toBe('ping – · shard – · players 6 · delay 100 ms · 60 fps · cpu – ms');
    h.hud.show(values());
    expect(h.text()).toBe('ping 12 ms · shard 00000003 · players 6 · delay 100 ms · 60 fps · cpu 0.42 ms');
  });

  it('shows the players in view with area of interest, and the place count as players', () => {
    const h = hud();
    h.hud.setAreaOfInterest(true);
    h.hud.show(values({ players: 1234, inView: 17 }));
    expect(h.text()).toBe('ping 12 ms · shard 00000003 · players 1234 · in view 17 · delay 100 ms · 60 fps · cpu 0.42 ms');
    h.hud.show(values({ players: Number.NaN, inView: 17 })); // no PlaceStatus yet
    expect(h.text()).toContain('players – · in view 17 ·');
    h.hud.setAreaOfInterest(false);
    expect(h.text()).toBe('ping 12 ms · shard 00000003 · players – · delay 100 ms · 60 fps · cpu 0.42 ms');
  });

  it('says when it is catching up, and stops saying so', () => {
    const h = hud();
    h.hud.show(values({ catchingUp: true }));
    expect(h.text()).toBe('ping 12 ms · shard 00000003 · players 6 · delay 100 ms · 60 fps · cpu 0.42 ms · catching up');
    const writes = h.doc.totalWrites();
    h.hud.show(values({ catchingUp: true }));
    expect(h.doc.totalWrites()).toBe(writes);
    h.hud.show(values());
    expect(h.text()).toBe('ping 12 ms · shard 00000003 · players 6 · delay 100 ms · 60 fps · cpu 0.42 ms');
  });

  it('writes the shard id as the server does: 8 lowercase hex digits', () => {
    const h = hud();
    h.hud.show(values({ shard: 0xdead_beef }));
    expect(h.text()).toContain(' · shard deadbeef · ');
    h.hud.show(values({ shard: 42 }));
    expect(h.text()).toContain(' · shard 0000002a · ');
  });

  it('says which transport is in use while live, and why not WebTransport after a fallback', () => {
    const h = hud();
    h.hud.show(values({ transport: 'WebTransport' }));
    expect(h.text()).toBe('ping 12 ms · shard 00000003 · players 6 · delay 100 ms · 60 fps · cpu 0.42 ms · WebTransport');
    const writes = h.doc.totalWrites();
    h.hud.show(values({ transport: 'WebTransport' }));
    expect(h.doc.totalWrites()).toBe(writes);
    h.hud.show(values({ transport: 'WebSocket (WebTransport refused)', catchingUp: true }));
    expect(h.text()).toBe('ping 12 ms · shard 00000003 · players 6 · delay 100 ms · 60 fps · cpu 0.42 ms · WebSocket (WebTransport refused) · catching up');
    h.hud.show(values({ transport: 'WebSocket', live: false }));
    expect(h.text()).toBe('ping – · shard – · players – · delay – · 60 fps · cpu 0.42 ms · disconnected');
  });

  it('shows no stale figure while disconnected, and says so; the local ones stay', () => {
    const h = hud();
    h.hud.setAreaOfInterest(true);
    h.hud.show(values({ catchingUp: true }));
    h.hud.show(values({ live: false, catchingUp: true }));
    expect(h.text()).toBe('ping – · shard – · players – · in view – · delay – · 60 fps · cpu 0.42 ms · disconnected');
    h.hud.show(values());
    expect(h.text()).toBe('ping 12 ms · shard 00000003 · players 6 · in view 3 · delay 100 ms · 60 fps · cpu 0.42 ms');
  });

  it('refreshes at most every HUD_REFRESH_MS', () => {
    const h = hud();
    expect(h.hud.due(1000)).toBe(true);
    expect(h.hud.due(1000 + HUD_REFRESH_MS - 1)).toBe(false);
    expect(h.hud.due(1000 + HUD_REFRESH_MS)).toBe(true);
  });

  it('writes only the figures that changed as shown', () => {
    const h = hud();
    h.hud.show(values());
    const before = h.doc.totalWrites();
    h.hud.show(values({ pingMs: 12.1, delayMs: 99.9, fps: 60.2, frameCpuMs: 0.4249 })); // same when rounded
    expect(h.doc.totalWrites()).toBe(before);
    const textWrites = h.doc.writes.text;
    h.hud.show(values({ players: 7 }));
    expect(h.doc.writes.text).toBe(textWrites + 1);
    expect(h.doc.totalWrites()).toBe(before + 1);
    expect(h.text()).toContain('players 7 ');
  });
});

describe('a steady frame of the HUD and the players list', () => {
  it('allocates nothing, even when every frame refreshes the HUD', async () => {
    const h = hud();
    const list = new PlayerList(h.doc.createElement('ul').asHtml(), h.doc.createElement('span').asHtml());
    const roster = new Roster();
    roster.applyRoster({ kind: 'roster', players: Array.from({ length: 500 }, (_, i) => ({ id: i + 1, name: `p${i + 1}`, shard: 1 })) });
    list.show(roster, 'Players');
    const stats = new FrameStats();
    const v = values();
    let now = 0;
    let f = 0;
    // A refresh per frame, so the refresh path runs optimized as a frame
    // does in a page (at four a second it would still be warming up).
    const bytes = await bytesPerFrame(() => {
      now += HUD_REFRESH_MS;
      f++;
      stats.record(now, f % 3); // whole ms: the test's own call boxes nothing
      if (h.hud.due(now)) {
        v.pingMs = 20 + (f % 5);
        v.fps = stats.fps();
        v.frameCpuMs = stats.meanCpuMs();
        h.hud.show(v);
      }
      list.update(1, now);
    });
    expect(h.text()).toMatch(/^ping 2\d ms · shard 00000003 · players 6 · delay 100 ms · 4 fps · cpu 1\.\d\d ms$/);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});
