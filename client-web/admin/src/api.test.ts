import { describe, expect, it } from 'vitest';
import { AdminApi, ApiError, ShapeError, TOKEN_KEY, parseHistory, parsePlace, parseSearch } from './api.js';

/** A shard row as the server writes it (server/src/admin/place.rs). */
const ROW = {
  id: 2,
  here: false,
  players: 120,
  max_players: 5000,
  overloaded: false,
  tick_hz: 20,
  ticks_per_s: 19.9,
  lateness_p99_ms: 2.5,
  relay_lag_p99_ms: null,
  redis: 'up',
  state: 'draining',
  drain: { from: 300, left: 120 },
  version: '0.1.0',
  uptime_ms: 61_000,
  admin: '127.0.0.1:9102',
};

class MemoryStorage {
  private readonly m = new Map<string, string>();
  getItem(k: string): string | null {
    return this.m.get(k) ?? null;
  }
  setItem(k: string, v: string): void {
    this.m.set(k, v);
  }
  removeItem(k: string): void {
    this.m.delete(k);
  }
}

/** A fetch that answers `status` with `body` and records the requests. */
function fakeFetch(status: number, body: unknown, seen: { url: string; init: RequestInit | undefined }[]): typeof fetch {
  return (input, init) => {
    seen.push({ url: typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, init });
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return Promise.resolve(new Response(status === 204 ? null : text, { status }));
  };
}

describe('admin API answers', () => {
  it('read the place into typed rows', () => {
    const place = parsePlace({ place: 'main', served_by: 1, clustered: true, players: 120, shards: [ROW] });
    expect(place.shards[0]).toMatchObject({ id: 2, maxPlayers: 5000, relayLagP99Ms: null, drain: { from: 300, left: 120 }, state: 'draining' });
  });

  it('read a peer seen before this shard lost Redis as of unknown Redis', () => {
    const place = parsePlace({ place: 'main', served_by: 1, clustered: true, players: 120, shards: [{ ...ROW, redis: 'unknown' }] });
    expect(place.shards[0]?.redis).toBe('unknown');
  });

  it('read a shard whose id another process holds (the same --shard-id started twice)', () => {
    const place = parsePlace({ place: 'main', served_by: 1, clustered: true, players: 0, shards: [{ ...ROW, state: 'id_taken' }] });
    expect(place.shards[0]?.state).toBe('id_taken');
  });

  it('refuse a field of the wrong type or an unknown state', () => {
    expect(() => parsePlace({ place: 'main', served_by: 1, clustered: true, players: 1, shards: [{ ...ROW, players: '5' }] })).toThrow(ShapeError);
    expect(() => parsePlace({ place: 'main', served_by: 1, clustered: true, players: 1, shards: [{ ...ROW, state: 'odd' }] })).toThrow(/state/);
    expect(() => parsePlace({ place: 'main', served_by: 1, clustered: true, players: 1, shards: {} })).toThrow(/not an array/);
    expect(() => parsePlace(null)).toThrow(ShapeError);
  });

  it('read the history and a search', () => {
    const h = parseHistory({ interval_ms: 1000, samples: [{ at_ms: 5, shards: [{ id: 1, players: 3, lateness_p99_ms: 1.5 }] }] });
    expect(h.samples[0]?.shards[0]).toEqual({ id: 1, players: 3, latenessP99Ms: 1.5 });
    const s = parseSearch({ query: 'ada', truncated: false, partial: true, players: [{ id: 7, name: 'Ada', shard: 2, here: false, x: null, y: null }] });
    expect(s.players[0]).toEqual({ id: 7, name: 'Ada', shard: 2, here: false, x: null, y: null });
    expect(s.partial).toBe(true);
  });
});

describe('AdminApi', () => {
  it('sends the token it keeps and JSON bodies', async () => {
    const seen: { url: string; init: RequestInit | undefined }[] = [];
    const storage = new MemoryStorage();
    const api = new AdminApi('/admin/api/', storage, fakeFetch(202, { shard: 2, player: 7, via: 'redis' }, seen));
    api.token = 'alice-token-0123456789';
    expect(storage.getItem(TOKEN_KEY)).toBe('alice-token-0123456789');
    const answer = await api.kick(7, 'spam');
    expect(answer).toEqual({ shard: 2, player: 7, name: null, players: null, via: 'redis' });
    const req = seen[0];
    expect(req?.url).toBe('/admin/api/players/7/kick');
    expect(req?.init?.method).toBe('POST');
    expect(req?.init?.body).toBe(JSON.stringify({ reason: 'spam' }));
    const headers = req?.init?.headers as Record<string, string>;
    expect(headers.Authorization).toBe('Bearer alice-token-0123456789');
    expect(headers['Content-Type']).toBe('application/json');
    api.token = null;
    expect(storage.getItem(TOKEN_KEY)).toBeNull();
  });

  it('turns 401, server errors and no answer into ApiErrors', async () => {
    const seen: { url: string; init: RequestInit | undefined }[] = [];
    await expect(new AdminApi('/a/', new MemoryStorage(), fakeFetch(401, '', seen)).place()).rejects.toMatchObject({ status: 401, kind: 'unauthorized' });
    const conflict = new AdminApi('/a/', new MemoryStorage(), fakeFetch(409, { error: 'shard 2 is draining already', kind: 'conflict' }, seen));
    await expect(conflict.drain(2)).rejects.toMatchObject({ status: 409, kind: 'conflict', message: 'shard 2 is draining already' });
    // The shard id in the path is hex, as shards are shown (the API's 400 otherwise).
    await conflict.drain(0xb2).catch(() => undefined);
    expect(seen.at(-1)?.url).toBe('/a/shards/b2/drain');
    const down = new AdminApi('/a/', new MemoryStorage(), () => Promise.reject(new TypeError('Failed to fetch')));
    const e = await down.place().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).kind).toBe('network');
    const search = new AdminApi('/a/', new MemoryStorage(), fakeFetch(200, { query: 'x', truncated: false, partial: false, players: [] }, seen));
    await search.search('a b&c');
    expect(seen[seen.length - 1]?.url).toBe('/a/players?q=a+b%26c&limit=50');
  });
});
