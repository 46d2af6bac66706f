//! CPU and memory over a measurement window: the loadgen's own CPU (to judge
//! whether a step is judgeable), the machine's busy share, and each server
//! process named with `--server-pid` (CPU user/sys apart, RSS).

use crate::sysinfo::{CpuTimes, MachineCpu, Memory, Proc};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// A started measurement; [`Meter::finish`] ends it.
pub struct Meter {
    started: Instant,
    own: CpuTimes,
    machine: MachineCpu,
    servers: Vec<(u32, Option<CpuTimes>, Option<Memory>)>,
}

/// CPU used over a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    /// User time, s.
    pub user_s: f64,
    /// System time, s.
    pub sys_s: f64,
    /// (user + sys) / wall time: cores kept busy.
    pub cores: f64,
}

impl CpuUse {
    fn of(t: CpuTimes, wall: Duration) -> CpuUse {
        let wall = wall.as_secs_f64().max(1e-9);
        CpuUse { user_s: t.user.as_secs_f64(), sys_s: t.system.as_secs_f64(), cores: t.total().as_secs_f64() / wall }
    }

    /// User plus system, s.
    pub fn total_s(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

/// One server process over a window. CPU is `None` when the pid could not be read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerUse {
    /// The process id.
    pub pid: u32,
    /// CPU over the window (None: unreadable at start or end).
    pub cpu: Option<CpuUse>,
    /// RSS at the window's start, bytes.
    pub rss_start_bytes: Option<u64>,
    /// RSS at the window's end, bytes.
    pub rss_end_bytes: Option<u64>,
    /// Peak RSS of the process's life so far, bytes.
    pub rss_peak_bytes: Option<u64>,
}

/// What a window measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Wall time, s.
    pub wall_s: f64,
    /// The loadgen's own CPU.
    pub loadgen: CpuUse,
    /// The loadgen's CPU as a percent of the cores it may use (100 = all busy).
    pub loadgen_cpu_pct: f64,
    /// The whole machine's busy share, percent of all cores.
    pub machine_cpu_pct: f64,
    /// Each `--server-pid`.
    pub servers: Vec<ServerUse>,
}

impl Usage {
    /// Sum of the readable servers' CPU, or None if no server was readable.
    pub fn server_cpu(&self) -> Option<CpuUse> {
        let readable: Vec<CpuUse> = self.servers.iter().filter_map(|s| s.cpu).collect();
        (!readable.is_empty()).then(|| CpuUse {
            user_s: readable.iter().map(|c| c.user_s).sum(),
            sys_s: readable.iter().map(|c| c.sys_s).sum(),
            cores: readable.iter().map(|c| c.cores).sum(),
        })
    }

    /// Sum of the servers' RSS at the window's end, bytes.
    pub fn server_rss_end(&self) -> Option<u64> {
        let v: Vec<u64> = self.servers.iter().filter_map(|s| s.rss_end_bytes).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    }
}

/// Cores this process may run on.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map(usize::from).unwrap_or(1)
}

impl Meter {
    /// Starts a window now, reading the loadgen, the machine and `server_pids`.
    pub fn start(server_pids: &[u32]) -> Meter {
        Meter {
            started: Instant::now(),
            own: Proc::Myself.cpu().unwrap_or_default(),
            machine: MachineCpu::read().unwrap_or_default(),
            servers: server_pids.iter().map(|&p| (p, Proc::Pid(p).cpu().ok(), Proc::Pid(p).memory().ok())).collect(),
        }
    }

    /// Ends the window.
    pub fn finish(&self) -> Usage {
        let wall = self.started.elapsed();
        let loadgen = CpuUse::of(Proc::Myself.cpu().unwrap_or_default().since(&self.own), wall);
        let machine_cpu_pct = MachineCpu::read().map(|m| m.busy_pct_since(&self.machine)).unwrap_or(0.0);
        let servers = self.servers.iter().map(|(pid, cpu0, mem0)| server_use(*pid, *cpu0, *mem0, wall)).collect();
        Usage {
            wall_s: wall.as_secs_f64(),
            loadgen,
            loadgen_cpu_pct: loadgen.cores * 100.0 / available_cores() as f64,
            machine_cpu_pct,
            servers,
        }
    }
}

fn server_use(pid: u32, cpu0: Option<CpuTimes>, mem0: Option<Memory>, wall: Duration) -> ServerUse {
    let p = Proc::Pid(pid);
    let cpu1 = p.cpu().ok();
    let mem1 = p.memory().ok();
    ServerUse {
        pid,
        cpu: cpu0.zip(cpu1).map(|(a, b)| CpuUse::of(b.since(&a), wall)),
        rss_start_bytes: mem0.map(|m| m.rss),
        rss_end_bytes: mem1.map(|m| m.rss),
        rss_peak_bytes: mem1.map(|m| m.peak),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_own_busy_work_and_reads_a_pid() {
        let me = std::process::id();
        let meter = Meter::start(&[me, u32::MAX]);
        // Spin until this process has used 150 ms of CPU (not of wall time:
        // on a busy machine the thread gets a share of a core), or 10 s.
        let start = Proc::Pid(me).cpu().expect("own cpu");
        let give_up = Instant::now() + Duration::from_secs(10);
        let mut x = 0u64;
        while Proc::Pid(me).cpu().expect("own cpu").since(&start).total() < Duration::from_millis(150)
            && Instant::now() < give_up
        {
            for _ in 0..10_000 {
                x = x.wrapping_mul(31).wrapping_add(7);
            }
        }
        std::hint::black_box(x);
        let usage = meter.finish();
        assert!(usage.loadgen.total_s() > 0.05, "{usage:?}");
        assert!(usage.loadgen_cpu_pct > 0.0);
        assert!(usage.servers[0].cpu.is_some() && usage.servers[0].rss_end_bytes.is_some());
        assert!(usage.servers[1].cpu.is_none());
        assert!(usage.server_cpu().is_some_and(|c| c.total_s() > 0.05));
    }
}
