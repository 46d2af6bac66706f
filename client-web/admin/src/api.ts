// The admin API of the shard serving this page (server/src/admin/api.rs):
// typed shapes, checked when they arrive (a field of the wrong type is an
// error, never a NaN on the page), and the requests, with the bearer token
// when the listener asks for one.

/** A shard's link to Redis. */
export type RedisState = 'up' | 'fenced' | 'down' | 'standalone' | 'unknown';
/** Whether a shard takes players. */
export type ShardState = 'ready' | 'draining' | 'stopping' | 'redis_down' | 'id_taken';

/** One live shard of the place (`GET /admin/api/place`). */
export interface ShardRow {
  readonly id: number;
  /** The shard serving this page. */
  readonly here: boolean;
  readonly players: number;
  readonly maxPlayers: number;
  readonly overloaded: boolean;
  /** Configured tick rate, Hz. */
  readonly tickHz: number;
  /** Ticks run a second over the last 10 s. */
  readonly ticksPerS: number;
  /** Tick lateness p99 over the last 10 s, ms. */
  readonly latenessP99Ms: number;
  /** Relayed frames' age p99 over the last 10 s, ms; null when nothing was relayed. */
  readonly relayLagP99Ms: number | null;
  readonly redis: RedisState;
  readonly state: ShardState;
  /** A drain under way: players when it began, players left. */
  readonly drain: { readonly from: number; readonly left: number } | null;
  readonly version: string;
  /** Since the process started, ms. */
  readonly uptimeMs: number;
  /** Its admin listener, if any. */
  readonly admin: string | null;
}

/** `GET /admin/api/place`. */
export interface Place {
  readonly place: string;
  readonly servedBy: number;
  readonly clustered: boolean;
  readonly players: number;
  readonly shards: readonly ShardRow[];
}

/** One shard in one sample of the history. */
export interface SampleShard {
  readonly id: number;
  readonly players: number;
  readonly latenessP99Ms: number;
}

/** `GET /admin/api/history`: a sample a second, oldest first. */
export interface History {
  readonly intervalMs: number;
  readonly samples: readonly { readonly atMs: number; readonly shards: readonly SampleShard[] }[];
}

/** One player found (`GET /admin/api/players`). */
export interface FoundPlayer {
  readonly id: number;
  readonly name: string;
  readonly shard: number;
  /** On the shard serving this page. */
  readonly here: boolean;
  /** World units; null when its shard's last snapshot does not list it yet. */
  readonly x: number | null;
  readonly y: number | null;
}

/** `GET /admin/api/players`. */
export interface SearchResult {
  readonly query: string;
  readonly players: readonly FoundPlayer[];
  /** More matched than were answered. */
  readonly truncated: boolean;
  /** Redis was out of reach: only the serving shard was searched. */
  readonly partial: boolean;
}

/** What became of an order (a drain or a kick). */
export interface OrderAnswer {
  readonly shard: number;
  readonly player: number | null;
  readonly name: string | null;
  readonly players: number | null;
  /** `here`: the serving shard carried it out; `redis`: sent to the shard it concerns. */
  readonly via: 'here' | 'redis';
}

/** A JSON answer that does not have the expected shape. */
export class ShapeError extends Error {}

