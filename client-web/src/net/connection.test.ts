// Reconnect, resume, busy and session-replaced behaviour of the connection,
// against a fake socket and clock, with real server frames from the fixture.
import { describe, expect, it } from 'vitest';
import fixture from '../../../schema/fixtures/server-frames.json';
import { decodeClientForTest } from '../testing/client-decode.js';
import { FakeSocket } from '../testing/fake-socket.js';
import { FakeTimers } from '../testing/fake-timers.js';
import { Connection, type ConnectionState } from './connection.js';
import { AUTH_CODES, MAX_BACKOFF_MS, afterClose, authMessage, backoffMs, explainedByPage, kickedMessage } from './policy.js';
import { encodeChat } from './protocol.js';
import { websocketDial } from './transport.js';
import { CLOSE_RULES } from '../generated/mino/close-rules.js';
import { Capability, CloseCode, ProtocolVersion } from '../generated/mino/wire.js';

function frame(name: string): Uint8Array {
  const f = fixture.frames.find((x) => x.name === name);
  if (!f) throw new Error(name);
  return Uint8Array.from(f.hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}

const WELCOME_TICKET = fixture.frames.find((f) => f.name === 'welcome')?.expect.resume_ticket_hex;
const MOVE_TICKET = fixture.frames.find((f) => f.name === 'move')?.expect.resume_ticket_hex;
const hex = (b: Uint8Array | null): string | null => (b ? Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('') : null);

function setup(random = 0.5, accessToken: string | null = null): { timers: FakeTimers; sockets: FakeSocket[]; states: ConnectionState[]; conn: Connection } {
  const timers = new FakeTimers();
  const sockets: FakeSocket[] = [];
  const states: ConnectionState[] = [];
  const conn = new Connection({
    name: 'Ada',
    accessToken,
    timers,
    random: () => random,
    dial: websocketDial('ws://127.0.0.1/ws', (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    }),
    handlers: { message: () => undefined, state: (s) => states.push(s) },
  });
  conn.start();
  return { timers, sockets, states, conn };
}

function last<T>(xs: T[]): T {
  const x = xs[xs.length - 1];
  if (x === undefined) throw new Error('empty');
  return x;
}

function welcomeOn(s: FakeSocket): void {
  s.open();
  s.deliver(frame('welcome'));
}

describe('connection', () => {
  it('says hello with the name, taking deltas (over WebTransport in datagrams), and only sends once welcomed', () => {
    const { sockets, conn, states } = setup();
    const s = last(sockets);
    expect(s.binaryType).toBe('arraybuffer');
    s.open();
    const hello = decodeClientForTest(last(s.sent));
    expect([hello.kind, hello.name, hello.version, hello.ticket, hello.capabilities]).toEqual(['hello', 'Ada', ProtocolVersion.Current, null, Capability.Deltas | Capability.DatagramDeltas]);
    expect(conn.send(encodeChat('early'))).toBe(false);
    s.deliver(frame('welcome'));
    expect(last(states)).toEqual({ kind: 'live' });
    expect(conn.send(encodeChat('hi'))).toBe(true);
  });

  it('reconnects after a drop with the resume ticket, within the first jitter', () => {
    const { sockets, states, timers } = setup(0.5);
    welcomeOn(last(sockets));
    last(sockets).drop(1006);
    expect(last(states)).toMatchObject({ kind: 'reconnecting', attempt: 1 });
    timers.advance(249);
    expect(sockets.length).toBe(1);
    timers.advance(1);
    expect(sockets.length).toBe(2);
    last(sockets).open();
    expect(hex(decodeClientForTest(last(last(sockets).sent)).ticket)).toBe(WELCOME_TICKET);
  });

  it('resyncs on asking: drops the live socket at once (no close handshake) and reconnects resuming the ticket', () => {
    const { sockets, states, timers, conn } = setup(0.5);
    welcomeOn(last(sockets));
    const old = last(sockets);
    conn.resync();
    expect(old.onmessage).toBeNull(); // nothing more is read from it
    expect(last(states)).toMatchObject({ kind: 'reconnecting', attempt: 1, why: 'dropped' });
    timers.advance(250);
    expect(sockets.length).toBe(2);
    last(sockets).open();
    expect(hex(decodeClientForTest(last(last(sockets).sent)).ticket)).toBe(WELCOME_TICKET);
  });

  it('backs off, doubling to a cap, and starts over after a welcome', () => {
    const { sockets, timers } = setup(1);
    welcomeOn(last(sockets));
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const before = sockets.length;
      const t0 = timers.t;
      last(sockets).drop(1006);
      while (sockets.length === before) timers.advance(1);
      waits.push(timers.t - t0);
    }
    // Capped at 2 s: a player is back within about 2 s of the server's return.
    expect(waits).toEqual([500, 500, 1000, 2000, 2000, 2000, 2000, 2000]);
    welcomeOn(last(sockets));
    const t0 = timers.t;
    last(sockets).drop(1001);
    while (sockets.length === 9) timers.advance(1);
    expect(timers.t - t0).toBe(500);
  });

  it('never reconnects after session replaced, and says why', () => {
    const { sockets, states, timers } = setup();
    welcomeOn(last(sockets));
    last(sockets).deliver(frame('error'));
    last(sockets).drop(4013);
    timers.advance(120_000);
    expect(sockets.length).toBe(1);
    const s = last(states);
    expect(s.kind).toBe('stopped');
    if (s.kind === 'stopped') expect(s.reason).toMatch(/another tab or window.*opened elsewhere/);
  });

  it('shows busy and retries after retry_after_ms', () => {
    const { sockets, states, timers } = setup(0);
    const s = last(sockets);
    s.open();
    s.deliver(frame('busy'));
    s.drop(4011);
    expect(last(states)).toEqual({ kind: 'busy', reason: 'ticks are late', inMs: 2500 });
    timers.advance(2499);
    expect(sockets.length).toBe(1);
    timers.advance(1);
    expect(sockets.length).toBe(2);
  });

  it('comes back as a new player when the ticket expired', () => {
    const { sockets, timers } = setup();
    welcomeOn(last(sockets));
    last(sockets).drop(4016);
    timers.advance(1000);
    last(sockets).open();
    expect(decodeClientForTest(last(last(sockets).sent)).ticket).toBeNull();
  });

  it('follows a Move with the new ticket', () => {
    const { sockets, timers } = setup();
    welcomeOn(last(sockets));
    last(sockets).deliver(frame('move'));
    last(sockets).drop(4018);
    timers.advance(250);
    last(sockets).open();
    expect(hex(decodeClientForTest(last(last(sockets).sent)).ticket)).toBe(MOVE_TICKET);
  });

  it('abandons a socket that goes silent and one that never says welcome', () => {
    const { sockets, timers } = setup(0);
    welcomeOn(last(sockets));
    timers.advance(9000);
    expect(sockets[0]?.closedByClient).toBe(1000);
    expect(sockets.length).toBe(2);
    last(sockets).open();
    timers.advance(10_000);
    expect(sockets.length).toBe(2);
    timers.advance(1_500);
    expect(sockets.length).toBe(3);
  });

  it('sends a websocket no silence Ping: a dead process resets its TCP, and only the 8 s silence applies', () => {
    const { sockets, timers } = setup(0);
    const s = last(sockets);
    welcomeOn(s);
    for (let i = 0; i < 20; i++) {
      timers.advance(50);
      s.deliver(frame('view'));
    }
    const sent = s.sent.length;
    timers.advance(3000);
    expect(s.sent.length, 'nothing sent in 3 s of quiet').toBe(sent);
    expect(s.closedByClient).toBeNull();
  });

  it('ignores frames that fail verification and text frames', () => {
    const { sockets, conn } = setup();
    welcomeOn(last(sockets));
    last(sockets).deliver(new Uint8Array([1, 2, 3]));
    last(sockets).onmessage?.({ data: 'text' } as MessageEvent);
    expect(conn.decodeErrors).toBe(2);
    expect(conn.live).toBe(true);
  });

  it('after a restart (1012) comes back soon, then tries every 2 s at most while the server is away', () => {
    const { sockets, states, timers } = setup(1);
    welcomeOn(last(sockets));
    last(sockets).drop(CloseCode.ServiceRestart);
    expect(last(states)).toMatchObject({ kind: 'reconnecting', why: 'restart' });
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const before = sockets.length;
      const t0 = timers.t;
      while (sockets.length === before) timers.advance(1);
      waits.push(timers.t - t0);
      last(sockets).drop(1006); // refused: the server is not back yet
      expect(last(states)).toMatchObject({ kind: 'reconnecting', why: 'restart' });
    }
    expect(waits[0]).toBeLessThanOrEqual(500);
    expect(Math.max(...waits)).toBeLessThanOrEqual(2000);
  });

  it('rejoins at once as a new player, with the same name, when the server does not know the ticket', () => {
    const { sockets, states, timers, conn } = setup(0.99);
    welcomeOn(last(sockets));
    last(sockets).drop(CloseCode.ServiceRestart);
    timers.advance(500);
    last(sockets).open();
    expect(hex(decodeClientForTest(last(last(sockets).sent)).ticket)).toBe(WELCOME_TICKET);
    last(sockets).drop(CloseCode.TicketInvalid);
    expect(last(states)).toMatchObject({ kind: 'reconnecting', why: 'session-lost' });
    expect(conn.lastReconnect).toBe('session-lost');
    timers.advance(100);
    expect(sockets.length).toBe(3);
    last(sockets).open();
    const hello = decodeClientForTest(last(last(sockets).sent));
    expect([hello.name, hello.ticket]).toEqual(['Ada', null]);
  });

  it('sends the access token in every Hello, reconnects included', () => {
    const { sockets, timers } = setup(0, 'eyJ.token.sig');
    welcomeOn(last(sockets));
    expect(decodeClientForTest(last(last(sockets).sent)).token).toBe('eyJ.token.sig');
    last(sockets).drop(1006);
    timers.advance(1);
    last(sockets).open();
    const hello = decodeClientForTest(last(last(sockets).sent));
    expect([hello.token, hex(hello.ticket)]).toEqual(['eyJ.token.sig', WELCOME_TICKET]);
  });

  it('stops on a refused token with a plain message and never sends it again', () => {
    const { sockets, states, timers, conn } = setup(0, 'eyJ.expired.sig');
    last(sockets).open();
    last(sockets).drop(CloseCode.AuthExpired);
    timers.advance(60_000);
    expect(sockets.length).toBe(1);
    expect(last(states)).toEqual({ kind: 'stopped', reason: 'Sign-in expired — sign in again.', rename: false });
    expect(conn.signedIn).toBe(true);
  });

  it('a token refused on a reconnect resumes with the ticket alone, at once', () => {
    const { sockets, timers, conn } = setup(0, 'eyJ.token.sig');
    welcomeOn(last(sockets));
    last(sockets).drop(1006);
    timers.advance(1);
    last(sockets).open();
    last(sockets).drop(CloseCode.AuthExpired);
    expect(conn.signedIn).toBe(false);
    timers.advance(0);
    expect(sockets.length).toBe(3);
    last(sockets).open();
    const hello = decodeClientForTest(last(last(sockets).sent));
    expect([hello.token, hex(hello.ticket)]).toEqual([null, WELCOME_TICKET]);
  });

  it('stop() closes for good', () => {
    const { sockets, conn, timers } = setup();
    welcomeOn(last(sockets));
    conn.stop();
    timers.advance(60_000);
    expect(sockets.length).toBe(1);
  });
});

