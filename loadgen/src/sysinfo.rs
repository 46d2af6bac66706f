//! Process and machine figures read from `/proc`: CPU time (user and system
//! apart) of this process or a server's, its state and parent, resident
//! memory, run-queue wait, the machine's busy share, and the kernel's TCP
//! memory. The one reader of `/proc/PID/stat` in the workspace: the test kit
//! (`mino_testkit::process`) and the benches read processes through it.

use std::io;
use std::time::Duration;

/// CPU time a process has used since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTimes {
    /// User-mode time.
    pub user: Duration,
    /// Kernel-mode time (system calls, and on loopback the receiving side too).
    pub system: Duration,
}

impl CpuTimes {
    /// User plus system.
    pub fn total(&self) -> Duration {
        self.user + self.system
    }

    /// `self - earlier`, saturating at zero.
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes { user: self.user.saturating_sub(earlier.user), system: self.system.saturating_sub(earlier.system) }
    }
}

/// Memory figures of a process, bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Memory {
    /// Resident set size now (`VmRSS`).
    pub rss: u64,
    /// Peak resident set size (`VmHWM`).
    pub peak: u64,
}

/// Which process to read: this one or another by pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proc {
    /// The loadgen itself (`/proc/self`).
    Myself,
    /// Another process (`/proc/PID`).
    Pid(u32),
}

impl Proc {
    fn path(self, file: &str) -> String {
        match self {
            Proc::Myself => format!("/proc/self/{file}"),
            Proc::Pid(pid) => format!("/proc/{pid}/{file}"),
        }
    }

    /// CPU time used so far. Errors: the process is gone or `/proc` is unreadable.
    pub fn cpu(self) -> io::Result<CpuTimes> {
        let stat = self.stat()?;
        let hz = clock_ticks_per_second();
        Ok(CpuTimes { user: ticks(stat.utime, hz), system: ticks(stat.stime, hz) })
    }

    /// Resident and peak memory. Errors: as [`Proc::cpu`].
    pub fn memory(self) -> io::Result<Memory> {
        let text = std::fs::read_to_string(self.path("status"))?;
        Ok(Memory {
            rss: status_kib(&text, "VmRSS:").ok_or_else(|| bad_data("VmRSS"))? * 1024,
            peak: status_kib(&text, "VmHWM:").unwrap_or(0) * 1024,
        })
    }

    /// Its state, parent and CPU ticks. Errors: as [`Proc::cpu`].
    pub fn stat(self) -> io::Result<Stat> {
        parse_stat(&std::fs::read_to_string(self.path("stat"))?).ok_or_else(|| bad_data("stat"))
    }

    /// Its command name (`/proc/PID/comm`: the executable's name, at most
    /// 15 bytes). Errors: as [`Proc::cpu`].
    pub fn name(self) -> io::Result<String> {
        Ok(std::fs::read_to_string(self.path("comm"))?.trim_end().to_owned())
    }

    /// True while the process exists (and is not a zombie).
    pub fn alive(self) -> bool {
        self.stat().is_ok_and(|s| s.state != 'Z')
    }

    /// Seconds its threads have spent on a CPU and runnable but waiting for
    /// one, summed over `/proc/PID/task/*/schedstat` (the wait is what the
    /// other processes of a shared machine cost it). Errors: as [`Proc::cpu`].
    pub fn schedstat(self) -> io::Result<SchedStat> {
        let mut sum = SchedStat::default();
        for task in std::fs::read_dir(self.path("task"))? {
            let text = std::fs::read_to_string(task?.path().join("schedstat"))?;
            let (run, wait) = parse_schedstat(&text).ok_or_else(|| bad_data("schedstat"))?;
            sum.run += run;
            sum.wait += wait;
        }
        Ok(sum)
    }
}

/// What `/proc/PID/stat` says of a process (the one parser of that file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// Its state letter (`R`, `S`, `Z` for a zombie...).
    pub state: char,
    /// Its parent's pid.
    pub ppid: u32,
    /// User-mode CPU so far, clock ticks ([`clock_ticks_per_second`]).
    pub utime: u64,
    /// Kernel-mode CPU so far, clock ticks.
    pub stime: u64,
}

/// Time a process's threads ran and waited to run, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SchedStat {
    /// On a CPU.
    pub run: Duration,
    /// Runnable, waiting for a CPU.
    pub wait: Duration,
}

/// The first two fields of a thread's `schedstat` (ns on a CPU, ns waiting).
fn parse_schedstat(text: &str) -> Option<(Duration, Duration)> {
    let mut f = text.split_whitespace().map(|v| v.parse::<u64>().ok().map(Duration::from_nanos));
    Some((f.next()??, f.next()??))
}

fn bad_data(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("unreadable {what} in /proc"))
}

fn ticks(n: u64, hz: u64) -> Duration {
    Duration::from_nanos(n.saturating_mul(1_000_000_000) / hz.max(1))
}

