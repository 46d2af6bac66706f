// Starts the real mino-server binary on a free loopback port and stops it.
// The binary comes from MINO_SERVER_BIN (relative to client-web/; default
// debug/mino-server where cargo builds, see cargoBin); it serves the test
// build of the client (`npm run build:e2e` -> dist-e2e/, which has the
// window.__mino hook).

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** client-web/ */
export const CLIENT_DIR = resolve(here, '../..');
/** The test build of the client (`npm run build:e2e`). */
export const TEST_BUILD_DIR = resolve(CLIENT_DIR, 'dist-e2e');

/**
 * A binary of the workspace where cargo builds it with `profile`:
 * CARGO_TARGET_DIR (relative: from the repository's root, where the scripts
 * run cargo), else target/ (the rule of scripts/play.sh and the test kit).
 */
export function cargoBin(profile: 'debug' | 'release', name: string): string {
  return resolve(CLIENT_DIR, '..', process.env.CARGO_TARGET_DIR || 'target', profile, name);
}

/** The server binary the tests run. */
export function serverBin(): string {
  const given = process.env.MINO_SERVER_BIN;
  return given ? resolve(CLIENT_DIR, given) : cargoBin('debug', 'mino-server');
}

/** A running server. */
export interface RunningServer {
  /** e.g. 127.0.0.1:41234 */
  readonly addr: string;
  /** http://ADDR/ */
  readonly http: string;
  /** ws://ADDR/ws */
  readonly ws: string;
  /** The admin listener (e.g. 127.0.0.1:41235), when started with --admin-listen. */
  readonly admin: string | null;
  /**
   * http://ADDR/ where /metrics, /readyz and /healthz answer: the admin
   * listener when there is one (they are served only there then), else the
   * players' address.
   */
  readonly operator: string;
  readonly proc: ChildProcess;
  /** Everything it printed, for failure messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once (a crash). */
  kill(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of running) p.kill('SIGKILL');
});

/**
 * Starts `mino-server --listen LISTEN --static-dir dist-e2e ...extra` and waits
 * (at most `timeoutMs`) for its "listening on http://ADDR" line (and its
 * "admin on http://ADDR" line when `extra` has --admin-listen).
 */
export async function startServer(extra: string[] = [], listen = '127.0.0.1:0', timeoutMs = 20_000): Promise<RunningServer> {
  const bin = serverBin();
  if (!existsSync(bin)) throw new Error(`mino-server not found at ${bin}: build it (cargo build -p mino-server) or set MINO_SERVER_BIN`);
  // MINO_E2E_DIST serves another test build (e.g. an older client, to compare figures).
  const dist = process.env.MINO_E2E_DIST ?? TEST_BUILD_DIR;
  if (!existsSync(resolve(dist, 'index.html'))) throw new Error(`${dist} has no index.html: run npm run build:e2e first`);
  const proc = spawn(bin, ['--listen', listen, '--static-dir', dist, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // MINO_LOG is the log filter of every mino binary.
    env: { ...process.env, MINO_LOG: process.env.MINO_LOG ?? 'warn' },
  });
  running.add(proc);
  let log = '';
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  void exited.then(() => running.delete(proc));
  const wantsAdmin = extra.includes('--admin-listen');
  const [addr, admin] = await new Promise<[string, string | null]>((resolveAddr, reject) => {
    const timer = setTimeout(() => reject(new Error(`mino-server printed no address in ${timeoutMs} ms:\n${log}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      log += chunk.toString();
      const m = /listening on http:\/\/(\S+)/.exec(log);
      const a = /admin on http:\/\/(\S+)/.exec(log);
      if (m?.[1] && (!wantsAdmin || a?.[1])) {
        clearTimeout(timer);
        resolveAddr([m[1], a?.[1] ?? null]);
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', (c: Buffer) => (log += c.toString()));
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mino-server exited (${code}) before listening:\n${log}`));
    });
  });
  const stopWith = async (signal: NodeJS.Signals, graceMs: number): Promise<void> => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill(signal);
    const t = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(t);
  };
  return {
    addr,
    http: `http://${addr}/`,
    ws: `ws://${addr}/ws`,
    admin,
    operator: `http://${admin ?? addr}/`,
    proc,
    output: () => log,
    stop: (graceMs = 6000) => stopWith('SIGTERM', graceMs),
    kill: () => stopWith('SIGKILL', 1000),
  };
}

/** Fetches /metrics (on the operator address) and returns the value of gauge or counter `name` (NaN if absent). */
export async function metric(server: RunningServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.operator}metrics`)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m?.[1] ? Number(m[1]) : Number.NaN;
}

/**
 * Waits (at most `timeoutMs`) until the server's /readyz (on the operator
 * address) answers 200 (for a shard: registered in Redis); `token`: the bearer
 * token an admin listener with --admin-token-file asks for.
 */
export async function waitReady(server: RunningServer, timeoutMs = 10_000, token?: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  for (;;) {
    const status = await fetch(`${server.operator}readyz`, { headers }).then((r) => r.status, () => 0);
    if (status === 200) return;
    if (Date.now() > end) throw new Error(`${server.addr} not ready within ${timeoutMs} ms (last status ${status}):\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