/** Why a request failed. */
export class ApiError extends Error {
  constructor(
    /** The HTTP status (0: no answer). */
    readonly status: number,
    /** The server's `kind` (`not_found`, `conflict`...), or `network`/`unauthorized`. */
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;

function object(v: unknown, what: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ShapeError(`${what}: not an object`);
  return v as Json;
}

function num(o: Json, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ShapeError(`${what}.${key}: not a number`);
  return v;
}

function numOrNull(o: Json, key: string, what: string): number | null {
  return o[key] === null || o[key] === undefined ? null : num(o, key, what);
}

function str(o: Json, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new ShapeError(`${what}.${key}: not a string`);
  return v;
}

function bool(o: Json, key: string, what: string): boolean {
  const v = o[key];
  if (typeof v !== 'boolean') throw new ShapeError(`${what}.${key}: not a boolean`);
  return v;
}

function oneOf<T extends string>(o: Json, key: string, allowed: readonly T[], what: string): T {
  const v = str(o, key, what);
  if (!(allowed as readonly string[]).includes(v)) throw new ShapeError(`${what}.${key}: ${v} is not one of ${allowed.join(', ')}`);
  return v as T;
}

function array(o: Json, key: string, what: string): unknown[] {
  const v = o[key];
  if (!Array.isArray(v)) throw new ShapeError(`${what}.${key}: not an array`);
  return v;
}

const REDIS_STATES: readonly RedisState[] = ['up', 'fenced', 'down', 'standalone', 'unknown'];
const SHARD_STATES: readonly ShardState[] = ['ready', 'draining', 'stopping', 'redis_down', 'id_taken'];

/** Checks one shard row. */
export function parseShardRow(v: unknown): ShardRow {
  const o = object(v, 'shard');
  const w = `shard ${String(o.id)}`;
  const drain = o.drain === null || o.drain === undefined ? null : object(o.drain, `${w}.drain`);
  return {
    id: num(o, 'id', w),
    here: bool(o, 'here', w),
    players: num(o, 'players', w),
    maxPlayers: num(o, 'max_players', w),
    overloaded: bool(o, 'overloaded', w),
    tickHz: num(o, 'tick_hz', w),
    ticksPerS: num(o, 'ticks_per_s', w),
    latenessP99Ms: num(o, 'lateness_p99_ms', w),
    relayLagP99Ms: numOrNull(o, 'relay_lag_p99_ms', w),
    redis: oneOf(o, 'redis', REDIS_STATES, w),
    state: oneOf(o, 'state', SHARD_STATES, w),
    drain: drain ? { from: num(drain, 'from', `${w}.drain`), left: num(drain, 'left', `${w}.drain`) } : null,
    version: str(o, 'version', w),
    uptimeMs: num(o, 'uptime_ms', w),
    admin: o.admin === null || o.admin === undefined ? null : str(o, 'admin', w),
  };
}

/** Checks `GET /admin/api/place`'s answer. */
export function parsePlace(v: unknown): Place {
  const o = object(v, 'place');
  return {
    place: str(o, 'place', 'place'),
    servedBy: num(o, 'served_by', 'place'),
    clustered: bool(o, 'clustered', 'place'),
    players: num(o, 'players', 'place'),
    shards: array(o, 'shards', 'place').map(parseShardRow),
  };
}

/** Checks `GET /admin/api/history`'s answer. */
export function parseHistory(v: unknown): History {
  const o = object(v, 'history');
  return {
    intervalMs: num(o, 'interval_ms', 'history'),
    samples: array(o, 'samples', 'history').map((s) => {
      const sample = object(s, 'sample');
      return {
        atMs: num(sample, 'at_ms', 'sample'),
        shards: array(sample, 'shards', 'sample').map((x) => {
          const shard = object(x, 'sample shard');
          return {
            id: num(shard, 'id', 'sample shard'),
            players: num(shard, 'players', 'sample shard'),
            latenessP99Ms: num(shard, 'lateness_p99_ms', 'sample shard'),
          };
        }),
      };
    }),
  };
}

/** Checks `GET /admin/api/players`'s answer. */
export function parseSearch(v: unknown): SearchResult {
  const o = object(v, 'search');
  return {
    query: str(o, 'query', 'search'),
    truncated: bool(o, 'truncated', 'search'),
    partial: bool(o, 'partial', 'search'),
    players: array(o, 'players', 'search').map((p) => {
      const x = object(p, 'player');
      return {
        id: num(x, 'id', 'player'),
        name: str(x, 'name', 'player'),
        shard: num(x, 'shard', 'player'),
        here: bool(x, 'here', 'player'),
        x: numOrNull(x, 'x', 'player'),
        y: numOrNull(x, 'y', 'player'),
      };
    }),
  };
}

/** Checks an order's answer. */
export function parseOrderAnswer(v: unknown): OrderAnswer {
  const o = object(v, 'answer');
  return {
    shard: num(o, 'shard', 'answer'),
    player: numOrNull(o, 'player', 'answer'),
    name: o.name === undefined || o.name === null ? null : str(o, 'name', 'answer'),
    players: numOrNull(o, 'players', 'answer'),
    via: oneOf(o, 'via', ['here', 'redis'] as const, 'answer'),
  };
}

/** Where the token is kept for the tab's life (never in localStorage). */
export const TOKEN_KEY = 'mino-admin-token';

/** The API of the listener serving this page. */
export class AdminApi {
  constructor(
    /** The API's root, e.g. `/admin/api/`. */
    private readonly base: string,
    /** The session storage (the token). */
    private readonly storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>,
    private readonly fetcher: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  /** The token sent with each request, if any. */
  get token(): string | null {
    return this.storage.getItem(TOKEN_KEY);
  }

  set token(value: string | null) {
    if (value === null) this.storage.removeItem(TOKEN_KEY);
    else this.storage.setItem(TOKEN_KEY, value);
  }

  place(): Promise<Place> {
    return this.request('GET', 'place').then(parsePlace);
  }

  history(): Promise<History> {
    return this.request('GET', 'history').then(parseHistory);
  }

  search(query: string, limit = 50): Promise<SearchResult> {
    const q = new URLSearchParams({ q: query, limit: String(limit) });
    return this.request('GET', `players?${q.toString()}`).then(parseSearch);
  }

  drain(shard: number): Promise<OrderAnswer> {
    return this.request('POST', `shards/${shard.toString(16)}/drain`).then(parseOrderAnswer);
  }

  kick(player: number, reason: string): Promise<OrderAnswer> {
    return this.request('POST', `players/${player}/kick`, { reason }).then(parseOrderAnswer);
  }

  /** One request; its JSON answer. Throws [`ApiError`] (401: `unauthorized`). */
  private async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    const token = this.token;
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetcher(this.base + path, {
        method,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        cache: 'no-store',
      });
    } catch (e) {
      throw new ApiError(0, 'network', `no answer from the shard (${e instanceof Error ? e.message : String(e)})`);
    }
    if (response.status === 401) throw new ApiError(401, 'unauthorized', 'a token is needed');
    const text = await response.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      throw new ApiError(response.status, 'not_json', `${response.status}: ${text.slice(0, 200)}`);
    }
    if (!response.ok) {
      const o = typeof json === 'object' && json !== null ? (json as Json) : {};
      const message = typeof o.error === 'string' ? o.error : `HTTP ${response.status}`;
      throw new ApiError(response.status, typeof o.kind === 'string' ? o.kind : 'error', message);
    }
    return json;
  }
}