describe('backoff', () => {
  it('jitters the first retry and caps later ones', () => {
    expect(backoffMs(0, () => 0.999)).toBeLessThan(500);
    for (let a = 1; a < 30; a++) {
      expect(backoffMs(a, () => 1)).toBeLessThanOrEqual(MAX_BACKOFF_MS);
      expect(backoffMs(a, () => 0)).toBeGreaterThanOrEqual(250);
    }
  });
});

describe('close policy', () => {
  it('has a plain message for every sign-in refusal (4030-4036) and stops on each without a ticket', () => {
    expect(AUTH_CODES).toEqual([4030, 4031, 4032, 4033, 4034, 4035, 4036]);
    for (const code of AUTH_CODES) {
      const next = afterClose({ code, attempt: 0, sentToken: true, hasTicket: false }, () => 0.5);
      expect(next).toEqual({ kind: 'stop', reason: authMessage(code), rename: false });
      expect(authMessage(code)).toMatch(/sign/i);
      expect(explainedByPage(code)).toBe(true);
    }
  });

  it("explains tickets and restarts in the page's own words, and echoes other server errors", () => {
    for (const code of [CloseCode.TicketInvalid, CloseCode.ServiceRestart, CloseCode.SessionReplaced, CloseCode.Moved]) expect(explainedByPage(code)).toBe(true);
    expect(explainedByPage(CloseCode.InputFlood)).toBe(false);
  });
});

