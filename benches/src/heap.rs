//! A heap profile of idle websockets (issue 17; `heap-idle`,
//! `benches/heap-idle.sh`): `mino-server` under heaptrack with N idle bots
//! (`mino-loadgen idle`), killed with SIGKILL during the hold, so that what
//! heaptrack calls "leaked" is exactly what was live with every socket
//! open; the live heap per connection and its biggest allocation sites.
//!
//! heaptrack sees malloc's callers only: the server must be built without
//! jemalloc (`--no-default-features`; the live bytes a call site holds are
//! the same under either allocator; what each allocator adds on top shows
//! in the scale runner's idle section).

use mino_testkit::process::{self, children_of, Process};
use mino_testkit::{Launch, Shard, Signal, WorkDir};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// What a profile needs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Idle websockets.
    pub connections: u32,
    /// `mino-server` built without jemalloc.
    pub server: PathBuf,
    /// `mino-loadgen`.
    pub loadgen: PathBuf,
    /// Flags added to the server's.
    pub flags: Vec<String>,
}

/// The live heap with every socket open.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Websockets open at the kill (its sockets, less the listener's and a
    /// few others).
    pub connected: u64,
    /// Live bytes a connection.
    pub bytes_per_connection: f64,
    /// The biggest sites: (mino function (file), bytes a connection).
    pub sites: Vec<(String, f64)>,
}

/// Frames of library code a site is charged past, towards mino's caller.
const SKIP: [&str; 20] = [
    "(map.rs)",
    "(mod.rs)",
    "(rustc_entry.rs)",
    "(set.rs)",
    "(alloc.rs)",
    "(raw_vec",
    "(vec",
    "(boxed.rs)",
    "(bytes.rs)",
    "(bytes_mut.rs)",
    "(sync.rs)",
    "(rc.rs)",
    "(string.rs)",
    "(spec_from",
    "(iter.rs)",
    "(slice.rs)",
    "(collect",
    "(extend",
    "(clone.rs)",
    "(function.rs)",
];

/// mino's own source files, by the start of their names.
const MINO_FILES: [&str; 32] = [
    "hub",
    "conn",
    "outbox",
    "local",
    "aoi",
    "links",
    "sim",
    "cells",
    "viewers",
    "mod.rs",
    "socket",
    "task",
    "names",
    "frame",
    "tick",
    "shard",
    "reader",
    "closing",
    "http",
    "registry",
    "presence",
    "metrics",
    "output",
    "batch",
    "liveness",
    "interest",
    "view",
    "session",
    "listener",
    "cluster",
    "world",
    "admission",
];

/// Sums heaptrack's flamegraph lines (`frame;frame;... COST`) by the mino
/// function that allocated: live bytes a connection and the `top` biggest
/// sites.
pub fn summarize(stacks: &str, connections: u64, top: usize) -> (f64, Vec<(String, f64)>) {
    let mut sites: HashMap<String, u64> = HashMap::new();
    let mut total = 0u64;
    for line in stacks.lines() {
        let Some((stack, cost)) = line.trim_end().rsplit_once(' ') else { continue };
        let Ok(cost) = cost.parse::<u64>() else { continue };
        total += cost;
        let frames: Vec<&str> = stack.split(';').filter(|f| !f.trim().is_empty()).collect();
        let Some(mut j) = frames.len().checked_sub(1) else { continue };
        let library = |f: &str| {
            SKIP.iter().any(|s| f.contains(s))
                || (!f.contains("mino")
                    && f.contains('(')
                    && !MINO_FILES.iter().any(|m| f.rsplit('(').next().is_some_and(|file| file.starts_with(m))))
        };
        while j > 0 && library(frames[j]) {
            j -= 1;
        }
        let f = frames[j];
        let name = f.split(" (").next().unwrap_or(f);
        let name = &name[name.len().saturating_sub(50)..];
        let file = f.rsplit('(').next().unwrap_or("");
        *sites.entry(format!("{name} ({file}")).or_default() += cost;
    }
    let n = connections.max(1) as f64;
    let mut sites: Vec<(String, f64)> = sites.into_iter().map(|(k, v)| (k, v as f64 / n)).collect();
    sites.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    sites.truncate(top);
    (total as f64 / n, sites)
}

/// Whether `bin` has jemalloc inside (heaptrack would then see almost nothing).
pub fn has_jemalloc(bin: &Path) -> bool {
    std::fs::read(bin).is_ok_and(|b| b.windows(12).any(|w| w == b"_rjem_malloc"))
}

