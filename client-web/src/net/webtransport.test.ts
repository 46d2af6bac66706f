// The WebTransport transport under the connection: the Hello framed on the
// stream, the stream's messages and the datagrams given as messages, and a
// close reaching the same close policy as a websocket's (the code from the
// Error before it: browsers do not show QUIC's close code). Against a fake
// session, with real server frames from the fixture.
import { describe, expect, it } from 'vitest';
import fixture from '../../../schema/fixtures/server-frames.json';
import { decodeClientForTest } from '../testing/client-decode.js';
import { FakeSession, settle } from '../testing/fake-session.js';
import { FakeSocket } from '../testing/fake-socket.js';
import { FakeTimers } from '../testing/fake-timers.js';
import { Connection, type ConnectionState } from './connection.js';
import { MessageReader, framed } from './framing.js';
import { type ServerMsg } from './protocol.js';
import type { Dialed } from './transport.js';
import { WebTransportTransport, closeCodeOf } from './webtransport.js';
import { CloseCode } from '../generated/mino/wire.js';

function frame(name: string): Uint8Array {
  const f = fixture.frames.find((x) => x.name === name);
  if (!f) throw new Error(name);
  return Uint8Array.from(f.hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}

/** The server's Error of `code` (the fake socket builds it with the generated builder). */
function errorFrame(code: CloseCode, text: string): Uint8Array {
  const s = new FakeSocket('x');
  let out = new Uint8Array(0);
  s.onmessage = (ev) => (out = new Uint8Array(ev.data as ArrayBuffer));
  s.error(code, text);
  return out;
}

interface Rig {
  conn: Connection;
  sessions: FakeSession[];
  states: ConnectionState[];
  messages: ServerMsg['kind'][];
  timers: FakeTimers;
}

/** A connection whose every dial gives an established WebTransport session. */
async function rig(): Promise<Rig> {
  const sessions: FakeSession[] = [];
  const states: ConnectionState[] = [];
  const messages: ServerMsg['kind'][] = [];
  const timers = new FakeTimers();
  const conn = new Connection({
    name: 'Ada',
    timers,
    random: () => 0.5,
    dial: async (): Promise<Dialed> => {
      const s = new FakeSession('https://127.0.0.1:4433/', {});
      sessions.push(s);
      s.accept();
      return { transport: new WebTransportTransport(s, await s.createBidirectionalStream(), 1 << 16), fallback: null };
    },
    handlers: { message: (m) => messages.push(m.kind), state: (s) => states.push(s) },
  });
  conn.start();
  await settle();
  return { conn, sessions, states, messages, timers };
}

function last<T>(xs: T[]): T {
  const x = xs[xs.length - 1];
  if (x === undefined) throw new Error('empty');
  return x;
}

/** The messages the page wrote on a session's stream. */
function written(s: FakeSession): Uint8Array[] {
  const r = new MessageReader(1 << 16);
  for (const chunk of s.written) r.feed(chunk);
  const out: Uint8Array[] = [];
  for (let m = r.take(); m !== null; m = r.take()) out.push(m);
  return out;
}

/** Welcomes the session, then a view frame every tick (50 ms) for a second: a walking place. */
async function walkingPlace(r: Rig, s: FakeSession): Promise<void> {
  s.streamMessage(frame('welcome'));
  await settle();
  for (let i = 0; i < 20; i++) {
    r.timers.advance(50);
    s.datagram(frame('view'));
    await settle();
  }
}

describe('webtransport transport', () => {
  it('says hello on the stream, length-prefixed, and plays: stream messages and datagrams alike', async () => {
    const r = await rig();
    const s = last(r.sessions);
    expect(r.conn.transportKind).toBe('webtransport');
    const hello = decodeClientForTest(last(written(s)));
    expect([hello.kind, hello.name, hello.ticket]).toEqual(['hello', 'Ada', null]);
    s.streamMessage(frame('welcome'));
    await settle();
    expect(last(r.states)).toEqual({ kind: 'live' });
    s.datagram(frame('view'));
    s.streamMessage(frame('chat'));
    await settle();
    expect(r.messages).toEqual(['welcome', 'view', 'chat']);
    expect(r.conn.send(framed(Uint8Array.of(1)).subarray(4))).toBe(true);
    expect(written(s).length).toBe(2);
  });

  it('drops a view frame that overtook the Welcome (a datagram before the stream)', async () => {
    const r = await rig();
    const s = last(r.sessions);
    s.datagram(frame('view'));
    await settle();
    s.streamMessage(frame('welcome'));
    await settle();
    expect(r.messages).toEqual(['welcome']);
    expect(r.conn.earlyViews).toBe(1);
  });

  it('counts a datagram that is no message as a decode error, and stays', async () => {
    const r = await rig();
    const s = last(r.sessions);
    s.streamMessage(frame('welcome'));
    s.datagram(Uint8Array.of(1, 2, 3));
    await settle();
    expect(r.conn.decodeErrors).toBe(1);
    expect(r.conn.live).toBe(true);
  });

  it('reconnects resuming after the connection is lost, over a new session', async () => {
    const r = await rig();
    last(r.sessions).streamMessage(frame('welcome'));
    await settle();
    last(r.sessions).lose();
    await settle();
    expect(last(r.states)).toMatchObject({ kind: 'reconnecting', why: 'dropped' });
    r.timers.advance(2000);
    await settle();
    expect(r.sessions.length).toBe(2);
    expect(decodeClientForTest(last(written(last(r.sessions)))).ticket).not.toBeNull();
  });

  it('takes a shard that stops answering for dead: a Ping after five quiet ticks, a new session a second later', async () => {
    const r = await rig();
    const s = last(r.sessions);
    await walkingPlace(r, s);
    const sent = written(s).length;
    r.timers.advance(240);
    expect(written(s).length, 'no Ping before five ticks of silence').toBe(sent);
    r.timers.advance(20);
    expect(decodeClientForTest(last(written(s))).kind).toBe('ping');
    // Any answer ends the silence.
    s.streamMessage(frame('pong'));
    await settle();
    r.timers.advance(1200);
    expect(s.closedByPage, 'answered: alive').toBeNull();
    // Then no answer: gone, and the connection moves on (resuming) without waiting for QUIC's idle timeout.
    r.timers.advance(1100);
    await settle();
    expect(s.closedByPage).not.toBeNull();
    expect(last(r.states)).toMatchObject({ kind: 'reconnecting', why: 'dropped' });
    r.timers.advance(2000);
    await settle();
    expect(r.sessions.length).toBe(2);
    expect(decodeClientForTest(last(written(last(r.sessions)))).ticket).not.toBeNull();
  });

  it('keeps a session whose QUIC stack still answers while its tick is silent, and gives a slow path its round trips', async () => {
    const r = await rig();
    const s = last(r.sessions);
    s.stats = { packetsReceived: 100, smoothedRtt: 600 };
    await walkingPlace(r, s);
    // The Ping at 250 ms of silence; a 600 ms round trip gets 2.4 s to answer.
    r.timers.advance(250);
    await settle();
    expect(decodeClientForTest(last(written(s))).kind).toBe('ping');
    r.timers.advance(2000);
    await settle();
    expect(s.closedByPage, 'within four round trips').toBeNull();
    // No message, but packets came (the shard acknowledged): alive, another Ping.
    s.stats = { packetsReceived: 103, smoothedRtt: 600 };
    // Judged on a count read at or after the answer time (a look late: the statistics come asynchronously).
    for (let i = 0; i < 10; i++) {
      r.timers.advance(50);
      await settle();
    }
    expect(s.closedByPage, 'its QUIC stack answers').toBeNull();
    const pings = written(s).filter((m) => decodeClientForTest(m).kind === 'ping').length;
    expect(pings).toBe(2);
    // Then nothing at all: dead.
    r.timers.advance(2500);
    await settle();
    r.timers.advance(250);
    await settle();
    expect(s.closedByPage).not.toBeNull();
  });

  it('acts on the Error before the close as on a websocket close code: a replaced session stops', async () => {
    const r = await rig();
    const s = last(r.sessions);
    s.streamMessage(frame('welcome'));
    s.streamMessage(errorFrame(CloseCode.SessionReplaced, 'session replaced'));
    s.finishStream();
    await settle();
    expect(last(r.states)).toMatchObject({ kind: 'stopped' });
    expect(String((last(r.states) as { reason: string }).reason)).toContain('another tab');
    expect(r.conn.reconnectPending).toBe(false);
  });

  it('moves on at once after a Move and its Error (a drain), resuming with the Move\'s ticket', async () => {
    const r = await rig();
    const s = last(r.sessions);
    s.streamMessage(frame('welcome'));
    s.streamMessage(frame('move'));
    s.streamMessage(errorFrame(CloseCode.Moved, 'moved to another shard'));
    s.finishStream();
    await settle();
    expect(last(r.states)).toMatchObject({ kind: 'reconnecting', why: 'moved' });
  });

  it('counts a dial that gives no transport at all as a drop, and dials again', async () => {
    const timers = new FakeTimers();
    const states: ConnectionState[] = [];
    let dials = 0;
    const conn = new Connection({
      name: 'Ada',
      timers,
      random: () => 0.5,
      dial: () => {
        dials++;
        return Promise.reject(new Error('no transport'));
      },
      handlers: { message: () => undefined, state: (s) => states.push(s) },
    });
    conn.start();
    await settle();
    expect(conn.reconnectPending).toBe(true);
    timers.advance(2000);
    await settle();
    expect(dials).toBe(2);
    conn.stop();
    expect(conn.reconnectPending).toBe(false);
  });

  it('takes a WebTransport close code when the session gives one; anything else is a drop (1006)', () => {
    expect(closeCodeOf({ closeCode: 4013 })).toBe(4013);
    expect(closeCodeOf({ closeCode: 1012, reason: 'restart' })).toBe(1012);
    expect(closeCodeOf({ closeCode: 0 })).toBe(1006);
    expect(closeCodeOf({})).toBe(1006);
    expect(closeCodeOf(undefined)).toBe(1006);
  });

  it('ends on a length over the limit on the stream: a decode error, then a reconnect', async () => {
    const r = await rig();
    const s = last(r.sessions);
    s.streamMessage(frame('welcome'));
    await settle();
    s.streamBytes(Uint8Array.of(0xff, 0xff, 0xff, 0x7f));
    await settle();
    expect(r.conn.decodeErrors).toBe(1);
    expect(last(r.states)).toMatchObject({ kind: 'reconnecting' });
    expect(s.closedByPage).not.toBeNull();
  });

  it('closes the session when the page leaves, with no event after', async () => {
    const r = await rig();
    const s = last(r.sessions);
    s.streamMessage(frame('welcome'));
    await settle();
    const states = r.states.length;
    r.conn.stop();
    await settle();
    expect(s.closedByPage).toEqual({ closeCode: 1000, reason: 'leaving' });
    expect(r.states.length).toBe(states);
  });
});