/** Every close code of the schema (the generated enum's numeric values). */
const ALL_CODES: readonly number[] = Object.values(CloseCode).filter((v): v is number => typeof v === 'number');

describe("the schema's reconnect rules (CloseCode's `reconnect` attribute, generated)", () => {
  it('marks at least the codes the schema names: session replaced, protocol version, kicked and sign-in refusals', () => {
    for (const code of [CloseCode.SessionReplaced, CloseCode.ProtocolVersion, CloseCode.Kicked]) expect(CLOSE_RULES.get(code)).toBe('never');
    for (const code of AUTH_CODES) expect(CLOSE_RULES.get(code)).toBe('without_token');
  });

  it('stops for good after every "never" code, in its own words, whatever came before it', () => {
    const never = [...CLOSE_RULES].filter(([, rule]) => rule === 'never').map(([code]) => code);
    expect(never.length).toBeGreaterThanOrEqual(3);
    for (const code of never) {
      for (const info of [
        { code, attempt: 0 },
        { code, attempt: 3, hasTicket: true, sentToken: true },
        { code: 1006, attempt: 0, hasTicket: true, error: { code, message: 'why' } },
      ]) {
        const next = afterClose(info, () => 0.5);
        expect(next.kind, `code ${code}`).toBe('stop');
        if (next.kind === 'stop') expect(next.reason, `code ${code} has its own words`).not.toMatch(/The server ended this game \(code/);
      }
      expect(explainedByPage(code)).toBe(true);
    }
  });

  it('never sends the token again after every "without_token" code: stops without a ticket, resumes without the token with one', () => {
    const refusals = [...CLOSE_RULES].filter(([, rule]) => rule === 'without_token').map(([code]) => code);
    expect(refusals.length).toBeGreaterThanOrEqual(7);
    for (const code of refusals) {
      expect(afterClose({ code, attempt: 0, sentToken: true, hasTicket: false }, () => 0.5)).toEqual({ kind: 'stop', reason: authMessage(code), rename: false });
      expect(AUTH_CODES, `code ${code} has its own words`).toContain(code);
      const next = afterClose({ code, attempt: 0, sentToken: true, hasTicket: true }, () => 0.5);
      expect(next).toMatchObject({ kind: 'reconnect', resume: true, dropToken: true });
      expect(explainedByPage(code)).toBe(true);
    }
  });

  it('retries every code the schema does not mark', () => {
    const unmarked = ALL_CODES.filter((code) => !CLOSE_RULES.has(code));
    expect(unmarked).toContain(CloseCode.ServiceRestart);
    for (const code of unmarked) expect(afterClose({ code, attempt: 0, hasTicket: true }, () => 0.5).kind, `code ${code}`).toBe('reconnect');
  });

  it('a connection closed with any "never" code opens no socket again, and says why', () => {
    for (const [code, rule] of CLOSE_RULES) {
      if (rule !== 'never') continue;
      const { sockets, states, timers } = setup();
      welcomeOn(last(sockets));
      last(sockets).drop(code);
      timers.advance(120_000);
      expect(sockets.length, `code ${code}`).toBe(1);
      expect(last(states).kind).toBe('stopped');
    }
  });
});

describe('a kick', () => {
  it("stops with the operator's reason and never reconnects", () => {
    const { sockets, states, timers } = setup();
    welcomeOn(last(sockets));
    const s = last(sockets);
    // The server's Error before the close (close.rs: "removed by an operator: WHY").
    s.error(CloseCode.Kicked, 'removed by an operator: spamming the chat');
    s.drop(CloseCode.Kicked);
    timers.advance(120_000);
    expect(sockets.length).toBe(1);
    expect(last(states)).toEqual({ kind: 'stopped', reason: 'An operator removed you from the game: “spamming the chat”. Reload the page to join again.', rename: false });
  });

  it('says so without a reason when none came', () => {
    expect(kickedMessage(undefined)).toBe('An operator removed you from the game. Reload the page to join again.');
    expect(kickedMessage('removed by an operator: ')).toBe('An operator removed you from the game. Reload the page to join again.');
    expect(kickedMessage('go away')).toContain('“go away”');
  });
});
