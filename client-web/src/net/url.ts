// Where the websocket lives: `/ws` on the page's own origin, `wss:` for an
// `https:` page and `ws:` otherwise (so TLS at nginx carries through).

/** The websocket URL for a page at `location` (anything with an href). */
export function socketUrl(location: { readonly href: string }): string {
  const page = new URL(location.href);
  const url = new URL('/ws', page.origin);
  url.protocol = page.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}
