//! A real `mino-server` process (a shard) on 127.0.0.1 port 0 or on a Unix
//! socket, killed on drop. The one place that starts the binary and reads the
//! lines it prints once bound: "mino-server listening on http://ADDR" (or
//! "on unix:PATH"), with `--admin-listen`, "mino-server admin on
//! http://ADDR", and with `--webtransport-listen`, "mino-server
//! webtransport on https://ADDR".

use crate::http::{self, Response};
use crate::metrics::Metrics;
use crate::process::{self, Process};
use crate::redis::Redis;
use crate::{log_filter, START_WAIT, WAIT};
use nix::sys::signal::Signal;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The server binary for tests that do not name one: `$MINO_SERVER_BIN`,
/// else `mino-server` in the cargo target folder of the running test
/// (`target/debug/` for `cargo test`, where `cargo build` puts it).
///
/// Panics: the binary is missing (build it with `cargo build -p mino-server`).
pub fn server_bin() -> PathBuf {
    let path = std::env::var_os("MINO_SERVER_BIN").map(PathBuf::from).unwrap_or_else(|| bin_dir().join("mino-server"));
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p mino-server` (or set MINO_SERVER_BIN)",
        path.display()
    );
    path
}

/// The folder cargo put the running program in, where the same build put
/// the workspace's binaries: the program's own folder, or the one above for
/// a test binary (in its `deps/` subfolder). That is `debug/` or `release/`
/// of the target folder cargo used, wherever `CARGO_TARGET_DIR` (or a cargo
/// config) put it: the rule for finding a binary built beside this one.
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().map(Path::to_owned).unwrap_or_default();
    match dir.file_name() {
        Some(name) if name == "deps" => dir.parent().map(Path::to_owned).unwrap_or(dir),
        _ => dir,
    }
}

/// What one line of the server's stdout announces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Announced {
    /// "mino-server listening on http://ADDR": players, HTTP and websocket.
    Listening(SocketAddr),
    /// "mino-server listening on unix:PATH": the same, on a Unix socket.
    ListeningUnix(PathBuf),
    /// "mino-server admin on http://ADDR": the admin listener.
    Admin(SocketAddr),
    /// "mino-server webtransport on https://ADDR": WebTransport's UDP address.
    WebTransport(SocketAddr),
}

impl Announced {
    /// Parses one stdout line; None for any other line.
    pub fn parse(line: &str) -> Option<Announced> {
        let line = line.trim();
        if let Some(addr) = line.strip_prefix("mino-server listening on http://") {
            return addr.parse().ok().map(Announced::Listening);
        }
        if let Some(path) = line.strip_prefix("mino-server listening on unix:") {
            return Some(Announced::ListeningUnix(PathBuf::from(path)));
        }
        if let Some(addr) = line.strip_prefix("mino-server webtransport on https://") {
            return addr.parse().ok().map(Announced::WebTransport);
        }
        line.strip_prefix("mino-server admin on http://")?.parse().ok().map(Announced::Admin)
    }
}

/// How to start a shard beyond its flags: where it listens, where its log
/// goes, its environment, and whether the kit turns the busy rule's
/// lateness part off. `Launch::default()` is what [`Shard::start`] does.
#[derive(Clone, Debug)]
pub struct Launch {
    /// `--listen`: `127.0.0.1:0` (the default), an address, or `unix:PATH`.
    pub listen: String,
    /// Its log (stderr) goes to this file at this filter (`MINO_LOG`, e.g.
    /// `info`); None: to the test's stderr at [`crate::log_filter`].
    pub log: Option<(PathBuf, String)>,
    /// Added to its environment.
    pub env: Vec<(String, String)>,
    /// Keep the server's own busy rule (its default lateness); false (the
    /// default) sets `MINO_BUSY_LATENESS_MS=0` (see [`Shard::start`]).
    pub busy_rule: bool,
    /// A program the binary runs under, with its arguments (e.g.
    /// `heaptrack -o FILE`); empty: the binary itself. The shard's pid is
    /// then the wrapper's (the server is among its children).
    pub wrapper: Vec<String>,
}

impl Default for Launch {
    fn default() -> Launch {
        Launch { listen: "127.0.0.1:0".into(), log: None, env: Vec::new(), busy_rule: false, wrapper: Vec::new() }
    }
}

/// A shard to start: its flags set one by one, typed where the tests set
/// them often ([`ShardBuilder::flag`] for the rest), then started with
/// [`ShardBuilder::start`] or [`ShardBuilder::ready`]. Made by
/// [`Shard::build`].
///
/// ```no_run
/// # async fn f(redis: &mino_testkit::Redis) {
/// use mino_testkit::Shard;
/// let shard = Shard::build(mino_testkit::server_bin()).redis(redis).id(1).world_size(10_000.0).ready().await;
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct ShardBuilder {
    bin: PathBuf,
    listen: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// Where its log (stderr) goes, and at which filter; `None`: the test's
    /// own stderr, at [`log_filter`].
    log: Option<(PathBuf, String)>,
    /// The bearer token its operator routes are asked with (see
    /// [`ShardBuilder::operator_token`]).
    operator_token: Option<String>,
}

impl ShardBuilder {
    /// Sets `--NAME VALUE` (e.g. `flag("ping-interval-ms", 200)`).
    pub fn flag(mut self, name: &str, value: impl ToString) -> ShardBuilder {
        self.args.push(format!("--{name}"));
        self.args.push(value.to_string());
        self
    }

    /// Adds `args` as they are (a flag without a value, or several at once).
    pub fn args(mut self, args: &[&str]) -> ShardBuilder {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// Clustered on `redis` (`--redis-url`).
    pub fn redis(self, redis: &Redis) -> ShardBuilder {
        self.flag("redis-url", redis.url())
    }

    /// Clustered on the Redis at `url` (`--redis-url`), which may not run yet.
    pub fn redis_url(self, url: &str) -> ShardBuilder {
        self.flag("redis-url", url)
    }

    /// Clustered on a Redis Cluster of these seed nodes, comma-separated
    /// (`--redis-cluster`).
    pub fn redis_cluster(self, seeds: &str) -> ShardBuilder {
        self.flag("redis-cluster", seeds)
    }

    /// Clustered on the primary that these sentinels (comma-separated) name
    /// `master` (`--redis-sentinel`, `--redis-master`).
    pub fn redis_sentinel(self, sentinels: &str, master: &str) -> ShardBuilder {
        self.flag("redis-sentinel", sentinels).flag("redis-master", master)
    }

    /// Its shard id (`--shard-id`).
    pub fn id(self, id: u32) -> ShardBuilder {
        self.flag("shard-id", id)
    }

    /// World side, world units (`--world-size`).
    pub fn world_size(self, units: f32) -> ShardBuilder {
        self.flag("world-size", units)
    }

    /// Walking speed, world units a second (`--speed`).
    pub fn speed(self, units_per_second: f32) -> ShardBuilder {
        self.flag("speed", units_per_second)
    }

    /// Area of interest: cells of this side, world units (`--cell-size`).
    pub fn cell_size(self, units: f32) -> ShardBuilder {
        self.flag("cell-size", units)
    }

    /// Area of interest: the view radius, world units (`--view-radius`).
    pub fn view_radius(self, units: f32) -> ShardBuilder {
        self.flag("view-radius", units)
    }

    /// The heartbeat's interval (`--heartbeat-ms`).
    pub fn heartbeat(self, every: Duration) -> ShardBuilder {
        self.flag("heartbeat-ms", every.as_millis())
    }

    /// The age after which a shard is dead to the others (`--shard-ttl-ms`).
    pub fn shard_ttl(self, ttl: Duration) -> ShardBuilder {
        self.flag("shard-ttl-ms", ttl.as_millis())
    }

    /// An admin listener on 127.0.0.1 port 0 (`--admin-listen`), its address
    /// in [`Shard::admin`].
    pub fn admin(self) -> ShardBuilder {
        self.flag("admin-listen", "127.0.0.1:0")
    }

    /// Listens on `listen` instead of 127.0.0.1 port 0 (a restarted shard
    /// takes its old address).
    pub fn listen(mut self, listen: &str) -> ShardBuilder {
        self.listen = listen.to_owned();
        self
    }

    /// Adds `key=value` to its environment.
    pub fn env(mut self, key: &str, value: &str) -> ShardBuilder {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Writes its log (stderr) to `log` at the filter `filter` (e.g. `info`),
    /// for a test that reads what it logs.
    pub fn log_to(mut self, log: &Path, filter: &str) -> ShardBuilder {
        self.log = Some((log.to_owned(), filter.to_owned()));
        self
    }

    /// Asks its operator routes (`/metrics`, `/readyz`, `/healthz`, served on
    /// its admin listener) with `token`, one of its `--admin-token-file`'s
    /// tokens, which guard `/metrics` (the probes need none; see
    /// [`Shard::with_operator_token`]).
    pub fn operator_token(mut self, token: &str) -> ShardBuilder {
        self.operator_token = Some(token.to_owned());
        self
    }

    /// Starts it.
    ///
    /// Panics: as [`Shard::start`], or the log file cannot be created.
    pub fn start(self) -> Shard {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let launch = Launch { listen: self.listen, log: self.log, env: self.env, ..Launch::default() };
        let mut shard = Shard::launch(&self.bin, &args, &launch);
        shard.operator_token = self.operator_token;
        shard
    }

    /// Starts it and waits until it is ready (clustered: Redis reached, the
    /// shard registered).
    ///
    /// Panics: as [`ShardBuilder::start`] and [`Shard::wait_ready`].
    pub async fn ready(self) -> Shard {
        let shard = self.start();
        shard.wait_ready().await;
        shard
    }
}

/// A running shard.
#[derive(Debug)]
pub struct Shard {
    process: Process,
    /// The address its HTTP endpoints answer on: where it listens (HTTP and
    /// websocket), or for a shard on a Unix socket ([`Shard::start_unix`])
    /// its admin listener. `/metrics`, `/readyz` and `/healthz` answer on
    /// [`Shard::operator_addr`].
    pub addr: SocketAddr,
    /// Its admin listener, when started with `--admin-listen`.
    pub admin: Option<SocketAddr>,
    /// The Unix socket players reach it on, for a shard started on one.
    pub socket: Option<PathBuf>,
    /// Its WebTransport address (UDP), when started with
    /// `--webtransport-listen`.
    pub webtransport: Option<SocketAddr>,
    /// The bearer token its operator routes need (an admin listener with
    /// `--admin-token-file`; see [`Shard::with_operator_token`]).
    operator_token: Option<String>,
    /// Its log file, for a shard started logging to one.
    log: Option<PathBuf>,
}

impl Shard {
    /// A shard of `bin` (e.g. `env!("CARGO_BIN_EXE_mino-server")`, or
    /// [`server_bin`]) to start on 127.0.0.1 port 0, no flag set yet; the
    /// environment as for [`Shard::start`].
    pub fn build(bin: impl AsRef<Path>) -> ShardBuilder {
        ShardBuilder {
            bin: bin.as_ref().to_owned(),
            listen: "127.0.0.1:0".into(),
            args: Vec::new(),
            env: Vec::new(),
            log: None,
            operator_token: None,
        }
    }

    /// Starts `bin` (e.g. `env!("CARGO_BIN_EXE_mino-server")`, or
    /// [`server_bin`]) listening on 127.0.0.1 port 0, with `args` added.
    ///
    /// The environment sets the log filter (`MINO_LOG`, see
    /// [`crate::log_filter`]) and turns the lateness part of the busy rule
    /// off (`MINO_BUSY_LATENESS_MS=0`; a `--busy-lateness-ms` in `args` wins):
    /// a debug build on a shared machine starts ticks late often enough to
    /// refuse joins, and admission has its own tests that turn it on.
    ///
    /// Panics: the process does not start or does not print its address
    /// (and its admin address, when `args` hold `--admin-listen`) within
    /// [`START_WAIT`].
    pub fn start(bin: impl AsRef<Path>, args: &[&str]) -> Shard {
        Shard::start_on(bin, "127.0.0.1:0", args)
    }

    /// Like [`Shard::start`], listening on `listen` (a restarted shard takes
    /// its old address, the one nginx's upstream or a bot names).
    ///
    /// Panics: as [`Shard::start`].
    pub fn start_on(bin: impl AsRef<Path>, listen: &str, args: &[&str]) -> Shard {
        Shard::launch(bin, args, &Launch { listen: listen.into(), ..Launch::default() })
    }

    /// Like [`Shard::start`], with `env` added to its environment (e.g.
    /// [`crate::clock::skewed`]: a wall clock off by some seconds).
    ///
    /// Panics: as [`Shard::start`].
    pub fn start_with_env(bin: impl AsRef<Path>, args: &[&str], env: &[(String, String)]) -> Shard {
        Shard::launch(bin, args, &Launch { env: env.to_vec(), ..Launch::default() })
    }

    /// Like [`Shard::start`], with its log (stderr) written to `log` at the
    /// filter `filter` (e.g. `trace`), for a test that reads what it logs.
    ///
    /// Panics: as [`Shard::start`], or the log file cannot be created.
    pub fn start_logging_to(bin: impl AsRef<Path>, args: &[&str], log: &Path, filter: &str) -> Shard {
        Shard::launch(bin, args, &Launch { log: Some((log.to_owned(), filter.into())), ..Launch::default() })
    }

    /// Starts `bin` listening on the Unix socket `path` (what nginx's upstream
    /// names), with an admin listener on 127.0.0.1 port 0 for its HTTP
    /// endpoints ([`Shard::addr`]), and `args` added.
    ///
    /// Panics: as [`Shard::start`].
    pub fn start_unix(bin: impl AsRef<Path>, path: &Path, args: &[&str]) -> Shard {
        Shard::launch(bin, args, &Launch { listen: format!("unix:{}", path.display()), ..Launch::default() })
    }

    /// Starts `bin` with `args` as `launch` says (a Unix socket in
    /// `launch.listen` adds an admin listener on 127.0.0.1 port 0 for its
    /// HTTP endpoints, [`Shard::addr`]).
    ///
    /// Panics: as [`Shard::start`], or the log file cannot be created.
    pub fn launch(bin: impl AsRef<Path>, args: &[&str], launch: &Launch) -> Shard {
        let bin = bin.as_ref();
        let mut all: Vec<&str> = Vec::new();
        if launch.listen.starts_with("unix:") {
            all.extend(["--admin-listen", "127.0.0.1:0"]);
        }
        all.extend_from_slice(args);
        let (stderr, filter) = match &launch.log {
            Some((path, filter)) => {
                let file =
                    std::fs::File::create(path).unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
                (Stdio::from(file), filter.clone())
            }
            None => (Stdio::inherit(), log_filter()),
        };
        let mut cmd = match launch.wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.args(["--listen", &launch.listen]).args(&all).env("MINO_LOG", filter);
        if !launch.busy_rule {
            cmd.env("MINO_BUSY_LATENESS_MS", "0");
        }
        cmd.envs(launch.env.iter().map(|(k, v)| (k, v))).stdout(Stdio::piped()).stderr(stderr);
        let mut shard = Shard::spawn(bin, cmd, all.iter().any(|a| a.starts_with("--admin-listen")));
        shard.log = launch.log.as_ref().map(|(path, _)| path.clone());
        shard
    }

    /// Spawns `cmd` and reads the addresses it announces.
    fn spawn(bin: &Path, mut cmd: Command, wants_admin: bool) -> Shard {
        let mut process = Process::spawn("mino-server", &mut cmd);
        let stdout = process.child_mut().stdout.take().expect("piped stdout");
        let lines = read_lines(stdout);
        let (mut addr, mut socket, mut admin, mut webtransport) = (None, None, None, None);
        let end = Instant::now() + START_WAIT;
        while (addr.is_none() && socket.is_none()) || (wants_admin && admin.is_none()) {
            let left = end.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => match Announced::parse(&line) {
                    Some(Announced::Listening(a)) => addr = Some(a),
                    Some(Announced::ListeningUnix(p)) => socket = Some(p),
                    Some(Announced::Admin(a)) => admin = Some(a),
                    Some(Announced::WebTransport(a)) => webtransport = Some(a),
                    None => {}
                },
                Err(_) => panic!(
                    "mino-server ({}) printed no {} address within {START_WAIT:?} (exit: {:?})",
                    bin.display(),
                    if addr.is_none() && socket.is_none() { "listening" } else { "admin" },
                    process.wait_exit(Duration::ZERO)
                ),
            }
        }
        let addr = addr.or(admin).expect("a listening or admin address");
        Shard { process, addr, admin, socket, webtransport, operator_token: None, log: None }
    }

    /// The game's websocket URL on the shard itself.
    ///
    /// Panics: the shard listens on a Unix socket (players reach it through
    /// nginx, or over [`Shard::socket`]).
    pub fn ws_url(&self) -> String {
        assert!(self.socket.is_none(), "shard on a unix socket: no ws:// URL");
        format!("ws://{}/ws", self.addr)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The process, to signal, stop or kill it.
    pub fn process(&mut self) -> &mut Process {
        &mut self.process
    }

    /// Sends `signal` (SIGTERM drains, SIGINT stops, SIGSTOP pauses...).
    ///
    /// Panics: the process is gone.
    pub fn signal(&self, signal: Signal) {
        assert!(self.process.signal(signal), "mino-server {} is not running ({signal})", self.addr);
    }

    /// Waits for the process to exit, at most `limit`; None if it still runs.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        self.process.wait_exit(limit)
    }

    /// Resident set size now, bytes.
    ///
    /// Panics: the process is gone.
    pub fn rss_bytes(&self) -> u64 {
        process::rss_bytes(self.pid()).expect("VmRSS of a running mino-server")
    }

    /// GET `path` on the shard's own address (not through nginx).
    pub async fn get(&self, path: &str) -> Response {
        http::get(self.addr, path).await
    }

    /// Where its operator routes (`/metrics`, `/readyz`, `/healthz`) answer:
    /// its admin listener when it has one (they are served only there then),
    /// else its own address.
    pub fn operator_addr(&self) -> SocketAddr {
        self.admin.unwrap_or(self.addr)
    }

    /// The shard whose operator routes are asked with `token` (one of its
    /// `--admin-token-file`'s tokens, which guard `/metrics`; the probes
    /// need none).
    pub fn with_operator_token(mut self, token: &str) -> Shard {
        self.operator_token = Some(token.to_owned());
        self
    }

    /// GET `path` on [`Shard::operator_addr`] (with the operator token, if
    /// given).
    pub async fn operator_get(&self, path: &str) -> Response {
        let bearer = self.operator_token.as_ref().map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = bearer.iter().map(|b| ("Authorization", b.as_str())).collect();
        http::send(self.operator_addr(), "GET", path, &headers, b"").await
    }

    /// A scrape of `/metrics` (on [`Shard::operator_addr`]).
    pub async fn metrics(&self) -> Metrics {
        Metrics::parse(&self.operator_get("/metrics").await.text())
    }

    /// The value of the series `series` (exact name with labels, e.g.
    /// `mino_players`) in `/metrics`; 0 when absent.
    pub async fn metric(&self, series: &str) -> f64 {
        self.metrics().await.value_or_zero(series)
    }

    /// Players this shard simulates now (`mino_players`).
    pub async fn players(&self) -> u32 {
        self.metric("mino_players").await as u32
    }

    /// Waits until `/readyz` answers 200 (clustered: Redis reached, shard
    /// registered).
    ///
    /// Panics: not ready within [`WAIT`].
    pub async fn wait_ready(&self) {
        let end = Instant::now() + WAIT;
        while self.operator_get("/readyz").await.status != 200 {
            assert!(Instant::now() < end, "shard {} not ready within {WAIT:?}", self.addr);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until its log holds `text` (a line it writes when something
    /// happened); false if it does not within [`WAIT`].
    ///
    /// Panics: the shard was not started logging to a file
    /// ([`ShardBuilder::log_to`], [`Shard::start_logging_to`]).
    pub async fn logged(&self, text: &str) -> bool {
        let log = self.log.as_deref().expect("a shard started logging to a file");
        crate::wait::file_holds(log, text).await
    }

    /// Polls `series` until it is at least `least`; its value then.
    ///
    /// Panics: not reached within [`WAIT`].
    pub async fn wait_metric_at_least(&self, series: &str, least: f64) -> f64 {
        let what = format!("{series} >= {least}");
        crate::wait::until(&what, WAIT, || async {
            let got = self.metric(series).await;
            (got >= least).then_some(got)
        })
        .await
    }

    /// Waits until the shard has run `ticks` more ticks (`mino_ticks_total`):
    /// time passing as the shard sees it, for a test that lets the shard
    /// work a while.
    ///
    /// Panics: not within [`WAIT`].
    pub async fn wait_ticks(&self, ticks: u32) {
        let now = self.metric("mino_ticks_total").await;
        self.wait_metric_at_least("mino_ticks_total", now + f64::from(ticks)).await;
    }

    /// Polls `series` until it equals `want`.
    ///
    /// Panics: not reached within [`WAIT`].
    pub async fn wait_metric(&self, series: &str, want: f64) {
        let end = Instant::now() + WAIT;
        loop {
            let got = self.metric(series).await;
            if got == want {
                return;
            }
            assert!(Instant::now() < end, "{series} = {got}, want {want}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The lines of the server's stdout, read on a thread of their own (so that
/// waiting for them is bounded) that keeps the pipe open and drained until
/// the process ends.
fn read_lines(stdout: ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let _ = tx.send(line);
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_lines_give_the_addresses() {
        let players = Announced::parse("mino-server listening on http://127.0.0.1:4321\n");
        assert_eq!(players, Some(Announced::Listening(SocketAddr::from(([127, 0, 0, 1], 4321)))));
        let admin = Announced::parse("mino-server admin on http://[::1]:9");
        assert_eq!(admin, Some(Announced::Admin("[::1]:9".parse().expect("addr"))));
        assert_eq!(Announced::parse("mino-server listening on http://nowhere"), None);
        let unix = Announced::parse("mino-server listening on unix:/run/mino/shard-1.sock");
        assert_eq!(unix, Some(Announced::ListeningUnix(PathBuf::from("/run/mino/shard-1.sock"))));
        assert_eq!(Announced::parse("something else"), None);
    }

    #[test]
    fn the_bin_folder_is_the_parent_of_deps() {
        let dir = bin_dir();
        assert!(dir.join("deps").is_dir() || dir.file_name().is_some(), "{}", dir.display());
        assert_ne!(dir.file_name().and_then(|n| n.to_str()), Some("deps"));
    }
}
