// The transport decision: WebTransport where the browser has it, the shard
// offers it and a session is up within the bound; the websocket otherwise,
// with the reason. Against a fake fetch, fake sessions and a fake clock.
import { describe, expect, it } from 'vitest';
import { FakeSession, settle } from '../testing/fake-session.js';
import { FakeSocket } from '../testing/fake-socket.js';
import { FakeTimers } from '../testing/fake-timers.js';
import { type DialEnv, type OfferResponse, WEBTRANSPORT_DEADLINE_MS, parseOffer, sessionUrl, webTransportFirst } from './dial.js';
import type { Dialed } from './transport.js';

const HASH = 'ab'.repeat(32);
const OFFER = { addr: '127.0.0.1:4433', port: 4433, certificateHashes: [{ algorithm: 'sha-256', value: HASH }] };

interface Rig {
  env: DialEnv;
  timers: FakeTimers;
  sessions: FakeSession[];
  sockets: FakeSocket[];
  fetched: string[];
  aborted: () => boolean;
}

/** `answer`: what the offer's fetch gives (a response, a rejection, or never). */
function rig(answer: 'never' | 'throw' | OfferResponse, opts: { webTransport?: boolean; onSession?: (s: FakeSession) => void } = {}): Rig {
  const timers = new FakeTimers();
  const sessions: FakeSession[] = [];
  const sockets: FakeSocket[] = [];
  const fetched: string[] = [];
  let signal: AbortSignal | null = null;
  const env: DialEnv = {
    pageUrl: 'https://game.example:8443/play',
    wsUrl: 'wss://game.example:8443/ws',
    timers,
    maxMessageBytes: 1 << 16,
    fetch: (url, s) => {
      fetched.push(url);
      signal = s;
      if (answer === 'never') return new Promise(() => undefined);
      if (answer === 'throw') return Promise.reject(new TypeError('Failed to fetch'));
      return Promise.resolve(answer);
    },
    webTransport:
      opts.webTransport === false
        ? null
        : (url, options) => {
            const s = new FakeSession(url, options);
            sessions.push(s);
            opts.onSession?.(s);
            return s;
          },
    webSocket: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
  };
  return { env, timers, sessions, sockets, fetched, aborted: () => signal?.aborted ?? false };
}

const json = (body: unknown, status = 200): OfferResponse => ({ ok: status >= 200 && status < 300, status, json: () => Promise.resolve(body) });

/** Dials, letting the fake session come up (or not) as `play` says, and returns what the dial gave. */
async function dialed(r: Rig): Promise<Dialed> {
  let out: Dialed | null = null;
  void Promise.resolve(webTransportFirst(r.env)()).then((d) => (out = d));
  await settle();
  if (!out) throw new Error('the dial has not ended');
  return out;
}

