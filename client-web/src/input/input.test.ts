// Input to direction, and the change-only, rate-limited sender.
import { describe, expect, it } from 'vitest';
import { decodeClientForTest } from '../testing/client-decode.js';
import { STILL, dragToDirection, keysToDirection, sameDirection } from './direction.js';
import { FakeTimers } from '../testing/fake-timers.js';
import { DirectionSender, nextSeq } from './sender.js';

const S = Math.SQRT1_2;

describe('keys to direction', () => {
  it.each([
    [[], 0, 0],
    [['KeyW'], 0, 1],
    [['ArrowUp'], 0, 1],
    [['KeyS'], 0, -1],
    [['ArrowLeft'], -1, 0],
    [['KeyD'], 1, 0],
    [['KeyW', 'KeyD'], S, S],
    [['ArrowDown', 'ArrowLeft'], -S, -S],
    [['KeyW', 'KeyS'], 0, 0],
    [['KeyA', 'KeyD', 'KeyW'], 0, 1],
    [['KeyW', 'ArrowUp'], 0, 1],
    [['KeyW', 'ArrowUp', 'KeyD'], S, S],
    [['KeyQ', 'Space'], 0, 0],
  ] as const)('%j walks (%f, %f)', (keys, x, y) => {
    const d = keysToDirection(keys);
    expect(d.x).toBeCloseTo(x, 9);
    expect(d.y).toBeCloseTo(y, 9);
  });
});

describe('drag to direction', () => {
  it('stands still inside the dead zone', () => {
    expect(dragToDirection(5, -5)).toEqual(STILL);
  });

  it('maps screen drags to world axes (screen y grows down, world y up)', () => {
    expect(dragToDirection(0, -100)).toEqual({ x: 0, y: 1 });
    expect(dragToDirection(100, 0)).toEqual({ x: 1, y: 0 });
    expect(dragToDirection(0, 100)).toEqual({ x: 0, y: -1 });
  });

  it('snaps a wobbling finger to the same sector', () => {
    const a = dragToDirection(100, -3);
    const b = dragToDirection(100, 4);
    expect(sameDirection(a, b)).toBe(true);
    const d = dragToDirection(60, -61);
    expect(Math.hypot(d.x, d.y)).toBeCloseTo(1, 9);
    expect(d.x).toBeCloseTo(S, 9);
  });
});

function harness(): { timers: FakeTimers; sent: [number, number, number][]; sender: DirectionSender; live: { on: boolean } } {
  const timers = new FakeTimers();
  const sent: [number, number, number][] = [];
  const live = { on: true };
  const sender = new DirectionSender(
    (bytes) => {
      if (!live.on) return false;
      const m = decodeClientForTest(bytes);
      sent.push([m.seq, m.x, m.y]);
      return true;
    },
    timers,
    50,
  );
  return { timers, sent, sender, live };
}

describe('direction sender', () => {
  it('sends only changes of direction', () => {
    const { sent, sender, timers } = harness();
    sender.set({ x: 1, y: 0 });
    timers.advance(100);
    sender.set({ x: 1, y: 0 });
    timers.advance(100);
    sender.set(keysToDirection(['KeyD']));
    timers.advance(100);
    sender.set(STILL);
    expect(sent).toEqual([
      [1, 1, 0],
      [2, 0, 0],
    ]);
  });

  it('sends the first change at once and holds later ones to one per interval, latest wins', () => {
    const { sent, sender, timers } = harness();
    sender.set({ x: 1, y: 0 });
    expect(sent.length).toBe(1);
    timers.advance(10);
    sender.set({ x: 0, y: 1 });
    sender.set({ x: -1, y: 0 });
    expect(sent.length).toBe(1);
    timers.advance(39);
    expect(sent.length).toBe(1);
    timers.advance(1);
    expect(sent).toEqual([
      [1, 1, 0],
      [2, -1, 0],
    ]);
  });

  it('a change and its undo inside one interval send nothing more', () => {
    const { sent, sender, timers } = harness();
    sender.set({ x: 1, y: 0 });
    timers.advance(5);
    sender.set(STILL);
    sender.set({ x: 1, y: 0 });
    timers.advance(500);
    expect(sent.length).toBe(1);
  });

  it('never exceeds 20 inputs a second however fast the keys change', () => {
    const { sent, sender, timers } = harness();
    for (let i = 0; i < 1000; i++) {
      sender.set(i % 2 ? { x: 1, y: 0 } : { x: 0, y: 1 });
      timers.advance(1);
    }
    expect(sent.length).toBeLessThanOrEqual(21);
    expect(sent.length).toBeGreaterThanOrEqual(19);
  });

  it('resends the held direction after a reconnect', () => {
    const { sent, sender, timers, live } = harness();
    sender.set({ x: 0, y: 1 });
    live.on = false;
    timers.advance(100);
    sender.set({ x: 1, y: 0 });
    expect(sent.length).toBe(1);
    live.on = true;
    timers.advance(100);
    sender.resync();
    // The Input that could not be sent used no number.
    expect(sent[sent.length - 1]).toEqual([2, 1, 0]);
  });

  it('reports every Input sent with its number, skipping numbers whose low 7 bits are 0', () => {
    const timers = new FakeTimers();
    const reported: [number, number, number][] = [];
    const sender = new DirectionSender(() => true, timers, 50, (seq, dir, at) => reported.push([seq, dir.x, at]));
    for (let i = 0; i < 130; i++) {
      sender.set(i % 2 ? STILL : { x: 1, y: 0 });
      timers.advance(50);
    }
    expect(reported.length).toBe(130);
    expect(reported.map(([seq]) => seq).filter((seq) => (seq & 0x7f) === 0)).toEqual([]);
    expect(reported[126]).toEqual([127, 1, 126 * 50]);
    expect(reported[127]?.[0]).toBe(129);
    expect(nextSeq(0xffffffff)).toBe(1);
  });
});
