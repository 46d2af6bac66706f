import { describe, expect, it } from 'vitest';
import { MAX_ACCESS_TOKEN_BYTES } from './protocol.js';
import { takeToken, type HistoryLike } from './token.js';

function history(): HistoryLike & { urls: string[] } {
  const urls: string[] = [];
  return { state: { keep: 1 }, urls, replaceState: (_data, _unused, url) => urls.push(String(url)) };
}

describe('access token from the fragment', () => {
  it('is read once and removed from the address bar, fragment and all', () => {
    const h = history();
    expect(takeToken({ href: 'https://game.example.com/play?x=1#token=eyJhbGc.eyJzdWI.sig' }, h)).toEqual({ kind: 'token', token: 'eyJhbGc.eyJzdWI.sig' });
    expect(h.urls).toEqual(['https://game.example.com/play?x=1']);
  });

  it('keeps the other fragment parameters', () => {
    const h = history();
    expect(takeToken({ href: 'http://127.0.0.1:8080/#lang=fr&token=abc' }, h)).toEqual({ kind: 'token', token: 'abc' });
    expect(h.urls).toEqual(['http://127.0.0.1:8080/#lang=fr']);
  });

  it('leaves a page without one alone', () => {
    const h = history();
    expect(takeToken({ href: 'http://127.0.0.1:8080/#lang=fr' }, h)).toEqual({ kind: 'none' });
    expect(takeToken({ href: 'http://127.0.0.1:8080/' }, h)).toEqual({ kind: 'none' });
    expect(h.urls).toEqual([]);
  });

  it('removes an empty or overlong one and does not send it', () => {
    const h = history();
    expect(takeToken({ href: 'http://h/#token=' }, h)).toEqual({ kind: 'none' });
    expect(takeToken({ href: `http://h/#token=${'a'.repeat(MAX_ACCESS_TOKEN_BYTES + 1)}` }, h)).toEqual({ kind: 'too-long' });
    expect(h.urls).toEqual(['http://h/', 'http://h/']);
  });
});
