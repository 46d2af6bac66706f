// The access token a sign-in page hands the game in the URL's fragment
// (`https://game.example.com/#token=eyJ…`; a fragment never reaches a server
// or its logs): read once at load, removed from the address bar at once
// (history.replaceState, so it is in no bookmark, shared link or history
// entry), and kept in memory only: never written to localStorage or
// sessionStorage, where the remembered name lives.

import { MAX_ACCESS_TOKEN_BYTES } from './protocol.js';

/** The fragment parameter that carries the token. */
export const TOKEN_PARAM = 'token';

/** The part of History the page uses (a fake one in tests). */
export interface HistoryLike {
  readonly state: unknown;
  replaceState(data: unknown, unused: string, url?: string | URL | null): void;
}

/** What the fragment held. */
export type TakenToken =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  /** A token longer than MAX_ACCESS_TOKEN_BYTES: not sent (the server would refuse it). */
  | { readonly kind: 'too-long' };

/**
 * Takes the `token` parameter out of the fragment of `location` (other
 * fragment parameters stay; an emptied fragment goes, '#' included) and
 * replaces the address with `history`. Call once, at load.
 */
export function takeToken(location: { readonly href: string }, history: HistoryLike): TakenToken {
  const url = new URL(location.href);
  const params = new URLSearchParams(url.hash.replace(/^#/, ''));
  const raw = params.get(TOKEN_PARAM);
  if (raw === null) return { kind: 'none' };
  params.delete(TOKEN_PARAM);
  const rest = params.toString();
  url.hash = rest ? `#${rest}` : '';
  history.replaceState(history.state, '', url.href);
  const token = raw.trim();
  if (!token) return { kind: 'none' };
  if (new TextEncoder().encode(token).length > MAX_ACCESS_TOKEN_BYTES) return { kind: 'too-long' };
  return { kind: 'token', token };
}
