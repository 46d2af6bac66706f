//! Section 14, the peer: the same walking game on Colyseus
//! (`benches/peer/colyseus/`: its own schema, a MapSchema of players with
//! x, y and heading; patches at its default 20 Hz; its usual websocket
//! transport), run alternately with mino on this machine at each count.
//!
//! mino: one standalone shard (whole-shard snapshots: every socket gets
//! every player, as Colyseus's one room sends every player to every
//! client), `mino-loadgen walk` with the walker profile. Colyseus: one
//! `node server.js` process, its Node tester (`tester.js`, the official
//! SDK, on worker processes). Both are measured the same way: the server
//! process's CPU over the hold (`/proc/PID/stat`, the loadgen's or the
//! runner's reading), its RSS before the first player and at the hold's end,
//! and what the clients received over the hold (updates, bytes, the gap
//! between updates). A tester above its CPU limit (70 % of the cores it may
//! use) makes the run not judgeable, as it does mino's.

use crate::parts::{Deployment, Shards};
use crate::raw::{self, PeerRun, PeerServer};
use crate::runner::Run;
use mino_loadgen::report::WalkReport;
use mino_loadgen::sysinfo::MachineCpu;
use mino_loadgen::Summary;
use mino_testkit::process::{self, Process};
use serde::Deserialize;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// The tester's CPU limit, percent of the cores it may use (loadgen's rule).
const TESTER_LIMIT_PCT: f64 = 70.0;

/// Settling after every client joined, before the hold, s.
const SETTLE_S: u64 = 2;

/// Worker processes of the Colyseus tester (one Node thread each).
const TESTER_WORKERS: u32 = 2;

/// Colyseus clients that decode and apply every patch at the least; else 5
/// % of them (loadgen's observers). The others read each patch's protocol
/// code and length and skip applying it: with every client applying, the
/// Node tester could not keep up past about 200 players on this machine
/// (clients' seat reservations expired while it decoded).
const OBSERVERS_MIN: u32 = 20;

/// Bound on the Colyseus server printing its address.
const START_WAIT: Duration = Duration::from_secs(30);

/// What mino's bots do with each frame (for RESULTS.md).
const MINO_TESTER: &str = "mino-loadgen walk (Rust, one process): every frame verified (FlatBuffers verifier) and \
                           read for the bot's own position";

/// The Colyseus project's folder.
fn project(run: &Run) -> PathBuf {
    run.paths.root.join("benches/peer/colyseus")
}

/// Runs the section: each count, mino and Colyseus alternating (M C, then
/// C M, ...), `repeat` times.
///
/// Errors: Node or the Colyseus project cannot be set up, a part cannot be
/// started, or results not written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let version = install(run).await?;
    let p = run.plan.peer.clone();
    for i in 1..=run.plan.repeat {
        for &n in &p.players {
            let order = if i % 2 == 1 {
                [PeerServer::Mino, PeerServer::Colyseus]
            } else {
                [PeerServer::Colyseus, PeerServer::Mino]
            };
            for server in order {
                let label = format!("peer-{}-{n}-{i}", server.label());
                run.log(&format!(
                    "{label}: {n} walking players on {} (run {i} of {})",
                    server.label(),
                    run.plan.repeat
                ));
                let r = match server {
                    PeerServer::Mino => mino(run, &label, n, i).await?,
                    PeerServer::Colyseus => colyseus(run, &label, n, i, &version).await?,
                };
                run.log(&format!(
                    "{label}: {:.2} µs server CPU an update, {:.0} B a client a second, gap p95 {} ms, tester {:.0} %",
                    r.cpu_per_update_us().unwrap_or(f64::NAN),
                    r.bytes_per_client_per_s().unwrap_or(f64::NAN),
                    r.gap_ms.p95,
                    r.tester_cpu_pct
                ));
                raw::write(&run.paths.raw.join(format!("{label}.json")), &r)?;
            }
        }
    }
    Ok(())
}

/// Installs the Colyseus project's locked packages when they are missing
/// (`npm ci`); returns the Colyseus version it runs.
///
/// Errors: node or npm is missing, or `npm ci` failed.
async fn install(run: &Run) -> anyhow::Result<String> {
    let dir = project(run);
    let core = dir.join("node_modules/@colyseus/core/package.json");
    if !core.exists() {
        run.status("npm ci in benches/peer/colyseus");
        let ok = run
            .command("npm", "npm", &["ci".into(), "--prefix".into(), dir.to_string_lossy().into_owned()], None)
            .await
            .map_err(|e| anyhow::anyhow!("{e}: the peer section needs Node and npm (scripts/setup.sh)"))?;
        anyhow::ensure!(ok, "npm ci in {} failed", dir.display());
    }
    #[derive(Deserialize)]
    struct Package {
        version: String,
    }
    let p: Package = serde_json::from_str(&std::fs::read_to_string(&core)?)?;
    Ok(format!("@colyseus/core {}", p.version))
}

