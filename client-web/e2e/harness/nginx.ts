// Real nginx in front of several mino-server shards, the way players reach a
// cluster: the configuration that ships, deploy/nginx/mino.conf.template
// rendered by the shipped deploy/nginx/render.sh (as mino-testkit renders it
// for the Rust tests), with this test's ports, paths and a self-signed
// certificate (the shipped deploy/self-signed-cert.sh). One https origin on 127.0.0.1 serves the built client
// and proxies /ws to the shards (least_conn; a shard that refuses a connection
// or answers 502/503 is skipped). The configuration, certificate, logs, temp
// files and pid live in a fresh temp dir; nginx (master and workers, one
// process group) is stopped at the end. MINO_NGINX_BIN overrides
// /usr/sbin/nginx.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { exited, freePort, spawnChild, type Child } from './processes.js';
import { CLIENT_DIR } from './server.js';

/** deploy/: the shipped nginx template, its renderer and the certificate script. */
export const DEPLOY_DIR = resolve(CLIENT_DIR, '../deploy');

/** A running nginx. */
export interface RunningNginx {
  /** https://127.0.0.1:PORT/ (the certificate is for localhost and 127.0.0.1). */
  readonly https: string;
  /** The certificate it serves (PEM), for clients that check it. */
  readonly cert: string;
  readonly child: Child;
  /** The configuration it runs, for failure messages. */
  readonly config: string;
  /** What nginx printed and logged so far. */
  output(): string;
  stop(): Promise<void>;
}

/** What the test sets in the rendered configuration; everything else keeps render.sh's defaults. */
export interface NginxSettings {
  /** host:port of each shard. */
  readonly upstreams: readonly string[];
  /** Served at / (the built client). */
  readonly staticDir: string;
  /** The folder for the certificate, logs, temp files and pid. */
  readonly dir: string;
  readonly httpsPort: number;
  /** The plain-http listener (redirects to https). */
  readonly httpPort: number;
}

/**
 * Renders the shipped template with render.sh, given only PATH and these
 * settings (nothing else of the environment leaks in); returns the
 * configuration. Throws with render.sh's message when it refuses.
 */
export function renderConfig(s: NginxSettings): string {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    MINO_SHARDS: s.upstreams.join(' '),
    MINO_SERVER_NAME: 'localhost',
    MINO_HTTPS_LISTEN: `127.0.0.1:${s.httpsPort}`,
    MINO_HTTP_LISTEN: `127.0.0.1:${s.httpPort}`,
    MINO_TLS_CERT: join(s.dir, 'cert.pem'),
    MINO_TLS_KEY: join(s.dir, 'key.pem'),
    MINO_STATIC_ROOT: s.staticDir,
    MINO_NGINX_USER: userInfo().username,
    MINO_NGINX_WORKERS: '1',
    MINO_NGINX_CONNECTIONS: '1024',
    MINO_NGINX_NOFILE: '2048',
    MINO_NGINX_PID: join(s.dir, 'nginx.pid'),
    MINO_NGINX_ERROR_LOG: join(s.dir, 'logs/error.log'),
    MINO_NGINX_ACCESS_LOG: join(s.dir, 'logs/access.log'),
    MINO_NGINX_TEMP: join(s.dir, 'temp'),
  };
  return execFileSync('bash', [join(DEPLOY_DIR, 'nginx/render.sh')], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Makes cert.pem and key.pem in `dir` with the shipped deploy/self-signed-cert.sh, as mino-testkit does. */
export function selfSignedCert(dir: string): void {
  execFileSync('bash', [join(DEPLOY_DIR, 'self-signed-cert.sh'), dir, '2'], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** GETs `url` trusting only `ca` (PEM); resolves with the status and body, or null on any failure or after 2 s. */
function get(url: string, ca: string): Promise<{ status: number; body: string } | null> {
  return new Promise((done) => {
    const req = request(url, { ca, servername: 'localhost', timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => done({ status: res.statusCode ?? 0, body }));
      res.on('error', () => done(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(null));
    req.end();
  });
}

/** Starts nginx for `upstreams` and waits (at most `timeoutMs`) until it serves index.html over https. */
export async function startNginx(upstreams: readonly string[], staticDir: string, timeoutMs = 10_000): Promise<RunningNginx> {
  const bin = process.env.MINO_NGINX_BIN ?? '/usr/sbin/nginx';
  const dir = mkdtempSync(join(tmpdir(), 'mino-e2e-nginx-'));
  mkdirSync(join(dir, 'logs'));
  mkdirSync(join(dir, 'temp'));
  selfSignedCert(dir);
  const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  const errorLog = (): string => {
    try {
      return readFileSync(join(dir, 'logs/error.log'), 'utf8');
    } catch {
      return '';
    }
  };
  for (let attempt = 0; ; attempt++) {
    const settings = { upstreams, staticDir, dir, httpsPort: await freePort(), httpPort: await freePort() };
    const config = renderConfig(settings);
    const conf = join(dir, 'nginx.conf');
    writeFileSync(conf, config);
    const child = spawnChild('nginx', bin, ['-e', 'stderr', '-p', dir, '-c', conf, '-g', 'daemon off;'], true);
    const https = `https://127.0.0.1:${settings.httpsPort}/`;
    const output = (): string => `${child.output()}${errorLog()}`;
    const end = Date.now() + timeoutMs;
    let up = false;
    while (!exited(child) && Date.now() < end) {
      const res = await get(https, cert);
      up = res !== null && res.status === 200 && res.body.includes('<canvas');
      if (up) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (up) {
      const stop = async (): Promise<void> => {
        await child.stop('SIGTERM', 3000);
        rmSync(dir, { recursive: true, force: true });
      };
      return { https, cert, child, config, output, stop };
    }
    await child.stop('SIGKILL');
    // A port may have been taken between our probe and nginx's bind: try once more.
    if (attempt >= 1) {
      const log = output();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx did not serve ${https} within ${timeoutMs} ms:\n${log}\n${config}`);
    }
  }
}
