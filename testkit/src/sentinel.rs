//! A real Redis Sentinel deployment per test: a primary, one replica, and
//! three `redis-sentinel` processes (quorum two) watching it as master
//! `mino`, all on free loopback ports. The primary can be killed for real;
//! the sentinels promote the replica after the down-after time. Killed on
//! drop.

use crate::process::{self, Process};
use crate::redis::Redis;
use crate::workdir::WorkDir;
use crate::{port, START_WAIT, WAIT};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The master's name the sentinels know it by.
pub const MASTER: &str = "mino";

/// Sentinels started.
pub const SENTINELS: usize = 3;

/// A primary, a replica and three sentinels.
#[derive(Debug)]
pub struct Sentinel {
    /// The data nodes; index 0 is the first primary.
    pub nodes: Vec<Redis>,
    sentinels: Vec<(Process, u16)>,
    /// How long a silent primary takes to be judged down.
    pub down_after: Duration,
    _dir: WorkDir,
}

impl Sentinel {
    /// Starts the primary, its replica (synchronised), and the sentinels;
    /// returns once every sentinel knows the replica and the other sentinels
    /// (so a failover can be agreed).
    ///
    /// Panics: redis-server or redis-sentinel missing (scripts/setup.sh), or
    /// not ready within [`START_WAIT`].
    pub fn start(down_after: Duration) -> Sentinel {
        let dir = WorkDir::new("sentinel");
        // Both send a full sync at once (Redis waits 5 s for more replicas
        // by default: a primary killed within them left an empty replica).
        let at_once = ["--protected-mode", "no", "--repl-diskless-sync-delay", "0"];
        let primary = Redis::start_with(None, &at_once);
        let port = primary.port.to_string();
        let replica = Redis::start_with(None, &[&at_once[..], &["--replicaof", "127.0.0.1", &port]].concat());
        let mut sentinels = Vec::new();
        while sentinels.len() < SENTINELS {
            let sport = port::free_port();
            let conf = dir.write(
                format!("sentinel-{sport}.conf"),
                format!(
                    "port {sport}\nbind 127.0.0.1\nprotected-mode no\ndir {}\n\
                     sentinel monitor {MASTER} 127.0.0.1 {port} 2\n\
                     sentinel down-after-milliseconds {MASTER} {}\n\
                     sentinel failover-timeout {MASTER} 10000\n\
                     sentinel parallel-syncs {MASTER} 1\n",
                    dir.path().display(),
                    down_after.as_millis()
                ),
            );
            let mut cmd = Command::new("redis-sentinel");
            cmd.arg(&conf).args(["--loglevel", "warning"]).stdout(Stdio::null()).stderr(Stdio::inherit());
            let mut p = Process::spawn("redis-sentinel (scripts/setup.sh installs it)", &mut cmd);
            let end = Instant::now() + START_WAIT;
            while p.is_running()
                && Instant::now() < end
                && !crate::redis::ping(sport).is_some_and(|a| a.starts_with("+PONG"))
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            if p.is_running() {
                sentinels.push((p, sport));
            }
        }
        let s = Sentinel { nodes: vec![primary, replica], sentinels, down_after, _dir: dir };
        let end = Instant::now() + START_WAIT * 2;
        while !s.ready() {
            assert!(
                Instant::now() < end,
                "the replica did not sync, or the sentinels did not find it and each other, in time"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        s
    }

    /// The sentinel URLs shards are given (`--redis-sentinel`), comma-separated.
    pub fn urls(&self) -> String {
        self.sentinels.iter().map(|(_, p)| format!("redis://127.0.0.1:{p}")).collect::<Vec<_>>().join(",")
    }

    /// The port the sentinels name as the primary now.
    pub fn primary_port(&self) -> Option<u16> {
        self.sentinels.iter().find_map(|(_, p)| {
            let out = cli(*p, &["SENTINEL", "get-master-addr-by-name", MASTER]);
            out.lines().nth(1).and_then(|l| l.trim().parse().ok())
        })
    }

    /// The data node on `port`.
    ///
    /// Panics: none there.
    pub fn node(&mut self, port: u16) -> &mut Redis {
        self.nodes.iter_mut().find(|n| n.port == port).expect("a data node on that port")
    }

    /// Waits until the replica has every write the primary on `port`
    /// acknowledged so far (Redis's `WAIT 1`, up to 5 s): replication is
    /// asynchronous, and a test that kills the primary to see what the shards
    /// do, not what Redis loses, waits for this first.
    ///
    /// Panics: no data node on `port`, or no replica acknowledged within 5 s.
    pub fn wait_replicated(&self, port: u16) {
        let node = self.nodes.iter().find(|n| n.port == port).expect("a data node on that port");
        let acked = node.cli(&["WAIT", "1", "5000"]);
        assert!(acked.trim().parse::<u32>().is_ok_and(|n| n >= 1), "no replica of :{port} caught up: {acked:?}");
    }

    /// Waits until the sentinels name another primary than `old`; returns it.
    ///
    /// Panics: not within `limit`.
    pub fn wait_new_primary(&self, old: u16, limit: Duration) -> u16 {
        let end = Instant::now() + limit;
        loop {
            if let Some(p) = self.primary_port().filter(|p| *p != old) {
                if cli(p, &["ROLE"]).starts_with("master") {
                    return p;
                }
            }
            assert!(Instant::now() < end, "no failover from port {old} within {limit:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The replica holds the primary's data (its link is up), and every
    /// sentinel sees the replica and two other sentinels.
    fn ready(&self) -> bool {
        let synced = self.nodes[1].cli(&["INFO", "replication"]).lines().any(|l| l.trim() == "master_link_status:up");
        synced
            && self.sentinels.iter().all(|(_, p)| {
                let info = cli(*p, &["SENTINEL", "MASTER", MASTER]);
                let field = |name: &str| {
                    let lines: Vec<&str> = info.lines().collect();
                    lines
                        .iter()
                        .position(|l| l.trim() == name)
                        .and_then(|i| lines.get(i + 1))
                        .map(|v| v.trim().to_owned())
                };
                field("num-slaves").as_deref() == Some("1") && field("num-other-sentinels").as_deref() == Some("2")
            })
    }
}

/// `redis-cli -p PORT ARGS…`, stdout.
fn cli(port: u16, args: &[&str]) -> String {
    let mut cmd = Command::new("redis-cli");
    cmd.args(["-h", "127.0.0.1", "-p", &port.to_string()]).args(args);
    String::from_utf8_lossy(&process::run("redis-cli", &mut cmd, WAIT).stdout).into_owned()
}
