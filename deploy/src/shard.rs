//! A real `mino-server` process (a shard) on 127.0.0.1 port 0, clustered
//! over a test's Redis, killed on drop.

use crate::https;
use crate::process::Process;
use crate::{workspace_root, WAIT};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// The server binary: `$MINO_SERVER_BIN`, else `target/debug/mino-server`.
///
/// Panics: the binary is missing (build it with `cargo build -p mino-server`).
pub fn server_bin() -> PathBuf {
    let path = std::env::var_os("MINO_SERVER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/debug/mino-server"));
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p mino-server` (or set MINO_SERVER_BIN)",
        path.display()
    );
    path
}

/// A running shard.
#[derive(Debug)]
pub struct Shard {
    process: Process,
    /// Kept open: the server's stdout (it printed its address there).
    _stdout: BufReader<ChildStdout>,
    /// The address it listens on (HTTP and websocket).
    pub addr: SocketAddr,
    /// Its shard id.
    pub id: u32,
}

impl Shard {
    /// Starts shard `id` listening on 127.0.0.1 port 0, clustered over
    /// `redis_url` when given, with `args` added. The lateness part of the
    /// busy rule is off: a debug build on a shared machine starts ticks late
    /// often enough to refuse joins (admission has its own tests).
    ///
    /// Panics: the process does not start or does not print its address.
    pub fn start(id: u32, redis_url: Option<&str>, args: &[&str]) -> Shard {
        Shard::start_on("127.0.0.1:0", id, redis_url, args)
    }

    /// Like [`Shard::start`], listening on `listen` (a restarted shard takes
    /// its old address, the one nginx's upstream names).
    ///
    /// Panics: as [`Shard::start`].
    pub fn start_on(listen: &str, id: u32, redis_url: Option<&str>, args: &[&str]) -> Shard {
        let mut cmd = Command::new(server_bin());
        cmd.args(["--listen", listen, "--shard-id", &id.to_string(), "--busy-lateness-ms", "0"]);
        if let Some(url) = redis_url {
            cmd.args(["--redis-url", url]);
        }
        cmd.args(args)
            .env("MINO_LOG", std::env::var("MINO_TEST_LOG").unwrap_or_else(|_| "warn".into()))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut process = Process::spawn("mino-server", &mut cmd);
        let stdout = process.child_mut().stdout.take().expect("piped stdout");
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read the listening line");
        let addr = line
            .trim()
            .split_once("listening on http://")
            .and_then(|(_, a)| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in mino-server's first line {line:?}"));
        Shard { process, _stdout: stdout, addr, id }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The process, to signal or kill it.
    pub fn process(&mut self) -> &mut Process {
        &mut self.process
    }

    /// GET `path` on the shard's own address (not through nginx).
    pub async fn get(&self, path: &str) -> https::Response {
        https::get_plain(self.addr, path).await
    }

    /// The value of the series `series` (exact name with labels, e.g.
    /// `mino_players`) in `/metrics`; 0 when absent.
    pub async fn metric(&self, series: &str) -> f64 {
        let body = self.get("/metrics").await.text();
        body.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|v| v.strip_prefix(' ')))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0)
    }

    /// Players this shard simulates now (`mino_players`).
    pub async fn players(&self) -> u32 {
        self.metric("mino_players").await as u32
    }

    /// Waits until `/readyz` answers 200 (clustered: Redis reached).
    ///
    /// Panics: not ready within [`WAIT`].
    pub async fn wait_ready(&self) {
        let end = Instant::now() + WAIT;
        while self.get("/readyz").await.status != 200 {
            assert!(Instant::now() < end, "shard {} not ready within {WAIT:?}", self.id);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
