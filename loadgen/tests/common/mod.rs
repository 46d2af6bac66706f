//! Test harness: the real `mino-server` binary on a loopback port (found at
//! `$MINO_SERVER_BIN` or `target/debug/mino-server`), and the real
//! `mino-loadgen` binary run to a JSON report.
#![allow(dead_code, missing_docs)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Bound on any wait for a process.
pub const WAIT: Duration = Duration::from_secs(60);

/// The server binary: `$MINO_SERVER_BIN`, else `../target/debug/mino-server`.
pub fn server_bin() -> PathBuf {
    let path = std::env::var_os("MINO_SERVER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/debug/mino-server"));
    assert!(
        path.exists(),
        "{} is missing: build it first with `cargo build -p mino-server` (or set MINO_SERVER_BIN)",
        path.display()
    );
    path
}

/// A running `mino-server`, killed on drop.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Server {
    /// Starts the server on 127.0.0.1 port 0 with `args`.
    pub fn start(args: &[&str]) -> Server {
        Server::start_at("127.0.0.1:0", args)
    }

    /// Starts the server listening on `listen` with `args`. The lateness part
    /// of the busy rule is off: these tests measure the loadgen, and a debug
    /// server on a shared 2-core machine starts ticks late often enough to
    /// refuse joins (admission has its own tests in the server crate).
    pub fn start_at(listen: &str, args: &[&str]) -> Server {
        let mut child = Command::new(server_bin())
            .args(["--listen", listen, "--busy-lateness-ms", "0"])
            .args(args)
            .env("MINO_LOG", "warn")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn mino-server");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("read the listening line");
        let addr = line
            .trim()
            .split_once("listening on http://")
            .and_then(|(_, a)| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        Server { child, addr }
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to exit, at most `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh temporary file path for this test.
pub fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mino-loadgen-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// What a loadgen run printed and wrote.
pub struct Run {
    pub json: serde_json::Value,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the loadgen binary with `args` plus `--json FILE`, bounded by [`WAIT`].
pub fn loadgen(args: &[&str]) -> Run {
    let json_path = temp_path(&format!("report-{}.json", rand_suffix()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_mino-loadgen"))
        .args(args)
        .arg("--json")
        .arg(&json_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mino-loadgen");
    let end = Instant::now() + WAIT;
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            panic!("mino-loadgen {args:?} did not finish in {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "mino-loadgen {args:?} failed: {stderr}");
    let text = std::fs::read_to_string(&json_path).expect("json report written");
    let json = serde_json::from_str(&text).expect("valid json");
    let _ = std::fs::remove_file(&json_path);
    Run { json, stdout, stderr }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// `v[key]` as f64, panicking with the report when absent.
pub fn num(v: &serde_json::Value, path: &str) -> f64 {
    let mut cur = v;
    for k in path.split('.') {
        cur = &cur[k];
    }
    cur.as_f64().unwrap_or_else(|| panic!("{path} missing or not a number in {v:#}"))
}