/// One mino run: a standalone shard, `n` walkers.
async fn mino(run: &Run, label: &str, n: u32, k: u32) -> anyhow::Result<PeerRun> {
    let p = &run.plan.peer;
    let d = Deployment::one(run, &Shards::with(&[])).await;
    let (_, shard) = &d.shards[0];
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_rss = process::rss_bytes(shard.pid()).unwrap_or(0);
    let json = run.paths.raw.join(format!("{label}.walk.json"));
    let mut args = vec!["walk".to_owned()];
    args.extend(d.targets());
    args.extend(["--bots".to_owned(), n.to_string(), "--ramp".into(), p.ramp.to_string()]);
    args.extend(["--duration".to_owned(), format!("{}s", p.hold.as_secs())]);
    args.extend(["--json".to_owned(), json.to_string_lossy().into_owned(), "-q".into()]);
    run.status(&format!("{label}: mino-loadgen walk --bots {n}"));
    let log = run.paths.raw.join(format!("logs/{label}-loadgen.log"));
    if !run.command(label, run.binary("mino-loadgen"), &args, Some(&log)).await? {
        run.log(&format!("{label}: the loadgen failed (see {})", log.display()));
    }
    d.stop(run, label);
    let r: WalkReport = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    let m = &r.measured;
    let server = m.server.as_ref().ok_or_else(|| anyhow::anyhow!("{label}: no server figures (--server-pid)"))?;
    Ok(PeerRun {
        server: PeerServer::Mino,
        version: crate::machine::commit(&run.paths.root),
        tester: MINO_TESTER.into(),
        run: k,
        players: u64::from(n),
        connected: m.connected as u64,
        seconds: m.seconds,
        updates: (m.ticks_per_s * m.seconds * m.connected as f64).round() as u64,
        bytes: (m.bytes_per_s * m.seconds).round() as u64,
        gap_ms: m.snapshot_gap_ms,
        server_user_s: server.cpu_user_s,
        server_sys_s: server.cpu_sys_s,
        server_rss_idle_bytes: idle_rss,
        server_rss_bytes: server.rss_bytes,
        tester_cpu_pct: m.loadgen_cpu_pct,
        machine_cpu_pct: m.machine_cpu_pct,
        judgeable: m.judgeable,
    })
}

/// What the Colyseus tester reports at the end of its hold (`held`).
#[derive(Debug, Deserialize)]
struct Held {
    connected: u64,
    seconds: f64,
    updates: u64,
    bytes: u64,
    gap_ms: Summary,
    tester_cpu_pct: f64,
    decoding_clients: u64,
    state_players_mean: Option<f64>,
}

/// One tester event line.
#[derive(Debug, Deserialize)]
struct Event {
    event: String,
}

