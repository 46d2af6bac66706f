//! Child processes that never outlive the test: signalled by pid, waited
//! for with a bound, killed (with their own children) on drop.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running child process.
#[derive(Debug)]
pub struct Process {
    name: String,
    child: Child,
    /// Set once the exit has been collected.
    exit: Option<ExitStatus>,
}

impl Process {
    /// Spawns `cmd`; `name` is for messages.
    ///
    /// Panics: the program cannot be started.
    pub fn spawn(name: &str, cmd: &mut Command) -> Process {
        let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {name} ({cmd:?}): {e}"));
        Process { name: name.to_owned(), child, exit: None }
    }

    /// Wraps an already spawned child.
    pub fn from_child(name: &str, child: Child) -> Process {
        Process { name: name.to_owned(), child, exit: None }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The child, to take its pipes.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Sends `signal`; false when the process is already gone.
    pub fn signal(&self, signal: Signal) -> bool {
        self.exit.is_none() && send(self.pid(), signal)
    }

    /// True while the process runs (collects its exit status when it ended).
    pub fn is_running(&mut self) -> bool {
        if self.exit.is_none() {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.exit = Some(status);
            }
        }
        self.exit.is_none()
    }

    /// Waits for the exit, at most `limit`; None if it still runs.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + limit;
        while self.is_running() {
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.exit
    }

    /// Waits for the exit, at most `limit`, collecting what the process
    /// writes to its piped stdout and stderr (read as it comes, so a full
    /// pipe never stalls it). None when it still runs; it is killed then.
    pub fn output(&mut self, limit: Duration) -> Option<Output> {
        let stdout = self.child.stdout.take().map(read_all);
        let stderr = self.child.stderr.take().map(read_all);
        let status = self.wait_exit(limit);
        if status.is_none() {
            self.kill9();
        }
        let collect = |h: Option<JoinHandle<Vec<u8>>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
        let (stdout, stderr) = (collect(stdout), collect(stderr));
        Some(Output { status: status?, stdout, stderr })
    }

    /// SIGKILL, then waits for it (the way a crashed machine would go).
    pub fn kill9(&mut self) {
        if self.is_running() {
            let _ = self.child.kill();
            self.exit = self.child.wait().ok();
        }
    }

    /// SIGTERM, up to `grace` to exit, then SIGKILL. Returns the exit status
    /// when it exited within the grace.
    pub fn stop(&mut self, grace: Duration) -> Option<ExitStatus> {
        self.signal(Signal::SIGTERM);
        let status = self.wait_exit(grace);
        if status.is_none() {
            self.kill9();
        }
        status
    }

    /// The name given at spawn.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let children = children_of(self.pid());
        self.kill9();
        for pid in children {
            send(pid, Signal::SIGKILL);
        }
    }
}

/// Runs `cmd` to its end with its output collected (stdin closed), as
/// `Command::output` does but bounded: at most `limit`.
///
/// Panics: it cannot be started, or still runs after `limit` (it is killed).
pub fn run(name: &str, cmd: &mut Command, limit: Duration) -> Output {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    Process::spawn(name, cmd).output(limit).unwrap_or_else(|| panic!("{name} ({cmd:?}) did not finish in {limit:?}"))
}

/// Reads `pipe` to its end on a thread of its own.
fn read_all(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// Sends `signal` to `pid`; false when there is no such process.
pub fn send(pid: u32, signal: Signal) -> bool {
    i32::try_from(pid).is_ok_and(|p| kill(Pid::from_raw(p), signal).is_ok())
}

/// True while a process with this pid exists (and is not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat_fields(&stat).is_some_and(|f| f.first() != Some(&"Z")),
        Err(_) => false,
    }
}

/// The pids whose parent is `pid` (from /proc), e.g. nginx's workers.
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            stat_fields(&stat).and_then(|f| f.get(1)?.parse::<u32>().ok()) == Some(pid)
        })
        .filter(|child| alive(*child))
        .collect()
}

/// User plus system CPU time of `pid` so far, in clock ticks (see
/// `getconf CLK_TCK`); None when the process is gone.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f = stat_fields(&stat)?;
    // Fields after the command: state(3) ppid(4) ... utime(14) stime(15).
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Resident set size of `pid` now, bytes (`VmRSS` of /proc/PID/status); None
/// when the process is gone.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.trim().trim_end_matches("kB").trim();
    Some(kb.parse::<u64>().ok()? * 1024)
}

/// The fields of /proc/PID/stat after the parenthesised command name (which
/// may hold spaces): index 0 is the state, 1 the parent pid.
fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_skip_a_command_with_spaces() {
        let stat = "42 (a b) S 7 42 42 0 -1 4194560 1 0 0 0 13 5 0 0 20 0 1 0";
        let f = stat_fields(stat).expect("fields");
        assert_eq!((f[0], f[1]), ("S", "7"));
        assert_eq!((f[11], f[12]), ("13", "5"));
    }

    #[test]
    fn a_killed_child_is_gone_and_its_children_listed() {
        let mut p = Process::spawn("sleep", Command::new("sleep").arg("30"));
        let me = std::process::id();
        assert!(children_of(me).contains(&p.pid()));
        assert!(alive(p.pid()) && cpu_ticks(p.pid()).is_some());
        assert!(rss_bytes(p.pid()).is_some_and(|b| b > 0));
        p.kill9();
        assert!(!p.is_running() && !alive(p.pid()));
    }

    #[test]
    fn output_is_collected_and_a_process_past_its_limit_killed() {
        let out = run("sh", Command::new("sh").args(["-c", "echo out; echo err >&2"]), Duration::from_secs(10));
        assert!(out.status.success());
        assert_eq!((out.stdout.as_slice(), out.stderr.as_slice()), (&b"out\n"[..], &b"err\n"[..]));
        let mut slow = Process::spawn("sleep", Command::new("sleep").arg("30").stdout(Stdio::piped()));
        assert!(slow.output(Duration::from_millis(100)).is_none());
        assert!(!slow.is_running());
    }
}
