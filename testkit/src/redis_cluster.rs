//! A real Redis Cluster per test: six `redis-server --cluster-enabled yes`
//! on free loopback ports (each with its cluster bus port, +10000), joined by
//! `redis-cli --cluster create … --cluster-replicas 1` into three primaries
//! with a replica each. Faults made for real: a node killed (its replica
//! takes over after the node timeout), a slot migrated to another primary
//! while clients use it. Killed on drop.

use crate::process::{self, Process};
use crate::workdir::WorkDir;
use crate::{port, START_WAIT, WAIT};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Nodes of the cluster: three primaries, three replicas.
pub const NODES: usize = 6;

/// One node as `CLUSTER NODES` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Its id.
    pub id: String,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// A primary (else a replica).
    pub primary: bool,
    /// Marked failed by the cluster.
    pub failed: bool,
    /// The slot ranges it serves (primaries), inclusive.
    pub slots: Vec<(u16, u16)>,
}

/// A running cluster.
#[derive(Debug)]
pub struct RedisCluster {
    /// Each node's process (None once killed) and port.
    nodes: Vec<(Option<Process>, u16)>,
    /// The cluster node timeout.
    pub node_timeout: Duration,
    /// The user and password of `redis-cli`, when the nodes want one.
    admin: Option<(String, String)>,
    dir: WorkDir,
}

impl RedisCluster {
    /// Starts six nodes and joins them into a cluster whose failure
    /// detection takes `node_timeout`; returns once every node reports the
    /// cluster ok.
    ///
    /// Panics: redis-server or redis-cli missing, or no cluster within
    /// [`START_WAIT`].
    pub fn start(node_timeout: Duration) -> RedisCluster {
        RedisCluster::start_with(None, None, node_timeout)
    }

    /// Like [`RedisCluster::start`], each node started with the
    /// configuration file `conf` (addresses, ports, folders and the node
    /// timeout overridden), and `redis-cli` authenticating as `admin` (user,
    /// password) when the file turns the default user off.
    ///
    /// Panics: as [`RedisCluster::start`].
    pub fn start_with(conf: Option<&Path>, admin: Option<(&str, &str)>, node_timeout: Duration) -> RedisCluster {
        let dir = WorkDir::new("redis-cluster");
        let mut nodes = Vec::new();
        while nodes.len() < NODES {
            let port = bus_free_port();
            if let Some(p) = spawn_node(&dir, conf, port, node_timeout) {
                nodes.push((Some(p), port));
            }
        }
        let admin = admin.map(|(u, p)| (u.to_owned(), p.to_owned()));
        let cluster = RedisCluster { nodes, node_timeout, admin, dir };
        let mut create = Command::new("redis-cli");
        cluster.auth(&mut create);
        create.arg("--cluster").arg("create");
        for (_, port) in &cluster.nodes {
            create.arg(format!("127.0.0.1:{port}"));
        }
        create.args(["--cluster-replicas", "1", "--cluster-yes"]);
        let out = process::run("redis-cli --cluster create", &mut create, START_WAIT);
        assert!(out.status.success(), "cluster create failed: {}", String::from_utf8_lossy(&out.stdout));
        cluster.wait_ok(START_WAIT);
        cluster
    }

    /// The seed URLs shards are given (`--redis-cluster`), comma-separated.
    pub fn seeds(&self) -> String {
        self.nodes.iter().map(|(_, p)| format!("redis://127.0.0.1:{p}")).collect::<Vec<_>>().join(",")
    }