/// One Colyseus run: `node server.js`, `n` players of its tester.
async fn colyseus(run: &Run, label: &str, n: u32, k: u32, version: &str) -> anyhow::Result<PeerRun> {
    let p = &run.plan.peer;
    let dir = project(run);
    let log = run.paths.raw.join(format!("logs/{label}-server.log"));
    let mut server = Process::spawn(
        "colyseus",
        Command::new("node")
            .arg("server.js")
            .args(["--port", "0"])
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log)?),
    );
    run.record(label, "node benches/peer/colyseus/server.js --port 0");
    let stdout = server.child_mut().stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?;
    let url = listening(stdout).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let pid = server.pid();
    let idle_rss = process::rss_bytes(pid).unwrap_or(0);
    let json = run.paths.raw.join(format!("{label}.tester.json"));
    let observers = (n / 20).max(OBSERVERS_MIN).min(n);
    let args: Vec<String> = [
        "tester.js",
        "--url",
        &url,
        "--players",
        &n.to_string(),
        "--ramp",
        &p.ramp.to_string(),
        "--settle",
        &SETTLE_S.to_string(),
        "--hold",
        &p.hold.as_secs().to_string(),
        "--workers",
        &TESTER_WORKERS.to_string(),
        "--decode",
        "observers",
        "--observers",
        &observers.to_string(),
        "--json",
        &json.to_string_lossy(),
    ]
    .map(String::from)
    .to_vec();
    run.record(label, &format!("node benches/peer/colyseus/{}", run.shown("", &args).trim_start()));
    run.status(&format!("{label}: node tester.js --players {n}"));
    let mut tester = tokio::process::Command::new("node")
        .args(&args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(run.paths.raw.join(format!("logs/{label}-tester.log")))?)
        .kill_on_drop(true)
        .spawn()?;
    let mut lines = BufReader::new(tester.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?).lines();
    let (mut before, mut held) = (None, None);
    // Joining, settling, the hold, and a margin; then the tester is given
    // up (killed on drop) and the run reports what it has.
    let bound = Duration::from_secs(u64::from(n / p.ramp.max(1)) + 60 + SETTLE_S + p.hold.as_secs() + 30);
    let deadline = tokio::time::Instant::now() + bound;
    while held.is_none() {
        let Ok(line) = tokio::time::timeout_at(deadline, lines.next_line()).await else {
            run.log(&format!("{label}: the tester did not finish within {bound:?}"));
            break;
        };
        let Some(line) = line? else { break };
        let Ok(e) = serde_json::from_str::<Event>(&line) else { continue };
        match e.event.as_str() {
            "hold" => before = Some((process::cpu(pid), MachineCpu::read()?)),
            "held" => {
                let after = (process::cpu(pid), MachineCpu::read()?, process::rss_bytes(pid));
                held = Some((serde_json::from_str::<Held>(&line)?, after));
            }
            _ => {}
        }
    }
    // Its clients leave, bounded: a swamped server may never answer them.
    if tokio::time::timeout(Duration::from_secs(20), tester.wait()).await.is_err() {
        run.log(&format!("{label}: the tester's clients did not leave within 20 s; it is killed"));
        let _ = tester.kill().await;
    }
    server.stop(Duration::from_secs(5));
    let (Some((cpu0, m0)), Some((h, (cpu1, m1, rss)))) = (before, held) else {
        anyhow::bail!("{label}: the tester ended without measuring (see raw/logs/{label}-tester.log)");
    };
    let (Some(cpu0), Some(cpu1)) = (cpu0, cpu1) else { anyhow::bail!("{label}: the server process was gone") };
    let cpu = cpu1.since(&cpu0);
    if h.connected < u64::from(n) {
        run.log(&format!("{label}: {} of {n} players joined", h.connected));
    }
    let observed = h.state_players_mean.map_or(String::new(), |v| format!(", their state held {v:.0} players"));
    Ok(PeerRun {
        server: PeerServer::Colyseus,
        version: version.into(),
        tester: format!(
            "node tester.js ({TESTER_WORKERS} worker processes, the official SDK @colyseus/sdk): every patch received, \
             timed and its protocol code read; {} of the {} clients (5 %, at least 20) decoded and applied every \
             patch{observed}, the others skipped applying (with every client applying, the Node tester fell behind \
             past about 200 players on this machine)",
            h.decoding_clients, h.connected
        ),
        run: k,
        players: u64::from(n),
        connected: h.connected,
        seconds: h.seconds,
        updates: h.updates,
        bytes: h.bytes,
        gap_ms: h.gap_ms,
        server_user_s: cpu.user.as_secs_f64(),
        server_sys_s: cpu.system.as_secs_f64(),
        server_rss_idle_bytes: idle_rss,
        server_rss_bytes: rss.unwrap_or(0),
        tester_cpu_pct: h.tester_cpu_pct,
        machine_cpu_pct: m1.busy_pct_since(&m0),
        judgeable: h.tester_cpu_pct <= TESTER_LIMIT_PCT,
    })
}

/// The server's address from its "colyseus listening on ws://HOST:PORT"
/// line; its stdout is drained to its end on a thread of its own, so that
/// it never blocks (or breaks) on a full or closed pipe.
async fn listening(stdout: std::process::ChildStdout) -> anyhow::Result<String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let mut tx = Some(tx);
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.trim().strip_prefix("colyseus listening on ") {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(url.to_owned());
                }
            }
        }
    });
    match tokio::time::timeout(START_WAIT, rx).await {
        Ok(Ok(url)) => Ok(url),
        Ok(Err(_)) => anyhow::bail!("colyseus exited before listening"),
        Err(_) => anyhow::bail!("colyseus printed no address within {START_WAIT:?}"),
    }
}
