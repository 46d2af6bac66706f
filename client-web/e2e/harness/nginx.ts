// Real nginx in front of several mino-server shards, the way players reach a
// cluster: one origin serving the built client and proxying /ws to the shards
// (least connections; a shard that refuses a connection is skipped for 2 s).
// Plain HTTP on a free 127.0.0.1 port; the config, temp files and pid live in
// a fresh temp dir. One process (master_process off), stopped at the end.
// NGINX_BIN overrides /usr/sbin/nginx.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, freePort, spawnChild, type Child } from './processes.js';

/** A running nginx. */
export interface RunningNginx {
  /** http://127.0.0.1:PORT/ */
  readonly http: string;
  readonly child: Child;
  /** The config it runs, for failure messages. */
  readonly config: string;
  stop(): Promise<void>;
}

/** The nginx.conf for `upstreams` (host:port of each shard) behind 127.0.0.1:`port`, serving `staticDir`. */
export function nginxConfig(dir: string, port: number, upstreams: readonly string[], staticDir: string): string {
  const servers = upstreams.map((a) => `    server ${a} max_fails=1 fail_timeout=2s;`).join('\n');
  return `master_process off;
worker_processes 1;
events { worker_connections 256; }
http {
  access_log off;
  types { text/html html; text/javascript js mjs; text/css css; application/json json map; }
  default_type application/octet-stream;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream mino {
    least_conn;
${servers}
  }
  server {
    listen 127.0.0.1:${port};
    location /ws {
      proxy_pass http://mino;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
      proxy_connect_timeout 2s;
      proxy_read_timeout 60s;
      proxy_next_upstream error timeout;
    }
    location / {
      root ${staticDir};
    }
  }
}
`;
}

/** Starts nginx for `upstreams` and waits (at most `timeoutMs`) until it serves index.html. */
export async function startNginx(upstreams: readonly string[], staticDir: string, timeoutMs = 10_000): Promise<RunningNginx> {
  const bin = process.env.NGINX_BIN ?? '/usr/sbin/nginx';
  const dir = mkdtempSync(join(tmpdir(), 'mino-e2e-nginx-'));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const config = nginxConfig(dir, port, upstreams, staticDir);
    writeFileSync(join(dir, 'nginx.conf'), config);
    const child = spawnChild('nginx', bin, ['-e', 'stderr', '-p', dir, '-c', join(dir, 'nginx.conf'), '-g', `daemon off; pid ${dir}/nginx.pid; error_log stderr;`]);
    const http = `http://127.0.0.1:${port}/`;
    const end = Date.now() + timeoutMs;
    let up = false;
    while (!exited(child) && Date.now() < end) {
      up = await fetch(http).then((r) => r.ok && r.text().then((t) => t.includes('<canvas')), () => false);
      if (up) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (up) {
      const stop = async (): Promise<void> => {
        await child.stop('SIGTERM', 2000);
        rmSync(dir, { recursive: true, force: true });
      };
      return { http, child, config, stop };
    }
    await child.stop('SIGKILL');
    // The port may have been taken between our probe and nginx's bind: try once more.
    if (attempt >= 1) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx did not serve ${http} within ${timeoutMs} ms:\n${child.output()}\n${config}`);
    }
  }
}