/// This machine's host name (`/proc/sys/kernel/hostname`; "unknown" when
/// unreadable).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Kernel clock ticks per second (`_SC_CLK_TCK`), 100 when unknown.
pub fn clock_ticks_per_second() -> u64 {
    use nix::unistd::{sysconf, SysconfVar};
    match sysconf(SysconfVar::CLK_TCK) {
        Ok(Some(hz)) if hz > 0 => hz as u64,
        _ => 100,
    }
}

/// Parses `/proc/PID/stat`: the state (field 3), the parent (field 4), utime
/// and stime (fields 14 and 15). The command name (field 2) may hold spaces
/// and parentheses, so the fields are counted from its last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let close = text.rfind(')')?;
    let f: Vec<&str> = text[close + 1..].split_whitespace().take(13).collect();
    Some(Stat {
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        utime: f.get(11)?.parse().ok()?,
        stime: f.get(12)?.parse().ok()?,
    })
}

/// The kB value of `key` (e.g. `VmRSS:`) in `/proc/PID/status`.
pub fn status_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// The machine's aggregate CPU counters (first line of `/proc/stat`), ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MachineCpu {
    /// Ticks spent on anything but idle and iowait.
    pub busy: u64,
    /// All ticks.
    pub total: u64,
}

impl MachineCpu {
    /// Reads `/proc/stat`. Errors: unreadable or unexpected format.
    pub fn read() -> io::Result<MachineCpu> {
        let text = std::fs::read_to_string("/proc/stat")?;
        parse_proc_stat(&text).ok_or_else(|| bad_data("/proc/stat"))
    }

    /// Busy share between `earlier` and `self`, percent of all cores.
    pub fn busy_pct_since(&self, earlier: &MachineCpu) -> f64 {
        let total = self.total.saturating_sub(earlier.total);
        if total == 0 {
            return 0.0;
        }
        self.busy.saturating_sub(earlier.busy) as f64 * 100.0 / total as f64
    }
}

/// Parses the `cpu ` line of `/proc/stat`.
pub fn parse_proc_stat(text: &str) -> Option<MachineCpu> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).map(|f| f.parse().ok()).collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]; guests are inside user.
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3)? + v.get(4).unwrap_or(&0);
    Some(MachineCpu { busy: total - idle, total })
}

/// Memory the kernel holds for all TCP sockets, bytes (`mem` of the `TCP:`
/// line of `/proc/net/sockstat`, in pages). Errors: unreadable.
pub fn kernel_tcp_memory() -> io::Result<u64> {
    let text = std::fs::read_to_string("/proc/net/sockstat")?;
    let pages = parse_sockstat_tcp_pages(&text).ok_or_else(|| bad_data("sockstat"))?;
    Ok(pages * page_size())
}

/// The `mem` field of the `TCP:` line of `/proc/net/sockstat`, pages.
pub fn parse_sockstat_tcp_pages(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("TCP:"))?;
    let mut it = line.split_whitespace();
    while let Some(word) = it.next() {
        if word == "mem" {
            return it.next()?.parse().ok();
        }
    }
    None
}

fn page_size() -> u64 {
    use nix::unistd::{sysconf, SysconfVar};
    match sysconf(SysconfVar::PAGE_SIZE) {
        Ok(Some(p)) if p > 0 => p as u64,
        _ => 4096,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_spaces_and_parens_in_the_name() {
        let text = "4242 (mino (srv) x) S 1 2 3 4 5 6 7 8 9 10 1234 567 0 0 20 0 3 0 100 200 300";
        assert_eq!(parse_stat(text), Some(Stat { state: 'S', ppid: 1, utime: 1234, stime: 567 }));
        assert_eq!(parse_stat("42 (x) Z"), None, "cut short");
        assert_eq!(
            parse_schedstat("123 4500000000 7\n"),
            Some((Duration::from_nanos(123), Duration::from_millis(4500)))
        );
        let s = Proc::Myself.schedstat().expect("own schedstat");
        assert!(s.run > Duration::ZERO);
    }

    #[test]
    fn own_cpu_and_memory_are_readable() {
        let cpu = Proc::Myself.cpu().expect("own /proc/self/stat");
        let mem = Proc::Myself.memory().expect("own /proc/self/status");
        assert!(mem.rss > 0 && mem.peak >= mem.rss);
        assert!(cpu.total() < Duration::from_secs(3600));
        assert!(Proc::Myself.alive());
        assert!(!Proc::Pid(u32::MAX).alive());
    }

    #[test]
    fn status_and_proc_stat_parse() {
        let status = "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(status_kib(status, "VmRSS:"), Some(1024));
        assert_eq!(status_kib(status, "VmHWM:"), Some(2048));
        let stat = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n";
        let m = parse_proc_stat(stat).expect("cpu line");
        assert_eq!((m.busy, m.total), (150, 1000));
        let later = MachineCpu { busy: 250, total: 1200 };
        assert!((later.busy_pct_since(&m) - 50.0).abs() < 1e-9);
    }

    #[test]
    fn sockstat_parses() {
        let text = "sockets: used 300\nTCP: inuse 12 orphan 0 tw 3 alloc 20 mem 7\nUDP: inuse 1 mem 2\n";
        assert_eq!(parse_sockstat_tcp_pages(text), Some(7));
    }
}
