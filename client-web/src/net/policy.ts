// What to do when the socket closes: reconnect (how soon, with or without the
// resume ticket) or stop and say why. Pure: the close code, what the server
// said before closing, and the attempt count in; a decision out.

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
}

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
    }
  | {
      readonly kind: 'stop';
      /** Shown to the player, as text. */
      readonly reason: string;
      /** The player should pick another name. */
      readonly rename: boolean;
    };

/** Longest wait between reconnect attempts, ms. */
export const MAX_BACKOFF_MS = 10_000;
/** First backoff step after the jittered first retry, ms. */
export const BASE_BACKOFF_MS = 500;
/** The first retry after a drop waits a random time below this, ms. */
export const FIRST_RETRY_JITTER_MS = 500;

/**
 * Delay before reconnect attempt `attempt` (0-based), ms: the first is a
 * random 0..500 ms (so a whole shard's players do not return at once), then
 * 500 ms doubling up to 10 s, each scaled by a random 0.5..1.
 */
export function backoffMs(attempt: number, random: () => number): number {
  if (attempt <= 0) return random() * FIRST_RETRY_JITTER_MS;
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (attempt - 1));
  return ceiling * (0.5 + 0.5 * random());
}

/** Decides what follows a close; see [`NextStep`]. */
export function afterClose(info: CloseInfo, random: () => number): NextStep {
  // A Busy decides even if the close itself came out as a plain drop.
  const code = info.busy ? CloseCode.ServerBusy : (info.error?.code ?? info.code);
  const said = info.error?.message ? ` (${info.error.message})` : '';
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
    case CloseCode.ServerBusy: {
      const wait = info.busy?.retryAfterMs ?? backoffMs(Math.max(1, info.attempt), random);
      // Up to 20 % more, so refused players do not all come back in the same tick.
      return { kind: 'reconnect', delayMs: wait * (1 + 0.2 * random()), resume: true, busy: true };
    }
    case CloseCode.TicketInvalid:
    case CloseCode.TicketUsed:
    case CloseCode.TicketExpired:
      // The old player is gone: come back as a new one.
      return { kind: 'reconnect', delayMs: backoffMs(info.attempt, random), resume: false, busy: false };
    case CloseCode.Moved:
      return { kind: 'reconnect', delayMs: random() * 250, resume: true, busy: false };
    default:
      // A drop, a server going away, a ticket still live elsewhere, a server-side error:
      // come back and resume.
      return { kind: 'reconnect', delayMs: backoffMs(info.attempt, random), resume: true, busy: false };
  }
}
