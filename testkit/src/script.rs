//! A shipped shell script run for real (`scripts/play.sh`,
//! `deploy/local-cluster.sh`): in a process group of its own, so that a
//! Ctrl-C reaches it as from a terminal and whatever it leaves behind goes
//! with the test, its standard output read line by line.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running script and what it printed.
pub struct Script {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// Every line it printed that a wait has taken so far.
    pub seen: Vec<String>,
}

impl Script {
    /// `bash PATH ARGS...`, to be given its environment and passed to
    /// [`Script::spawn`]. Through `env --default-signal=INT`: a test run
    /// started in the background (`cmd &` in a script, nohup) inherits
    /// SIGINT ignored, and a shell cannot trap a signal ignored at its start,
    /// so the script would never see the Ctrl-C a test sends.
    pub fn bash(path: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new("env");
        cmd.args(["--default-signal=INT", "bash"]).arg(path).args(args);
        cmd
    }

    /// Starts `cmd` in a new process group, standard input empty, standard
    /// output read line by line (standard error as `cmd` says; inherited by
    /// default).
    ///
    /// Panics: the command cannot start.
    pub fn spawn(mut cmd: Command) -> Script {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).process_group(0);
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Script { child, lines, seen: Vec::new() }
    }

    /// The script's pid (also its process group's id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for a line containing `text`; returns it.
    ///
    /// Panics: no such line within `limit` (with everything printed so far).
    pub fn until(&mut self, text: &str, limit: Duration) -> String {
        let end = Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(_) => {
                    panic!("no line with {text:?} within {limit:?}; the script printed:\n{}", self.seen.join("\n"))
                }
            }
        }
    }

    /// Waits for the script's exit: its status and everything it printed.
    ///
    /// Panics: it did not exit within `limit`.
    pub fn exit(&mut self, limit: Duration) -> (ExitStatus, Vec<String>) {
        let end = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                // The reader thread may still hold the last lines: take them
                // until the pipe closes (a child of the script may still hold
                // it open: then for at most a second).
                let drain = Instant::now() + Duration::from_secs(1);
                while let Ok(line) = self.lines.recv_timeout(drain.saturating_duration_since(Instant::now())) {
                    self.seen.push(line);
                }
                return (status, self.seen.clone());
            }
            assert!(Instant::now() < end, "the script did not exit within {limit:?}:\n{}", self.seen.join("\n"));
            self.seen.extend(self.lines.try_iter());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends `signal` (as `kill` names it: `-INT`, `-KILL`, `-USR1`) to `pid`.
    ///
    /// Panics: `kill` failed.
    pub fn signal(signal: &str, pid: u32) {
        let status = Command::new("kill").args([signal, &pid.to_string()]).status().expect("kill");
        assert!(status.success(), "kill {signal} {pid}");
    }

    /// SIGINT (a Ctrl-C) to the script, then its exit within `limit`:
    /// its status and the lines it printed meanwhile.
    pub fn interrupt(&mut self, limit: Duration) -> (ExitStatus, Vec<String>) {
        Script::signal("-INT", self.pid());
        let before = self.seen.len();
        let (status, seen) = self.exit(limit);
        (status, seen[before..].to_vec())
    }
}

impl Drop for Script {
    /// Whatever is left of its process group goes.
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
        let _ = self.child.wait();
    }
}
