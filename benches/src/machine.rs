//! What `run.tsv` records of the run's circumstances, read when it runs so
//! that a report written later names what was measured: the machine, the
//! tools, the commit, the binaries, the load average, UTC times.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// The machine as RESULTS.md's header shows it: "2 cores (`nproc`), MODEL,
/// 23.5 GiB memory, Linux RELEASE".
pub fn describe() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|(_, m)| m.trim().to_owned()))
        .unwrap_or_else(|| "unknown".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:")?.split_whitespace().next()?.parse::<f64>().ok())
        .map_or("?".into(), |kib| format!("{:.1} GiB", kib * 1024.0 / f64::from(1u32 << 30)));
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cores} cores (`nproc`), {model}, {mem} memory, Linux {}", kernel.trim())
}

/// The first line `program args` prints, or "unknown".
fn first_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

/// The tools that built and served the run: rustc and redis-server.
pub fn tools() -> String {
    format!("{}; {}", first_line("rustc", &["--version"]), first_line("redis-server", &["--version"]))
}

/// The commit measured: HEAD's short hash, "+dirty" when the crates that
/// make the binaries have local changes.
pub fn commit(root: &Path) -> String {
    let git = |args: &[&str]| Command::new("git").arg("-C").arg(root).args(args).output().ok();
    let head = git(&["rev-parse", "--short", "HEAD"])
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into());
    let clean = git(&["diff", "--quiet", "HEAD", "--", "server", "loadgen", "schema", "Cargo.toml", "Cargo.lock"])
        .is_some_and(|o| o.status.success());
    format!("{head}{}", if clean { "" } else { "+dirty" })
}

/// `uptime`'s line (its load averages are what RESULTS.md quotes).
pub fn uptime() -> String {
    first_line("uptime", &[])
}

/// A file's identity for `run.tsv`: "SHA256-PREFIX built UTC-TIME".
pub fn binary(path: &Path) -> String {
    let hash = Command::new("sha256sum")
        .arg(path)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).chars().take(12).collect::<String>())
        .unwrap_or_else(|| "unknown".into());
    let built = std::fs::metadata(path).and_then(|m| m.modified()).map_or("unknown".into(), utc);
    format!("{hash} built {built}")
}

/// `t` as `2026-11-30T01:32:57Z`.
pub fn utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil(days as i64);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// The calendar date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn utc_times_are_calendar_dates() {
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(utc(UNIX_EPOCH + Duration::from_secs(1_764_466_377)), "2025-11-30T01:32:57Z");
        assert_eq!(utc(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn the_machine_is_described() {
        let m = describe();
        assert!(m.contains(" cores (`nproc`), ") && m.contains(" memory, Linux "), "{m}");
    }
}
