//! The `mino-loadgen` binary run to its end, as an operator runs it: its
//! JSON report (`--json FILE`) read back, its output kept.

use crate::log_filter;
use crate::process::Process;
use crate::workdir::WorkDir;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

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
}

/// Runs `bin` (e.g. `env!("CARGO_BIN_EXE_mino-loadgen")`) with `args` plus
/// `--json FILE`, with the kit's log filter (`MINO_LOG`).
///
/// Panics: it does not finish within [`RUN_WAIT`], fails, or writes no valid
/// JSON report.
pub fn run(bin: impl AsRef<Path>, args: &[&str]) -> LoadgenRun {
    let dir = WorkDir::new("loadgen");
    let json_path = dir.join("report.json");
    let mut cmd = Command::new(bin.as_ref());
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
    assert!(out.status.success(), "mino-loadgen {args:?} failed: {stderr}");
    let text = std::fs::read_to_string(&json_path).expect("json report written");
    let json = serde_json::from_str(&text).expect("valid json");
    LoadgenRun { json, stdout, stderr }
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
