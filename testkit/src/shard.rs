//! A real `mino-server` process (a shard) on 127.0.0.1 port 0 or on a Unix
//! socket, killed on drop. The one place that starts the binary and reads the
//! lines it prints once bound: "mino-server listening on http://ADDR" (or
//! "on unix:PATH") and, with `--admin-listen`, "mino-server admin on
//! http://ADDR".

use crate::http::{self, Response};
use crate::metrics::Metrics;
use crate::process::{self, Process};
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
    let path =
        std::env::var_os("MINO_SERVER_BIN").map(PathBuf::from).unwrap_or_else(|| target_dir().join("mino-server"));
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p mino-server` (or set MINO_SERVER_BIN)",
        path.display()
    );
    path
}

/// The folder cargo puts binaries in for the running test: a test binary
/// lives in its `deps/` subfolder.
fn target_dir() -> PathBuf {
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
        line.strip_prefix("mino-server admin on http://")?.parse().ok().map(Announced::Admin)
    }
}

/// A running shard.
#[derive(Debug)]
pub struct Shard {
    process: Process,
    /// The address its HTTP endpoints answer on: where it listens (HTTP and
    /// websocket), or for a shard on a Unix socket ([`Shard::start_unix`])
    /// its admin listener, where `/metrics`, `/readyz` and `/healthz` are
    /// served too.
    pub addr: SocketAddr,
    /// Its admin listener, when started with `--admin-listen`.
    pub admin: Option<SocketAddr>,
    /// The Unix socket players reach it on, for a shard started on one.
    pub socket: Option<PathBuf>,
}

impl Shard {
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
        Shard::spawn(bin.as_ref(), listen, args, &log_filter(), Stdio::inherit(), &[])
    }

    /// Like [`Shard::start`], with `env` added to its environment (e.g.
    /// [`crate::clock::skewed`]: a wall clock off by some seconds).
    ///
    /// Panics: as [`Shard::start`].
    pub fn start_with_env(bin: impl AsRef<Path>, args: &[&str], env: &[(String, String)]) -> Shard {
        Shard::spawn(bin.as_ref(), "127.0.0.1:0", args, &log_filter(), Stdio::inherit(), env)
    }

    /// Like [`Shard::start`], with its log (stderr) written to `log` at the
    /// filter `filter` (e.g. `trace`), for a test that reads what it logs.
    ///
    /// Panics: as [`Shard::start`], or the log file cannot be created.
    pub fn start_logging_to(bin: impl AsRef<Path>, args: &[&str], log: &Path, filter: &str) -> Shard {
        let file = std::fs::File::create(log).unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
        Shard::spawn(bin.as_ref(), "127.0.0.1:0", args, filter, Stdio::from(file), &[])
    }

    /// Starts `bin` listening on the Unix socket `path` (what nginx's upstream
    /// names), with an admin listener on 127.0.0.1 port 0 for its HTTP
    /// endpoints ([`Shard::addr`]), and `args` added.
    ///
    /// Panics: as [`Shard::start`].
    pub fn start_unix(bin: impl AsRef<Path>, path: &Path, args: &[&str]) -> Shard {
        let listen = format!("unix:{}", path.display());
        let mut all = vec!["--admin-listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        Shard::spawn(bin.as_ref(), &listen, &all, &log_filter(), Stdio::inherit(), &[])
    }

    fn spawn(bin: &Path, listen: &str, args: &[&str], filter: &str, stderr: Stdio, env: &[(String, String)]) -> Shard {
        let mut cmd = Command::new(bin);
        cmd.args(["--listen", listen])
            .args(args)
            .env("MINO_BUSY_LATENESS_MS", "0")
            .env("MINO_LOG", filter)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut process = Process::spawn("mino-server", &mut cmd);
        let stdout = process.child_mut().stdout.take().expect("piped stdout");
        let lines = read_lines(stdout);
        let wants_admin = args.iter().any(|a| a.starts_with("--admin-listen"));
        let (mut addr, mut socket, mut admin) = (None, None, None);
        let end = Instant::now() + START_WAIT;
        while (addr.is_none() && socket.is_none()) || (wants_admin && admin.is_none()) {
            let left = end.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => match Announced::parse(&line) {
                    Some(Announced::Listening(a)) => addr = Some(a),
                    Some(Announced::ListeningUnix(p)) => socket = Some(p),
                    Some(Announced::Admin(a)) => admin = Some(a),
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
        Shard { process, addr, admin, socket }
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

    /// A scrape of `/metrics`.
    pub async fn metrics(&self) -> Metrics {
        Metrics::parse(&self.get("/metrics").await.text())
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
        while self.get("/readyz").await.status != 200 {
            assert!(Instant::now() < end, "shard {} not ready within {WAIT:?}", self.addr);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
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
    fn the_target_folder_is_the_parent_of_deps() {
        let dir = target_dir();
        assert!(dir.join("deps").is_dir() || dir.file_name().is_some(), "{}", dir.display());
        assert_ne!(dir.file_name().and_then(|n| n.to_str()), Some("deps"));
    }
}
