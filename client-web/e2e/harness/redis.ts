// A throwaway redis-server for one test file: 127.0.0.1 on a free port, no
// persistence, stopped at the end. REDIS_SERVER overrides the binary.

import { Socket } from 'node:net';
import { exited, freePort, spawnChild, type Child } from './processes.js';

/** A running Redis. */
export interface RunningRedis {
  readonly port: number;
  /** redis://127.0.0.1:PORT */
  readonly url: string;
  readonly child: Child;
  stop(): Promise<void>;
}

/** Answers whether Redis on `port` replies +PONG to PING within `timeoutMs`. */
function ping(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    let got = '';
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.once('error', () => done(false));
    s.on('data', (c: Buffer) => {
      got += c.toString();
      if (got.includes('\r\n')) done(got.startsWith('+PONG'));
    });
    s.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
  });
}

/** Starts redis-server on a free loopback port and waits (at most `timeoutMs`) until it answers PING. */
export async function startRedis(timeoutMs = 10_000): Promise<RunningRedis> {
  const bin = process.env.REDIS_SERVER ?? 'redis-server';
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child = spawnChild('redis-server', bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    const end = Date.now() + timeoutMs;
    while (!exited(child) && Date.now() < end && !(await ping(port))) await new Promise((r) => setTimeout(r, 50));
    if (!exited(child) && (await ping(port))) {
      return { port, url: `redis://127.0.0.1:${port}`, child, stop: () => child.stop('SIGKILL') };
    }
    await child.stop('SIGKILL');
    // Another process may have taken the port between our probe and Redis's bind: try once more.
    if (attempt >= 1) throw new Error(`redis-server did not answer PING on ${port}:\n${child.output()}`);
  }
}
