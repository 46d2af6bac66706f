// What to do when the socket closes: reconnect (how soon, with or without the
// resume ticket, with or without the access token) or stop and say why. Pure:
// the close code, what the server said before closing, the attempt count and
// what the Hello carried in; a decision out.
//
// The schema marks the codes a client must not simply retry (the `reconnect`
// attribute of CloseCode, generated into close-rules.ts): after a "never"
// code the page stops and says why in its own words; after a
// "without_token" code it never sends that token again. A marked code the
// page has no words for yet still stops (or drops the token), with a plain
// message; every other code is retried.

import { CLOSE_RULES } from '../generated/mino/close-rules.js';
import { CloseCode } from '../generated/mino/wire.js';

/** Why the connection ended, as far as the client saw it. */
export interface CloseInfo {
  /** The websocket close code (1006 when the connection just dropped). */
  readonly code: number;
  /** A Busy received on this socket, if any. */
  readonly busy?: { readonly reason: string; readonly retryAfterMs: number } | undefined;
  /** An Error received on this socket, if any. */
  readonly error?: { readonly code: number; readonly message: string } | undefined;
  /** Reconnect attempts since the last Welcome (0 for the first). */
  readonly attempt: number;
  /** The refused Hello carried an access token. */
  readonly sentToken?: boolean;
  /** A resume ticket is held (from a Welcome or a Move). */
  readonly hasTicket?: boolean;
}

/**
 * Why the page reconnects, for what it tells the player: a dropped
 * connection, a server restarting (1012), a move to another shard, a busy
 * server, or a session the server no longer knows (after a restart, an
 * expired or used ticket), which comes back as a new player.
 */
export type ReconnectReason = 'dropped' | 'restart' | 'moved' | 'busy' | 'session-lost';

/** The decision after a close. */
export type NextStep =
  | {
      readonly kind: 'reconnect';
      /** Wait this long first, ms. */
      readonly delayMs: number;
      /** Present the resume ticket (false: join as a new player). */
      readonly resume: boolean;
      /** Show "server busy" rather than "reconnecting". */
      readonly busy: boolean;
      readonly why: ReconnectReason;
      /** The access token was refused: send no token any more (the ticket alone resumes an account's session). */
      readonly dropToken?: boolean;
    }
  | {
      readonly kind: 'stop';
      /** Shown to the player, as text. */
      readonly reason: string;
      /** The player should pick another name. */
      readonly rename: boolean;
    };

/**
 * Longest wait between reconnect attempts while the server is away, ms: a
 * player is back within about 2 s of the server's return.
 */
export const MAX_BACKOFF_MS = 2_000;
/** First backoff step after the jittered first retry, ms. */
export const BASE_BACKOFF_MS = 500;
/** The first retry after a drop waits a random time below this, ms. */
export const FIRST_RETRY_JITTER_MS = 500;
/** A session the server does not know any more is rejoined within this (a random share of it), ms. */
export const REJOIN_JITTER_MS = 100;

/**
 * Delay before reconnect attempt `attempt` (0-based), ms: the first is a
 * random 0..500 ms (so a whole shard's players do not return at once), then
 * 500 ms doubling up to 2 s, each scaled by a random 0.5..1.
 */
export function backoffMs(attempt: number, random: () => number): number {
  if (attempt <= 0) return random() * FIRST_RETRY_JITTER_MS;
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (attempt - 1));
  return ceiling * (0.5 + 0.5 * random());
}

/** What the player is told when the server refused the access token, by close code (4030-4036). */
const AUTH_REFUSALS: ReadonlyMap<number, string> = new Map([
  [CloseCode.AuthRequired, 'This game needs you to sign in first — sign in, then open the game again.'],
  [CloseCode.AuthExpired, 'Sign-in expired — sign in again.'],
  [CloseCode.AuthNotYetValid, "Sign-in not valid yet — check this device's clock, then sign in again."],
  [CloseCode.AuthBadSignature, 'Sign-in not recognised — sign in again.'],
  [CloseCode.AuthWrongIssuer, "Sign-in from another service — sign in through this game's own page."],
  [CloseCode.AuthWrongAudience, "Sign-in meant for another game — sign in through this game's own page."],
  [CloseCode.AuthMalformed, 'Sign-in damaged on the way — sign in again.'],
]);

/** A refused access token whose code the page has no words for (a newer server's). */
const AUTH_REFUSED = 'Sign-in refused — sign in again.';

/** The close codes of a refused access token, in order. */
export const AUTH_CODES: readonly number[] = [...AUTH_REFUSALS.keys()];