/// Profiles `o.connections` idle websockets.
///
/// Errors: heaptrack or a binary is missing, the server has jemalloc, no
/// websocket was open, or heaptrack_print failed.
pub async fn profile(o: &Options) -> anyhow::Result<Profile> {
    anyhow::ensure!(
        !has_jemalloc(&o.server),
        "{} is built with jemalloc, which heaptrack cannot see; build it with --no-default-features",
        o.server.display()
    );
    anyhow::ensure!(
        Command::new("heaptrack").arg("--help").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok(),
        "needs heaptrack (apt install heaptrack)"
    );
    // Both processes hold N descriptors: the soft limit is raised to the
    // hard one here, and the children inherit it.
    let limits = mino_loadgen::limits::LocalLimits::check_and_raise(1);
    let n = o.connections;
    anyhow::ensure!(limits.nofile > u64::from(n) + 100, "{n} sockets need more descriptors than {}", limits.nofile);
    let work = WorkDir::new("heap");
    let world = ((f64::from(n).sqrt() * 125.0).round() as u32).max(1000).to_string();
    let (players, conns) = ((n + 100).to_string(), (n + 200).to_string());
    let mut args = vec!["--world-size", &world, "--cell-size", "125", "--view-radius", "250"];
    args.extend(["--max-players", &players, "--max-connections", &conns, "--busy-lateness-ms", "0"]);
    args.extend(o.flags.iter().map(String::as_str));
    let out = work.join("heap");
    let launch = Launch {
        wrapper: vec!["heaptrack".into(), "-o".into(), out.to_string_lossy().into_owned()],
        log: Some((work.join("server.log"), "warn".into())),
        busy_rule: true,
        ..Launch::default()
    };
    let mut shard = Shard::launch(&o.server, &args, &launch);
    let server = children_of(shard.pid())
        .into_iter()
        .find(|c| std::fs::read_to_string(format!("/proc/{c}/comm")).is_ok_and(|n| n.starts_with("mino-server")))
        .ok_or_else(|| anyhow::anyhow!("no mino-server under heaptrack"))?;
    let mut loadgen = Process::spawn(
        "mino-loadgen",
        Command::new(&o.loadgen)
            .args(["idle", "--url", &shard.ws_url(), "--server-pid", &server.to_string(), "--bots", &n.to_string()])
            .args(["--ramp", "1000", "--hold", "30s", "--no-chat-cost", "-q", "--json"])
            .arg(work.join("idle.json"))
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    tokio::time::sleep(Duration::from_secs(u64::from(n / 1000) + 12)).await;
    let open = sockets(server);
    process::send(server, Signal::SIGKILL);
    shard.process().wait_exit(Duration::from_secs(600));
    loadgen.stop(Duration::from_secs(5));
    let connected = open.saturating_sub(4);
    anyhow::ensure!(connected > 0, "no websocket was open");
    if connected * 10 < u64::from(n) * 9 {
        eprintln!("heap-idle: only about {connected} of {n} websockets were open; per connection is over those");
    }
    let profile = std::fs::read_dir(work.path())?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|f| f.to_string_lossy().starts_with("heap.")))
        .ok_or_else(|| anyhow::anyhow!("heaptrack wrote no profile"))?;
    let stacks = work.join("stacks");
    let printed = Command::new("heaptrack_print")
        .arg("-F")
        .arg(&stacks)
        .args(["--flamegraph-cost-type", "leaked"])
        .arg(&profile)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    anyhow::ensure!(printed.success(), "heaptrack_print failed");
    let (bytes_per_connection, sites) = summarize(&std::fs::read_to_string(&stacks)?, connected, 14);
    Ok(Profile { connected, bytes_per_connection, sites })
}

/// The sockets `pid` holds now.
fn sockets(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| {
        d.flatten()
            .filter(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:")))
            .count() as u64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_are_charged_to_minos_caller() {
        let stacks = "main;run (listener.rs);insert (hub.rs);reserve (raw_vec.rs) 3000\n\
                      main;tick (aoi.rs);push (vec.rs);grow (alloc.rs) 1000\n\
                      main;tick (aoi.rs) 1000\nnot a line\n";
        let (total, sites) = summarize(stacks, 10, 14);
        assert_eq!(total, 500.0);
        assert_eq!(sites, [("insert (hub.rs)".to_owned(), 300.0), ("tick (aoi.rs)".to_owned(), 200.0)]);
    }
}
