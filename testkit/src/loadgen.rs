//! The `mino-loadgen` binary run to its end, as an operator runs it: its
//! JSON report (`--json FILE`) read back, its output kept; or run over
//! agents: a [`Coordinator`] (`--agents N`) and its [`Agent`]s, each a
//! process of its own on loopback.

use crate::process::Process;
use crate::shard::Shard;
use crate::workdir::WorkDir;
use crate::{log_filter, START_WAIT};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Bound on one loadgen run.
pub const RUN_WAIT: Duration = Duration::from_secs(60);

/// What a loadgen run printed and wrote.
#[derive(Debug)]
pub struct LoadgenRun {
    /// The JSON report.
    pub json: serde_json::Value,
    /// Its stdout (progress and summary).
    pub stdout: String,
    /// Its stderr (logs).
    pub stderr: String,
    /// Its exit code, the run's outcome (`mino_loadgen::outcome`; None:
    /// ended by a signal).
    pub code: Option<i32>,
}

/// Runs `bin` (e.g. `env!("CARGO_BIN_EXE_mino-loadgen")`) with `args` plus
/// `--json FILE`, with the kit's log filter (`MINO_LOG`).
///
/// Panics: it does not finish within [`RUN_WAIT`], fails, or writes no valid
/// JSON report.
pub fn run(bin: impl AsRef<Path>, args: &[&str]) -> LoadgenRun {
    run_to_end(bin.as_ref(), args, Exit::Success)
}

/// Runs `bin` as [`run`] does, for a run that must fail (exit status not 0)
/// and still write its report: e.g. one in which no bot was welcomed.
///
/// Panics: it does not finish within [`RUN_WAIT`], succeeds, or writes no
/// valid JSON report.
pub fn run_failing(bin: impl AsRef<Path>, args: &[&str]) -> LoadgenRun {
    run_to_end(bin.as_ref(), args, Exit::Failure)
}

/// Runs `bin` as [`run_failing`] does, and pauses `shard` (SIGSTOP) once
/// its first player is welcomed: a run whose bots were welcomed, then hear
/// nothing more, as when a shard's tick or its datagrams stop. The shard
/// stays paused (it is killed when dropped).
///
/// Panics: as [`run_failing`]; no player is welcomed within the kit's wait.
pub async fn run_failing_with_shard_paused(bin: impl AsRef<Path>, shard: &Shard, args: &[&str]) -> LoadgenRun {
    let run = spawn_failing(bin, args);
    shard.wait_metric("mino_players", 1.0).await;
    shard.signal(nix::sys::signal::Signal::SIGSTOP);
    run.await.unwrap_or_else(|e| panic!("mino-loadgen {args:?}: {e}"))
}

/// Runs `bin` as [`run_failing`] does, in a blocking task, while the test
/// goes on (to stop, kill or kick what the bots play on); its run when
/// awaited.
///
/// Panics (when awaited, as a join error): as [`run_failing`].
pub fn spawn_failing(bin: impl AsRef<Path>, args: &[&str]) -> tokio::task::JoinHandle<LoadgenRun> {
    let bin = bin.as_ref().to_owned();
    let owned: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = owned.iter().map(String::as_str).collect();
        run_failing(&bin, &args)
    })
}

/// The exit a run must end with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exit {
    Success,
    Failure,
}