/** Whether `code` is a refusal of the access token (the schema's "without_token" codes, 4030-4039). */
export function isAuthRefusal(code: number): boolean {
  return CLOSE_RULES.get(code) === 'without_token';
}

/** The plain message for an access-token refusal `code`, or undefined for another code. */
export function authMessage(code: number): string | undefined {
  return AUTH_REFUSALS.get(code) ?? (isAuthRefusal(code) ? AUTH_REFUSED : undefined);
}

/** The start of the Error text of a kick, before the operator's reason (server/src/close.rs, `Kicked`). */
const KICKED_PREFIX = /^removed by an operator:\s*/;

/** What the page says when an operator removed the player: the operator's reason, quoted, if one came. */
export function kickedMessage(errorText: string | undefined): string {
  const why = (errorText ?? '').replace(KICKED_PREFIX, '').trim();
  const said = why ? `: “${why}”` : '';
  return `An operator removed you from the game${said}. Reload the page to join again.`;
}

/** Close codes the page explains in its own words, so the server's Error text is not echoed into the chat. */
const EXPLAINED: ReadonlySet<number> = new Set([
  CloseCode.GoingAway,
  CloseCode.ServiceRestart,
  CloseCode.ProtocolVersion,
  CloseCode.NameInvalid,
  CloseCode.ServerBusy,
  CloseCode.SessionReplaced,
  CloseCode.TicketInvalid,
  CloseCode.TicketUsed,
  CloseCode.TicketExpired,
  CloseCode.TicketLive,
  CloseCode.Moved,
  CloseCode.Kicked,
  ...AUTH_REFUSALS.keys(),
]);

/** Whether the page says in its own words what an Error of `code` means (every code the schema says not to retry among them). */
export function explainedByPage(code: number): boolean {
  return EXPLAINED.has(code) || CLOSE_RULES.has(code);
}

/** Decides what follows a close; see [`NextStep`]. */
export function afterClose(info: CloseInfo, random: () => number): NextStep {
  // A Busy decides even if the close itself came out as a plain drop.
  const code = info.busy ? CloseCode.ServerBusy : (info.error?.code ?? info.code);
  const said = info.error?.message ? ` (${info.error.message})` : '';
  const refused = authMessage(code);
  if (refused !== undefined) {
    // Never the same token again; with a ticket, the account's session resumes without one.
    if (info.sentToken && info.hasTicket) return { kind: 'reconnect', delayMs: 0, resume: true, busy: false, why: 'dropped', dropToken: true };
    return { kind: 'stop', reason: refused, rename: false };
  }
  switch (code as CloseCode) {
    case CloseCode.SessionReplaced:
      return {
        kind: 'stop',
        reason: `This player was opened in another tab or window, so this page stopped${said}. Reload to play here.`,
        rename: false,
      };
    case CloseCode.ProtocolVersion:
      return { kind: 'stop', reason: `This page is older than the server${said}. Reload it.`, rename: false };
    case CloseCode.NameInvalid:
      return { kind: 'stop', reason: `The server refused that name${said}. Pick another one.`, rename: true };
    case CloseCode.Kicked:
      return { kind: 'stop', reason: kickedMessage(info.error?.message), rename: false };
    case CloseCode.ServerBusy: {
      const wait = info.busy?.retryAfterMs ?? backoffMs(Math.max(1, info.attempt), random);
      // Up to 20 % more, so refused players do not all come back in the same tick.
      return { kind: 'reconnect', delayMs: wait * (1 + 0.2 * random()), resume: true, busy: true, why: 'busy' };
    }
    case CloseCode.TicketInvalid:
    case CloseCode.TicketUsed:
    case CloseCode.TicketExpired:
      // The old player is gone (a restarted server does not know it): come back at once as a new one.
      return { kind: 'reconnect', delayMs: random() * REJOIN_JITTER_MS, resume: false, busy: false, why: 'session-lost' };
    case CloseCode.Moved:
      return { kind: 'reconnect', delayMs: random() * 250, resume: true, busy: false, why: 'moved' };
    case CloseCode.ServiceRestart:
      // The server restarts: it will be away a moment; retry soon, then every 2 s at most.
      return { kind: 'reconnect', delayMs: backoffMs(info.attempt, random), resume: true, busy: false, why: 'restart' };
    default:
      // A code the schema says not to retry that the page has no words for: stop all the same.
      if (CLOSE_RULES.get(code) === 'never') return { kind: 'stop', reason: `The server ended this game (code ${code})${said}. Reload the page to play again.`, rename: false };
      // A drop, a server going away, a ticket still live elsewhere, a server-side error:
      // come back and resume.
      return { kind: 'reconnect', delayMs: backoffMs(info.attempt, random), resume: true, busy: false, why: 'dropped' };
  }
}
