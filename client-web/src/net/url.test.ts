import { describe, expect, it } from 'vitest';
import { socketUrl } from './url.js';

describe('socket url', () => {
  it('is /ws on the page origin, wss for https', () => {
    expect(socketUrl({ href: 'http://127.0.0.1:41234/' })).toBe('ws://127.0.0.1:41234/ws');
    expect(socketUrl({ href: 'https://play.example/some/page?x=1#y' })).toBe('wss://play.example/ws');
    expect(socketUrl({ href: 'http://[::1]:8080/index.html' })).toBe('ws://[::1]:8080/ws');
  });
});