describe('dial', () => {
  it('takes WebTransport when offered and up in time, trusting the offered hash, at the offered address', async () => {
    const r = rig(json(OFFER), { onSession: (s) => s.accept() });
    const d = await dialed(r);
    expect(d.transport.kind).toBe('webtransport');
    expect(d.fallback).toBeNull();
    expect(r.fetched).toEqual(['https://game.example:8443/webtransport']);
    expect(r.sessions[0]?.url).toBe('https://127.0.0.1:4433/');
    const options = r.sessions[0]?.options as { serverCertificateHashes: { algorithm: string; value: Uint8Array }[] };
    expect(options.serverCertificateHashes.map((h) => [h.algorithm, h.value.length, h.value[0]])).toEqual([['sha-256', 32, 0xab]]);
    expect(r.sessions[0]?.streamsOpened).toBe(1);
    expect(r.sockets.length).toBe(0);
  });

  it('falls back to the websocket in a browser without WebTransport, asking nothing', async () => {
    const r = rig(json(OFFER), { webTransport: false });
    const d = await dialed(r);
    expect([d.transport.kind, d.fallback]).toEqual(['websocket', 'unsupported']);
    expect(r.fetched).toEqual([]);
    expect(r.sockets.map((s) => s.url)).toEqual(['wss://game.example:8443/ws']);
  });

  it('falls back when the shard does not offer it (204; an older shard, 404) or the offer cannot be fetched', async () => {
    const none: OfferResponse = { ok: true, status: 204, json: () => Promise.reject(new SyntaxError('no body')) };
    for (const answer of [none, json('webtransport is off', 404), 'throw' as const]) {
      const r = rig(answer);
      const d = await dialed(r);
      expect([d.transport.kind, d.fallback]).toEqual(['websocket', 'not-offered']);
      expect(r.sessions.length).toBe(0);
    }
  });

  it.each([
    ['not JSON', { json: () => Promise.reject(new SyntaxError('bad')), ok: true, status: 200 }],
    ['no port', json({ addr: '127.0.0.1:4433', certificateHashes: [] })],
    ['a hash of another algorithm', json({ ...OFFER, certificateHashes: [{ algorithm: 'sha-1', value: HASH }] })],
    ['a short hash', json({ ...OFFER, certificateHashes: [{ algorithm: 'sha-256', value: 'abcd' }] })],
  ])('falls back on an offer it cannot use: %s', async (_, answer) => {
    const r = rig(answer);
    const d = await dialed(r);
    expect([d.transport.kind, d.fallback]).toEqual(['websocket', 'bad-offer']);
    expect(r.sessions.length).toBe(0);
  });

  it('falls back when the session is refused (a hash that does not match), and closes nothing twice', async () => {
    const r = rig(json(OFFER), { onSession: (s) => s.fail() });
    const d = await dialed(r);
    expect([d.transport.kind, d.fallback]).toEqual(['websocket', 'refused']);
  });

  it('falls back when nothing answers within the bound, aborting the offer request', async () => {
    const r = rig('never');
    let out: Dialed | null = null;
    void Promise.resolve(webTransportFirst(r.env)()).then((d) => (out = d));
    await settle();
    r.timers.advance(WEBTRANSPORT_DEADLINE_MS - 1);
    await settle();
    expect(out).toBeNull();
    r.timers.advance(1);
    await settle();
    expect(out).toMatchObject({ fallback: 'no-answer' });
    expect(r.aborted()).toBe(true);
    expect(r.sockets.length).toBe(1);
  });

  it('closes a session that comes up after the bound, and keeps the websocket', async () => {
    const r = rig(json(OFFER));
    let out: Dialed | null = null;
    void Promise.resolve(webTransportFirst(r.env)()).then((d) => (out = d));
    await settle();
    expect(r.sessions.length).toBe(1);
    r.timers.advance(WEBTRANSPORT_DEADLINE_MS);
    await settle();
    expect(out).toMatchObject({ fallback: 'no-answer' });
    expect(r.sessions[0]?.closedByPage).not.toBeNull();
  });

  it('asks again at every dial: a shard that offers it after one that did not is taken', async () => {
    let offered = false;
    const r = rig(json(OFFER), { onSession: (s) => s.accept() });
    r.env = { ...r.env, fetch: () => Promise.resolve(offered ? json(OFFER) : json(null, 204)) };
    const dial = webTransportFirst(r.env);
    const first = await Promise.resolve(dial());
    offered = true;
    const second = await Promise.resolve(dial());
    expect([first.transport.kind, first.fallback]).toEqual(['websocket', 'not-offered']);
    expect([second.transport.kind, second.fallback]).toEqual(['webtransport', null]);
  });
});

describe('offer', () => {
  it('reads the shard\'s JSON: an address, a port, hashes (none with the operator\'s certificate)', () => {
    expect(parseOffer(OFFER)).toMatchObject({ host: '127.0.0.1', port: 4433 });
    expect(parseOffer({ addr: '[::1]:4433', port: 4433, certificateHashes: [] })).toEqual({ host: '[::1]', port: 4433, hashes: [] });
    expect(parseOffer({ addr: '0.0.0.0:4433', port: 4433, certificateHashes: [] })?.host).toBeNull();
    expect(parseOffer({ addr: '[::]:4433', port: 4433 })?.host).toBeNull();
    for (const bad of [null, 'x', 7, { addr: 4433, port: 4433 }, { addr: '1.2.3.4:1', port: 0 }, { addr: '1.2.3.4:1', port: 70000 }, { addr: 'nope', port: 1 }, { addr: 'a/b:1', port: 1 }, { ...OFFER, certificateHashes: 'x' }, { ...OFFER, certificateHashes: [{ algorithm: 'sha-256', value: 'zz'.repeat(32) }] }]) {
      expect(parseOffer(bad)).toBeNull();
    }
  });

  it('goes to the offered host, or the page\'s own when the shard listens on every address', () => {
    const page = 'https://game.example:8443/';
    expect(sessionUrl({ host: '10.0.0.7', port: 4433, hashes: [] }, page)).toBe('https://10.0.0.7:4433/');
    expect(sessionUrl({ host: null, port: 4433, hashes: [] }, page)).toBe('https://game.example:4433/');
    expect(sessionUrl({ host: null, port: 9, hashes: [] }, 'http://[::1]:8080/')).toBe('https://[::1]:9/');
  });
});