fn run_to_end(bin: &Path, args: &[&str], exit: Exit) -> LoadgenRun {
    let dir = WorkDir::new("loadgen");
    let json_path = dir.join("report.json");
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .arg("--json")
        .arg(&json_path)
        .env("MINO_LOG", log_filter())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut process = Process::spawn("mino-loadgen", &mut cmd);
    let out =
        process.output(RUN_WAIT).unwrap_or_else(|| panic!("mino-loadgen {args:?} did not finish in {RUN_WAIT:?}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    match exit {
        Exit::Success => assert!(out.status.success(), "mino-loadgen {args:?} failed: {stderr}"),
        Exit::Failure => assert!(!out.status.success(), "mino-loadgen {args:?} succeeded: {stderr}"),
    }
    let text = std::fs::read_to_string(&json_path).expect("json report written");
    let json = serde_json::from_str(&text).expect("valid json");
    LoadgenRun { json, stdout, stderr, code: out.status.code() }
}

/// The line a coordinator prints once it listens, before its address.
pub const COORDINATOR_LINE: &str = "coordinator listening on ";

/// A `mino-loadgen ... --agents N` process: it listens on a free loopback
/// port and waits for its agents.
pub struct Coordinator {
    process: Process,
    dir: WorkDir,
    json_path: PathBuf,
    url: String,
    stdout: Option<std::thread::JoinHandle<String>>,
    stderr: Arc<Mutex<String>>,
    args: Vec<String>,
}

impl Coordinator {
    /// Starts `bin` with `args` (which must include `--agents N`) plus
    /// `--listen 127.0.0.1:0 --json FILE`, and waits for its listening line.
    ///
    /// Panics: no listening line within [`START_WAIT`].
    pub fn start(bin: impl AsRef<Path>, args: &[&str]) -> Coordinator {
        let dir = WorkDir::new("coordinator");
        let json_path = dir.join("report.json");
        let mut cmd = Command::new(bin.as_ref());
        cmd.args(args)
            .args(["--listen", "127.0.0.1:0", "--json"])
            .arg(&json_path)
            .env("MINO_LOG", log_filter())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut process = Process::spawn("mino-loadgen coordinator", &mut cmd);
        let stdout = process.child_mut().stdout.take().expect("piped stdout");
        let stdout = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = BufReader::new(stdout).read_to_string(&mut text);
            text
        });
        let stderr_pipe = process.child_mut().stderr.take().expect("piped stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { return };
                if let Some(rest) = line.split_once(COORDINATOR_LINE).map(|(_, r)| r) {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or_default().to_owned());
                }
                let mut all = kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                all.push_str(&line);
                all.push('\n');
            }
        });
        let url = rx.recv_timeout(START_WAIT).unwrap_or_else(|_| {
            panic!("mino-loadgen {args:?} printed no {COORDINATOR_LINE:?} line within {START_WAIT:?}")
        });
        let args = args.iter().map(|a| a.to_string()).collect();
        Coordinator { process, dir, json_path, url, stdout: Some(stdout), stderr, args }
    }

    /// The URL agents connect to (`ws://127.0.0.1:PORT/`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Kills it (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        self.process.kill9();
    }

    /// What it printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Waits until its stderr holds `text`.
    ///
    /// Panics: not within `limit`.
    pub fn wait_stderr(&self, text: &str, limit: Duration) {
        let end = Instant::now() + limit;
        while !self.stderr().contains(text) {
            assert!(
                Instant::now() < end,
                "no {text:?} on the coordinator's stderr within {limit:?}: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for its end and reads its report.
    ///
    /// Panics: it does not end within [`RUN_WAIT`], fails, or writes no
    /// valid JSON report.
    pub fn finish(self) -> LoadgenRun {
        let args = self.args.clone();
        let run = self.finish_any();
        assert!(run.code == Some(0), "coordinator {args:?} failed ({:?}): {}", run.code, run.stderr);
        run
    }

    /// Waits for the run to end, whatever its exit code (in
    /// [`LoadgenRun::code`]), and reads its JSON report.
    ///
    /// Panics: it did not end within [`RUN_WAIT`]; no report was written.
    pub fn finish_any(mut self) -> LoadgenRun {
        let status = self.process.wait_exit(RUN_WAIT);
        if status.is_none() {
            self.process.kill9();
        }
        let stdout = self.stdout.take().and_then(|t| t.join().ok()).unwrap_or_default();
        let stderr = self.stderr();
        let args = &self.args;
        assert!(status.is_some(), "coordinator {args:?} still running after {RUN_WAIT:?}: {stderr}");
        let text = std::fs::read_to_string(&self.json_path).expect("json report written");
        let json = serde_json::from_str(&text).expect("valid json");
        let _ = &self.dir;
        LoadgenRun { json, stdout, stderr, code: status.and_then(|s| s.code()) }
    }
}

/// A `mino-loadgen agent` process, its stderr kept in a file.
pub struct Agent {
    process: Process,
    log: PathBuf,
    _dir: WorkDir,
}

impl Agent {
    /// Starts an agent named `name` of the coordinator at `url`, with
    /// `args` (its local options) beside.
    pub fn start(bin: impl AsRef<Path>, url: &str, name: &str, args: &[&str]) -> Agent {
        let dir = WorkDir::new("agent");
        let log = dir.join("stderr.log");
        let file = std::fs::File::create(&log).expect("agent log file");
        let mut cmd = Command::new(bin.as_ref());
        cmd.args(["agent", "--coordinator", url, "--name", name])
            .args(args)
            .env("MINO_LOG", log_filter())
            .stdout(Stdio::null())
            .stderr(file);
        Agent { process: Process::spawn(&format!("mino-loadgen agent {name}"), &mut cmd), log, _dir: dir }
    }

    /// The process, to signal or kill it.
    pub fn process(&mut self) -> &mut Process {
        &mut self.process
    }

    /// What it printed on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for its exit, at most `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        self.process.wait_exit(limit)
    }
}

/// The number at `path` (keys joined by dots, e.g. `welcome_ms.p50`) of a
/// JSON report.
///
/// Panics: absent or not a number (with the report in the message).
pub fn num(v: &serde_json::Value, path: &str) -> f64 {
    let mut cur = v;
    for k in path.split('.') {
        cur = &cur[k];
    }
    cur.as_f64().unwrap_or_else(|| panic!("{path} missing or not a number in {v:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num_follows_dotted_paths() {
        let v = serde_json::json!({ "bots": 3, "welcome_ms": { "p50": 1.5 } });
        assert_eq!((num(&v, "bots"), num(&v, "welcome_ms.p50")), (3.0, 1.5));
    }
}
