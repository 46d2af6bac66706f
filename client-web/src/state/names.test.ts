// Names on request under area of interest: batching, the request rate, no
// repeat for ids asked, answers, retries for ids the server did not know,
// requests lost with a socket, and no allocation while there is nothing to ask.
import { describe, expect, it } from 'vitest';
import { MAX_NAMES_REQUEST_IDS } from '../net/protocol.js';
import { FRAME_BUDGET_BYTES, bytesPerFrame } from '../testing/allocation.js';
import { decodeClientForTest } from '../testing/client-decode.js';
import { NameBook } from './names.js';

/** A book whose requests land in `sent` (as id lists); `live` says whether a socket is open. */
function book(inView: (id: number) => boolean = () => true): { names: NameBook; sent: number[][]; live: { on: boolean } } {
  const sent: number[][] = [];
  const live = { on: true };
  const names = new NameBook((bytes) => {
    if (!live.on) return false;
    sent.push(decodeClientForTest(bytes).ids);
    return true;
  }, inView);
  return { names, sent, live };
}

/** Runs frames every 16 ms over [from, to) ms. */
function frames(names: NameBook, from: number, to: number): void {
  for (let now = from; now < to; now += 16) names.flush(now);
}

describe('name book', () => {
  it('asks for the ids it sees in one batch, once, and never for its own or a known name', () => {
    const { names, sent } = book();
    names.setOwn(1, 'me');
    names.learn(5, 'ada'); // from a chat line
    for (const id of [1, 5, 7, 8, 7, 9]) names.want(id);
    frames(names, 0, 100);
    expect(sent).toEqual([[7, 8, 9]]);
    for (const id of [7, 8, 9]) names.want(id);
    frames(names, 100, 2000);
    expect(sent).toHaveLength(1);
    expect([names.requests, names.idsAsked]).toEqual([1, 3]);
  });

  it('sends at most MAX_NAMES_REQUEST_IDS ids a request and at most four requests a second', () => {
    const { names, sent } = book();
    const ids = Array.from({ length: 1000 }, (_, i) => i + 100);
    for (const id of ids) names.want(id);
    frames(names, 0, 1000);
    expect(sent.length).toBeLessThanOrEqual(4);
    expect(sent.every((batch) => batch.length <= MAX_NAMES_REQUEST_IDS)).toBe(true);
    frames(names, 1000, 3000);
    expect(sent.flat()).toEqual(ids); // all of them, in order, each once
    expect(sent.length).toBe(Math.ceil(1000 / MAX_NAMES_REQUEST_IDS));
  });

  it('learns the answer, bumping its version, and asks again later for ids the server did not know', () => {
    const { names, sent } = book();
    names.want(7);
    names.want(8);
    frames(names, 0, 20);
    const v = names.version;
    names.apply({ kind: 'names', players: [{ id: 7, name: 'Zoë <b>' }] }, 20);
    expect(names.name(7)).toBe('Zoë <b>');
    expect(names.version).toBe(v + 1);
    frames(names, 20, 1900);
    expect(sent).toEqual([[7, 8]]); // 8 not yet: the first retry is 2 s after the answer
    frames(names, 1900, 2400);
    expect(sent).toEqual([[7, 8], [8]]);
    names.apply({ kind: 'names', players: [] }, 2400);
    frames(names, 2400, 20_000);
    // Asked three times in all (after 2 s, then 4 s), then given up.
    expect(sent).toEqual([[7, 8], [8], [8]]);
    names.want(8);
    frames(names, 20_000, 21_000);
    expect(sent).toHaveLength(3);
  });

  it('does not ask again for an unknown id that left the view', () => {
    const inView = new Set([8]);
    const { names, sent } = book((id) => inView.has(id));
    names.want(8);
    frames(names, 0, 20);
    names.apply({ kind: 'names', players: [] }, 20);
    inView.delete(8);
    frames(names, 20, 5000);
    expect(sent).toEqual([[8]]);
    // Back in view: asked afresh.
    inView.add(8);
    names.want(8);
    frames(names, 5000, 5300);
    expect(sent).toEqual([[8], [8]]);
  });

  it('keeps ids while there is no socket, and asks again for the ones a closed socket never answered', () => {
    const { names, sent, live } = book();
    live.on = false;
    names.want(7);
    frames(names, 0, 1000);
    expect(sent).toEqual([]);
    live.on = true;
    frames(names, 1000, 1300);
    expect(sent).toEqual([[7]]);
    names.reconnected(); // the answer was lost with the socket
    frames(names, 1300, 1600);
    expect(sent).toEqual([[7], [7]]);
    names.apply({ kind: 'names', players: [{ id: 7, name: 'ada' }] }, 1600);
    expect(names.name(7)).toBe('ada');
  });

  it('forgets the oldest names past its capacity, never its own', () => {
    const names = new NameBook(() => true, () => true, { minIntervalMs: 250, maxIds: 128, retryMs: 2000, maxAsks: 3, capacity: 3 });
    names.setOwn(1, 'me');
    for (let id = 2; id <= 6; id++) names.learn(id, `p${id}`);
    expect(names.size).toBe(3);
    expect([names.name(1), names.name(2), names.name(6)]).toEqual(['me', undefined, 'p6']);
  });

  it('allocates nothing in a frame with nothing to ask', async () => {
    const { names } = book();
    for (let id = 1; id <= 500; id++) names.learn(id, `p${id}`);
    let now = 0;
    const bytes = await bytesPerFrame(() => {
      now += 16;
      for (let id = 1; id <= 500; id += 7) names.want(id);
      names.flush(now);
    });
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});
