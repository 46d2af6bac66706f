//! Child processes that never outlive the test: signalled by pid, waited
//! for with a bound, killed (with their own children) on drop; and what
//! `/proc` says of any process (alive, children, CPU, memory, run-queue
//! wait), read through loadgen's `sysinfo`, the one reader of
//! `/proc/PID/stat`.

use mino_loadgen::sysinfo::{CpuTimes, Proc};
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
    Proc::Pid(pid).alive()
}

/// The pids whose parent is `pid` (from /proc), e.g. nginx's workers.
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| Proc::Pid(*child).stat().is_ok_and(|s| s.ppid == pid && s.state != 'Z'))
        .collect()
}

/// User and system CPU time of `pid` so far; None when the process is gone.
pub fn cpu(pid: u32) -> Option<CpuTimes> {
    Proc::Pid(pid).cpu().ok()
}

/// Resident set size of `pid` now, bytes (`VmRSS` of /proc/PID/status); None
/// when the process is gone.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    Proc::Pid(pid).memory().ok().map(|m| m.rss)
}

/// What the benches sample of a process: CPU time so far, resident memory
/// now and its threads' run-queue time so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcSample {
    /// User-mode CPU so far, s.
    pub user_s: f64,
    /// Kernel-mode CPU so far, s.
    pub sys_s: f64,
    /// Resident set size now, bytes.
    pub rss: u64,
    /// Seconds its threads ran so far (None: `schedstat` unreadable).
    pub run_s: Option<f64>,
    /// Seconds its threads waited for a CPU so far (None: unreadable).
    pub wait_s: Option<f64>,
}

/// [`ProcSample`] of `pid` now; None when it is gone or a zombie.
pub fn sample(pid: u32) -> Option<ProcSample> {
    let p = Proc::Pid(pid);
    if !p.alive() {
        return None;
    }
    let (cpu, mem) = (p.cpu().ok()?, p.memory().ok()?);
    let sched = p.schedstat().ok();
    Some(ProcSample {
        user_s: cpu.user.as_secs_f64(),
        sys_s: cpu.system.as_secs_f64(),
        rss: mem.rss,
        run_s: sched.map(|s| s.run.as_secs_f64()),
        wait_s: sched.map(|s| s.wait.as_secs_f64()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_child_is_gone_and_its_children_listed() {
        let mut p = Process::spawn("sleep", Command::new("sleep").arg("30"));
        let me = std::process::id();
        assert!(children_of(me).contains(&p.pid()));
        assert!(alive(p.pid()) && cpu(p.pid()).is_some());
        assert!(sample(p.pid()).is_some_and(|s| s.rss > 0 && s.wait_s.is_some()));
        assert!(rss_bytes(p.pid()).is_some_and(|b| b > 0));
        p.kill9();
        assert!(!p.is_running() && !alive(p.pid()) && sample(p.pid()).is_none());
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