    /// The ports of the nodes still running.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().filter(|(p, _)| p.is_some()).map(|(_, port)| *port).collect()
    }

    /// The process id of the node on `port`.
    ///
    /// Panics: no running node there.
    pub fn pid(&self, port: u16) -> u32 {
        self.nodes.iter().find(|(_, p)| *p == port).and_then(|(p, _)| p.as_ref()).expect("a running node").pid()
    }

    /// Runs `redis-cli` against the node on `port`; its stdout.
    ///
    /// Panics: redis-cli gets no answer within [`WAIT`].
    pub fn cli(&self, port: u16, args: &[&str]) -> String {
        let mut cmd = Command::new("redis-cli");
        self.auth(&mut cmd);
        cmd.args(["-h", "127.0.0.1", "-p", &port.to_string()]).args(args);
        String::from_utf8_lossy(&process::run("redis-cli", &mut cmd, WAIT).stdout).into_owned()
    }

    /// The nodes as a running node sees them.
    pub fn nodes(&self) -> Vec<Node> {
        let port = self.ports()[0];
        self.cli(port, &["CLUSTER", "NODES"]).lines().filter_map(parse_node).collect()
    }

    /// The slot of `key` (or shard channel).
    pub fn slot(&self, key: &str) -> u16 {
        self.cli(self.ports()[0], &["CLUSTER", "KEYSLOT", key]).trim().parse().expect("a slot number")
    }

    /// The port of the running primary serving `slot`, as the cluster says
    /// now (None while a killed primary still holds it).
    pub fn primary_of(&self, slot: u16) -> Option<u16> {
        let running = self.ports();
        self.nodes()
            .into_iter()
            .find(|n| n.primary && !n.failed && n.slots.iter().any(|(a, b)| (*a..=*b).contains(&slot)))
            .map(|n| n.port)
            .filter(|p| running.contains(p))
    }

    /// Waits until the replica of the primary on `port` has every write the
    /// primary acknowledged so far (Redis's `WAIT 1`, up to 5 s). Replication
    /// is asynchronous: a write made within the replication lag before a
    /// primary dies is lost with it, so a test that kills a primary to see
    /// what the shards do, not what Redis loses, waits for this first.
    ///
    /// Panics: no replica acknowledged within 5 s.
    pub fn wait_replicated(&self, port: u16) {
        let acked = self.cli(port, &["WAIT", "1", "5000"]);
        assert!(acked.trim().parse::<u32>().is_ok_and(|n| n >= 1), "no replica of :{port} caught up: {acked:?}");
    }

    /// Kills the node on `port` at once (SIGKILL).
    pub fn kill(&mut self, port: u16) {
        if let Some((p, _)) = self.nodes.iter_mut().find(|(_, p)| *p == port) {
            if let Some(mut process) = p.take() {
                process.kill9();
            }
        }
    }

    /// Waits until every running node reports the cluster ok and a running
    /// primary serves `slot`; returns that primary's port.
    ///
    /// Panics: not within `limit`.
    pub fn wait_served(&self, slot: u16, limit: Duration) -> u16 {
        let end = Instant::now() + limit;
        loop {
            if let Some(port) = self.primary_of(slot).filter(|_| self.all_ok()) {
                return port;
            }
            assert!(
                Instant::now() < end,
                "slot {slot} not served by a live primary within {limit:?}: {:?}\n{}",
                self.nodes(),
                self.cli(self.ports()[0], &["CLUSTER", "INFO"])
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Moves `slot` (and its keys) to the primary on `to`, the way
    /// `redis-cli --cluster reshard` does: importing and migrating states,
    /// the keys moved with MIGRATE in batches, then the new owner announced
    /// to every primary. Clients in the middle get `ASK` and `MOVED`.
    ///
    /// Panics: a step fails.
    pub fn migrate_slot(&self, slot: u16, to: u16) {
        let nodes = self.nodes();
        let from = nodes.iter().find(|n| n.primary && n.slots.iter().any(|(a, b)| (*a..=*b).contains(&slot)));
        let from = from.expect("a primary serves the slot").clone();
        let target = nodes.iter().find(|n| n.port == to && n.primary).expect("the target is a primary").clone();
        let s = slot.to_string();
        let ok = |out: String, what: &str| assert!(out.trim() == "OK", "{what}: {out}");
        ok(self.cli(to, &["CLUSTER", "SETSLOT", &s, "IMPORTING", &from.id]), "importing");
        ok(self.cli(from.port, &["CLUSTER", "SETSLOT", &s, "MIGRATING", &target.id]), "migrating");
        loop {
            let keys = self.cli(from.port, &["CLUSTER", "GETKEYSINSLOT", &s, "100"]);
            let keys: Vec<&str> = keys.lines().filter(|k| !k.is_empty()).collect();
            if keys.is_empty() {
                break;
            }
            let port = to.to_string();
            let mut args = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "REPLACE", "KEYS"];
            args.extend(keys);
            let out = self.cli(from.port, &args);
            assert!(out.trim() == "OK" || out.trim() == "NOKEY", "migrate: {out}");
        }
        ok(self.cli(to, &["CLUSTER", "SETSLOT", &s, "NODE", &target.id]), "node on the target");
        ok(self.cli(from.port, &["CLUSTER", "SETSLOT", &s, "NODE", &target.id]), "node on the source");
        for n in nodes.iter().filter(|n| n.primary && !n.failed && n.port != to && n.port != from.port) {
            self.cli(n.port, &["CLUSTER", "SETSLOT", &s, "NODE", &target.id]);
        }
    }

    /// Adds the admin's user and password to a `redis-cli` command.
    fn auth(&self, cmd: &mut Command) {
        if let Some((user, pass)) = &self.admin {
            cmd.args(["--user", user, "--pass", pass, "--no-auth-warning"]);
        }
    }

    /// Every running node says `cluster_state:ok`.
    fn all_ok(&self) -> bool {
        self.ports().iter().all(|p| self.cli(*p, &["CLUSTER", "INFO"]).contains("cluster_state:ok"))
    }

    /// Waits until [`RedisCluster::all_ok`] and every slot is served.
    fn wait_ok(&self, limit: Duration) {
        let end = Instant::now() + limit;
        while !(self.all_ok() && self.ports().iter().all(|p| self.agrees(*p))) {
            assert!(Instant::now() < end, "the cluster did not come up within {limit:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The node on `port` knows a primary for every slot and, if it is a
    /// replica, has synced with its primary (a replica that never synced
    /// cannot take over).
    fn agrees(&self, port: u16) -> bool {
        let info = self.cli(port, &["CLUSTER", "INFO"]);
        let replication = self.cli(port, &["INFO", "replication"]);
        let synced = replication.contains("role:master") || replication.contains("master_link_status:up");
        synced && info.lines().any(|l| l.trim() == "cluster_slots_ok:16384")
    }

    /// The folder of the nodes' files.
    pub fn dir(&self) -> &WorkDir {
        &self.dir
    }
}

/// A free port whose cluster bus port (+10000) is free too.
fn bus_free_port() -> u16 {
    loop {
        let p = port::free_port();
        if p < 55_000 && TcpListener::bind(("127.0.0.1", p + 10_000)).is_ok() {
            return p;
        }
    }
}

/// Starts a cluster node on `port` (with the configuration file `conf`, if
/// any); None when it could not take the port.
fn spawn_node(dir: &WorkDir, conf: Option<&Path>, port: u16, node_timeout: Duration) -> Option<Process> {
    let nodes_conf = dir.join(format!("nodes-{port}.conf"));
    let mut cmd = Command::new("redis-server");
    if let Some(conf) = conf {
        cmd.arg(conf);
    }
    cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--protected-mode", "no"])
        .args(["--cluster-enabled", "yes", "--cluster-config-file"])
        .arg(&nodes_conf)
        .args(["--cluster-node-timeout", &node_timeout.as_millis().to_string()])
        // Replicas sync at once (the default waits 5 s for more replicas).
        .args(["--repl-diskless-sync-delay", "0"])
        .args(["--save", "", "--appendonly", "no", "--loglevel", "notice", "--dir"])
        .arg(dir.path())
        .arg("--logfile")
        .arg(dir.join(format!("node-{port}.log")))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    let mut process = Process::spawn("redis-server (cluster node)", &mut cmd);
    let end = Instant::now() + START_WAIT;
    while process.is_running() && Instant::now() < end {
        if crate::redis::ping(port).is_some_and(|a| a.starts_with("+PONG") || a.starts_with("-NOAUTH")) {
            return Some(process);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// One line of `CLUSTER NODES`:
/// `id ip:port@bus flags primary-id ping pong epoch link slot…`.
pub fn parse_node(line: &str) -> Option<Node> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let port = f.get(1)?.split('@').next()?.rsplit(':').next()?.parse().ok()?;
    let flags = f.get(2)?;
    let slots = f
        .iter()
        .skip(8)
        .filter(|s| !s.starts_with('['))
        .filter_map(|s| match s.split_once('-') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => s.parse().ok().map(|x| (x, x)),
        })
        .collect();
    Some(Node {
        id: f.first()?.to_string(),
        port,
        primary: flags.contains("master"),
        failed: flags.contains("fail") && !flags.contains("fail?"),
        slots,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_nodes_lines_parse() {
        let line = "07c3 127.0.0.1:30004@40004 myself,master - 0 0 1 connected 0-5460 6000 [93->-abc]";
        let n = parse_node(line).expect("a node");
        assert_eq!((n.port, n.primary, n.failed), (30004, true, false));
        assert_eq!(n.slots, [(0, 5460), (6000, 6000)]);
        let r = parse_node("e1 127.0.0.1:30005@40005 slave,fail 07c3 0 0 1 disconnected").expect("a node");
        assert!(!r.primary && r.failed && r.slots.is_empty());
    }
}
