//! Process and machine figures read from `/proc`: CPU time (user and system
//! apart) of this process or a server's, resident memory, the machine's busy
//! share, and the kernel's TCP memory.

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
        let text = std::fs::read_to_string(self.path("stat"))?;
        let (user, system) = parse_stat_ticks(&text).ok_or_else(|| bad_data("stat"))?;
        let hz = clock_ticks_per_second();
        Ok(CpuTimes { user: ticks(user, hz), system: ticks(system, hz) })
    }

    /// Resident and peak memory. Errors: as [`Proc::cpu`].
    pub fn memory(self) -> io::Result<Memory> {
        let text = std::fs::read_to_string(self.path("status"))?;
        Ok(Memory {
            rss: status_kib(&text, "VmRSS:").ok_or_else(|| bad_data("VmRSS"))? * 1024,
            peak: status_kib(&text, "VmHWM:").unwrap_or(0) * 1024,
        })
    }

    /// True while the process exists (and is not a zombie).
    pub fn alive(self) -> bool {
        match std::fs::read_to_string(self.path("stat")) {
            Ok(text) => stat_fields(&text).and_then(|mut f| f.next()) != Some("Z"),
            Err(_) => false,
        }
    }
}

fn bad_data(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("unreadable {what} in /proc"))
}

fn ticks(n: u64, hz: u64) -> Duration {
    Duration::from_nanos(n.saturating_mul(1_000_000_000) / hz.max(1))
}

/// Kernel clock ticks per second (`_SC_CLK_TCK`), 100 when unknown.
pub fn clock_ticks_per_second() -> u64 {
    use nix::unistd::{sysconf, SysconfVar};
    match sysconf(SysconfVar::CLK_TCK) {
        Ok(Some(hz)) if hz > 0 => hz as u64,
        _ => 100,
    }
}

/// Fields of `/proc/PID/stat` after the command name, starting with the state
/// (field 3). The name may hold spaces and parentheses, so split at the last `)`.
fn stat_fields(text: &str) -> Option<std::str::SplitWhitespace<'_>> {
    let close = text.rfind(')')?;
    Some(text[close + 1..].split_whitespace())
}

/// `(utime, stime)` in clock ticks: fields 14 and 15 of `/proc/PID/stat`.
pub fn parse_stat_ticks(text: &str) -> Option<(u64, u64)> {
    let mut fields = stat_fields(text)?.skip(11);
    let user = fields.next()?.parse().ok()?;
    let system = fields.next()?.parse().ok()?;
    Some((user, system))
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
        assert_eq!(parse_stat_ticks(text), Some((1234, 567)));
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
