//! A whole deployment on loopback: one Redis, N shards clustered over it
//! (on loopback TCP, or on Unix sockets as nginx on the same machine reaches
//! them), and nginx with a fresh self-signed certificate in front of them,
//! serving a small browser-client folder. Stopped on drop, nginx first.

use crate::cert::Cert;
use crate::nginx::{Nginx, NginxSettings, Upstream};
use crate::redis::Redis;
use crate::shard::{server_bin, Shard};
use crate::workdir::WorkDir;
use mino_loadgen::{Target, Tls, TlsOptions};
use std::path::PathBuf;
use std::time::Duration;

/// The page the tests' static folder serves at `/`.
pub const INDEX_HTML: &str =
    "<!doctype html>\n<title>mino</title>\n<script type=\"module\" src=\"./assets/app-3f9a1c.js\"></script>\n";

/// A hashed asset of the tests' static folder, and its content.
pub const ASSET: (&str, &str) = ("assets/app-3f9a1c.js", "export const mino = 'deploy test';\n");

/// How to start a cluster.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// The server binary.
    pub bin: PathBuf,
    /// Number of shards (ids 1..=shards).
    pub shards: u32,
    /// Extra `mino-server` flags for every shard.
    pub server_args: Vec<String>,
    /// nginx's websocket timeouts (`MINO_PROXY_TIMEOUT`), e.g. "20s".
    pub proxy_timeout: String,
    /// nginx's worker_shutdown_timeout, e.g. "60s".
    pub shutdown_timeout: String,
    /// Shards listen on Unix sockets in the cluster's folder
    /// (`shard-N.sock`), nginx's upstream names them; their HTTP endpoints
    /// are on an admin listener (see [`Shard::start_unix`]).
    pub unix_sockets: bool,
}

impl Default for ClusterOptions {
    /// [`server_bin`], two shards, default flags, render.sh's timeouts.
    ///
    /// Panics: the server binary is missing.
    fn default() -> Self {
        ClusterOptions {
            bin: server_bin(),
            shards: 2,
            server_args: Vec::new(),
            proxy_timeout: "20s".into(),
            shutdown_timeout: "60s".into(),
            unix_sockets: false,
        }
    }
}

/// Redis, the shards and nginx. Fields drop in order: nginx, shards, Redis,
/// then the folder.
#[derive(Debug)]
pub struct Cluster {
    /// nginx in front of the shards.
    pub nginx: Nginx,
    /// The shards, index i has id i + 1.
    pub shards: Vec<Shard>,
    /// The shared Redis.
    pub redis: Redis,
    /// The certificate nginx serves (its file is the clients' CA file).
    pub cert: Cert,
    /// The test's folder (configuration, logs, static files).
    pub dir: WorkDir,
    /// How it was started (for restarts).
    options: ClusterOptions,
}

impl Cluster {
    /// Starts Redis, the shards (waiting until each is ready), and nginx.
    ///
    /// Panics: any part fails to start.
    pub async fn start(options: ClusterOptions) -> Cluster {
        let dir = WorkDir::new("cluster");
        let redis = Redis::start();
        let shards: Vec<Shard> = (1..=options.shards)
            .map(|id| {
                let listen = match options.unix_sockets {
                    true => Upstream::Unix(dir.join(format!("shard-{id}.sock"))),
                    false => Upstream::Tcp(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
                };
                start_shard(&options, id, &redis, &listen)
            })
            .collect();
        for s in &shards {
            s.wait_ready().await;
        }
        let cert = Cert::self_signed(dir.path());
        let static_root = dir.mkdir("client");
        dir.write("client/index.html", INDEX_HTML);
        dir.write(format!("client/{}", ASSET.0), ASSET.1);
        let mut settings = NginxSettings::new(&shards, static_root, cert.clone());
        settings.proxy_timeout = options.proxy_timeout.clone();
        settings.shutdown_timeout = options.shutdown_timeout.clone();
        let nginx = Nginx::start(&settings, &dir);
        Cluster { nginx, shards, redis, cert, dir, options }
    }

    /// Starts shard `index` (id `index + 1`) again on its address or socket,
    /// the one nginx's upstream names (as systemd's Restart=on-failure
    /// would), and waits until it is ready. The old process, if still
    /// running, is killed.
    ///
    /// Panics: it does not start or get ready.
    pub async fn restart_shard(&mut self, index: usize) {
        let listen = Upstream::from(&self.shards[index]);
        self.shards[index].process().kill9();
        let id = u32::try_from(index + 1).expect("a shard index");
        self.shards[index] = start_shard(&self.options, id, &self.redis, &listen);
        self.shards[index].wait_ready().await;
    }

    /// TLS settings for clients: trust the test's certificate.
    pub fn tls(&self) -> Tls {
        Tls::new(&TlsOptions { ca_files: vec![self.cert.cert.clone()], insecure: false }).expect("client TLS settings")
    }

    /// The websocket target through nginx (wss, the test's certificate trusted).
    pub async fn target(&self) -> Target {
        Target::resolve_with(&self.nginx.wss_url(), Some(&self.tls())).await.expect("target")
    }

    /// Waits until the shards simulate `total` players between them, at most
    /// `limit`; returns the players per shard.
    ///
    /// Panics: the total is not reached in time.
    pub async fn wait_players(&self, total: u32, limit: Duration) -> Vec<u32> {
        let end = tokio::time::Instant::now() + limit;
        loop {
            let per_shard = self.players().await;
            if per_shard.iter().sum::<u32>() == total {
                return per_shard;
            }
            assert!(tokio::time::Instant::now() < end, "players per shard {per_shard:?}, want {total} in all");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Players per shard now (`mino_players` of each; 0 for a shard whose
    /// process is gone).
    pub async fn players(&self) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.shards.len());
        for s in &self.shards {
            v.push(if crate::process::alive(s.pid()) { s.players().await } else { 0 });
        }
        v
    }
}

/// Starts shard `id` of `options` on `listen`, clustered over `redis`.
fn start_shard(options: &ClusterOptions, id: u32, redis: &Redis, listen: &Upstream) -> Shard {
    let (id, url) = (id.to_string(), redis.url());
    let mut args = vec!["--shard-id", id.as_str(), "--redis-url", url.as_str()];
    args.extend(options.server_args.iter().map(String::as_str));
    match listen {
        Upstream::Tcp(addr) => Shard::start_on(&options.bin, &addr.to_string(), &args),
        Upstream::Unix(path) => Shard::start_unix(&options.bin, path, &args),
    }
}
