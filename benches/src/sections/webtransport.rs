//! Section 16, WebTransport beside the websocket (issue 28): one release
//! shard with area of interest (cells of 100, a view radius of 400, a world
//! of 4 walkers a cell, as section 15's) and `--webtransport-listen`,
//! walkers at `--density 4`, in three kinds of run alternating (their order
//! rotating each repeat, so the machine's other load falls on all):
//! `webtransport` (`mino-loadgen --transport webtransport`: sessions to the
//! shard's UDP port, view frames as datagrams: deltas, the bots asking for
//! datagram deltas; full forms before e855f8c), `websocket`
//! (straight to the shard, deltas, no encryption) and `websocket-nginx`
//! (`wss://` through nginx as shipped, TLS: both encrypt, as QUIC does).
//!
//! Once the shard holds every bot, after a settle, the CPU of the shard
//! and of nginx's workers (`/proc/PID/stat`) is read, and again after the
//! hold. Delivered frames in that window = each bot's view of a tick it
//! received (the loadgen's own-shard ticks a second × bots connected) × the
//! window: a WebTransport frame cut into several datagrams is one frame, as
//! a websocket's one message is. Memory per player: the shard's RSS at the
//! window's end less before the bots joined, over the bots. Each run goes
//! to `raw/webtransport/run-N-KIND/` (`summary.json`, `loadgen.json`).

use super::nginx::{cpu, load_average, rss, sum};
use crate::analysis::round;
use crate::plan::WtKind;
use crate::raw::{self, CpuPerFrame, WebTransportRun};
use crate::runner::Run;
use mino_loadgen::report::WalkReport;
use mino_loadgen::sysinfo::{CpuTimes, MachineCpu};
use mino_testkit::nginx::{Nginx, NginxSettings, Upstream as NginxUpstream};
use mino_testkit::process::children_of;
use mino_testkit::{Cert, Launch, Shard, WorkDir};
use std::path::Path;
use std::time::{Duration, Instant};

/// Cell side, world units (section 15's).
const CELL: u32 = 100;

/// View radius, cells.
const RADIUS_CELLS: u32 = 4;

/// Walkers a cell.
pub const DENSITY: u32 = 4;

/// Joins a second (half the other sections': a QUIC handshake costs the
/// loaded machine more than a websocket's).
const RAMP: u32 = 50;

/// After the ramp, how long a run waits for every bot before measuring
/// with [`MOST_JOINED`] of them.
const JOIN_GRACE: Duration = Duration::from_secs(20);

/// The share of the bots a run measures with once [`JOIN_GRACE`] passed.
const MOST_JOINED: f64 = 0.98;

/// After every bot joined, before the window.
const SETTLE: Duration = Duration::from_secs(3);

/// Runs the kinds alternating, `repeat` times.
///
/// Errors: the output folder could not be made, or a summary written (a
/// failed run is logged and left out).
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let p = run.plan.webtransport.clone();
    let kinds: Vec<&str> = p.kinds.iter().map(|k| k.label()).collect();
    run.log(&format!(
        "webtransport: {} walkers on one shard, {} run(s) of {}",
        p.bots,
        run.plan.repeat,
        kinds.join(", ")
    ));
    let out = run.paths.raw.join("webtransport");
    std::fs::create_dir_all(&out)?;
    for i in 1..=run.plan.repeat {
        let mut order = p.kinds.clone();
        let turn = (i as usize - 1) % order.len().max(1);
        order.rotate_left(turn);
        for kind in order {
            let dir = out.join(format!("run-{i}-{}", kind.label()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir)?;
            match one(run, kind, &dir).await {
                Ok(r) => raw::write(&dir.join("summary.json"), &r)?,
                Err(e) => run.log(&format!("webtransport: run {i} of {} failed: {e:#}", kind.label())),
            }
        }
    }
    Ok(())
}

/// The shard of a run, and nginx in front of it for `websocket-nginx`.
struct Parts {
    shard: Shard,
    nginx: Option<(Nginx, Cert)>,
    _work: WorkDir,
}

/// The shard's flags for `bots` walkers: WebTransport on
/// `webtransport_listen`, area of interest (cells of [`CELL`], a view radius
/// of [`RADIUS_CELLS`]), a world of [`DENSITY`] walkers a cell, room for
/// them all. The `lossy` bench starts the same shard.
pub fn shard_flags(bots: u32, webtransport_listen: &str) -> Vec<String> {
    let side = ((f64::from(bots) / f64::from(DENSITY)).sqrt().ceil() as u32) * CELL;
    [
        "--webtransport-listen",
        webtransport_listen,
        "--cell-size",
        &CELL.to_string(),
        "--view-radius",
        &(CELL * RADIUS_CELLS).to_string(),
        "--world-size",
        &side.to_string(),
        "--max-players",
        &bots.to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// Starts the shard (and nginx) of a run of `bots` walkers.
async fn parts(run: &Run, kind: WtKind, bots: u32) -> Parts {
    let work = WorkDir::new("webtransport-bench");
    let args = shard_flags(bots, "127.0.0.1:0");
    let launch = Launch { log: Some((work.join("shard.log"), "warn".into())), ..Launch::default() };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let shard = Shard::launch(run.binary("mino-server"), &args, &launch);
    shard.wait_ready().await;
    let nginx = (kind == WtKind::WebsocketNginx).then(|| {
        let cert = Cert::self_signed(work.path());
        let static_root = work.mkdir("client");
        work.write("client/index.html", "<!doctype html><title>mino bench</title>\n");
        let connections = bots * 2 + 1024;
        let mut settings = NginxSettings::new(std::iter::once(NginxUpstream::from(&shard)), static_root, cert.clone());
        settings.workers = "auto".into();
        settings.connections = connections;
        settings.nofile = connections * 2;
        (Nginx::start(&settings, &work), cert)
    });
    Parts { shard, nginx, _work: work }
}

/// The loadgen's arguments of a run: a walk over `kind` writing `json`.
fn loadgen_args(kind: WtKind, parts: &Parts, bots: u32, hold_s: u64, json: &Path) -> Vec<String> {
    let mut args: Vec<String> = vec!["walk".into()];
    match &parts.nginx {
        Some((nginx, cert)) => args.extend([
            "--url".to_owned(),
            nginx.wss_url(),
            "--ca-file".into(),
            cert.cert.to_string_lossy().into_owned(),
        ]),
        None => args.extend(["--url".to_owned(), parts.shard.ws_url()]),
    }
    let transport = if kind == WtKind::Webtransport { "webtransport" } else { "websocket" };
    args.extend(["--transport".to_owned(), transport.into()]);
    args.extend(["--bots".to_owned(), bots.to_string(), "--ramp".into(), RAMP.to_string()]);
    args.extend(["--duration".to_owned(), format!("{hold_s}s")]);
    args.extend(["--density".to_owned(), DENSITY.to_string(), "--observers".into(), "0".into()]);
    args.extend(["--server-pid".to_owned(), parts.shard.pid().to_string()]);
    args.extend(["--json".to_owned(), json.to_string_lossy().into_owned(), "--quiet".into()]);
    args
}

/// One measured run of `kind`; writes `dir/loadgen.json`.
async fn one(run: &Run, kind: WtKind, dir: &Path) -> anyhow::Result<WebTransportRun> {
    let p = &run.plan.webtransport;
    let load_before = load_average();
    let parts = parts(run, kind, p.bots).await;
    let shards = std::slice::from_ref(&parts.shard);
    let pid = [parts.shard.pid()];
    let rss_before = rss(&pid);
    let json = dir.join("loadgen.json");
    let hold_s = SETTLE.as_secs() + p.hold.as_secs() + 5;
    let args = loadgen_args(kind, &parts, p.bots, hold_s, &json);
    run.status(&format!("webtransport: {}, {} walkers", kind.label(), p.bots));
    run.record("webtransport", &run.shown(run.binary("mino-loadgen"), &args));
    let log = dir.join("loadgen.err");
    let mut loadgen = tokio::process::Command::new(run.binary("mino-loadgen"))
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log)?)
        .kill_on_drop(true)
        .spawn()?;

    // Every bot, or after the ramp and a join timeout's retries nearly
    // every one (a handshake timed out on the loaded machine; the bot
    // retries): the run measures the bots connected, and says how many.
    let ramp_end = Instant::now() + Duration::from_secs(u64::from(p.bots / RAMP));
    let deadline = ramp_end + Duration::from_secs(60);
    loop {
        let players = sum(shards, "mino_players").await;
        let enough = Instant::now() >= ramp_end + JOIN_GRACE && players >= f64::from(p.bots) * MOST_JOINED;
        if players >= f64::from(p.bots) || enough {
            break;
        }
        anyhow::ensure!(
            loadgen.try_wait()?.is_none(),
            "the loadgen ended before the bots joined ({players} of {}): {}",
            p.bots,
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        anyhow::ensure!(Instant::now() < deadline, "only {players} of {} players joined", p.bots);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    tokio::time::sleep(SETTLE).await;
    let workers = parts.nginx.as_ref().map(|(n, _)| children_of(n.pid())).unwrap_or_default();
    let datagrams = "mino_webtransport_datagrams_total";
    let (n0, s0, m0, d0, t0) =
        (cpu(&workers), cpu(&pid), MachineCpu::read()?, sum(shards, datagrams).await, Instant::now());
    tokio::time::sleep(p.hold).await;
    let (n1, s1, m1, d1) = (cpu(&workers), cpu(&pid), MachineCpu::read()?, sum(shards, datagrams).await);
    let window = t0.elapsed().as_secs_f64();
    let (nginx_rss, shard_rss) = (rss(&workers), rss(&pid));
    let status = loadgen.wait().await?;
    // A run that measured nothing (exit 3, 4 or 5) still reports: its verdict counts in the runs' verdict.
    anyhow::ensure!(
        mino_loadgen::outcome::Outcome::reported(status.code()),
        "the loadgen failed: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let load_after = load_average();
    drop(parts);

    let m: WalkReport = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    let m = &m.measured;
    let view_frames_per_s = m.ticks_per_s * m.connected as f64;
    let frames = view_frames_per_s * window;
    let bots = f64::from(p.bots);
    let per_frame = |t: CpuTimes, rss: u64| {
        let (u, s) = (t.user.as_secs_f64(), t.system.as_secs_f64());
        let per = |v: f64| if frames > 0.0 { round(v * 1e6 / frames, 2) } else { 0.0 };
        CpuPerFrame {
            cpu_s: round(u + s, 3),
            cores: round((u + s) / window, 3),
            us_per_frame: per(u + s),
            user_us_per_frame: per(u),
            sys_us_per_frame: per(s),
            rss_bytes_per_player: (rss as f64 / bots).round() as u64,
        }
    };
    let growth = shard_rss.saturating_sub(rss_before) / (m.connected.max(1) as u64);
    let summary = WebTransportRun {
        kind: kind.label().into(),
        bots: u64::from(p.bots),
        connected: m.connected as u64,
        window_s: round(window, 2),
        snapshot_gap_ms: m.snapshot_gap_ms,
        socket_gap_ms: m.socket_gap_ms,
        ticks_per_s: m.ticks_per_s,
        view_frames_per_s_delivered: round(view_frames_per_s, 1),
        messages_per_s_delivered: m.frames_per_s,
        bytes_per_s_delivered: m.bytes_per_s,
        datagrams_per_s_sent: round((d1 - d0) / window, 1),
        shard: per_frame(s1.since(&s0), shard_rss),
        nginx: (!workers.is_empty()).then(|| per_frame(n1.since(&n0), nginx_rss)),
        shard_rss_growth_per_player_bytes: growth,
        loadgen_cpu_pct: m.loadgen_cpu_pct,
        judgeable: m.judgeable,
        machine_busy_pct: round(m1.busy_pct_since(&m0), 1),
        errors: m.errors,
        error_kinds: m.error_kinds.clone(),
        load_average_before: load_before,
        load_average_after: load_after,
    };
    run.log(&format!(
        "webtransport {}: shard {} µs a frame{}, gap p95 {} ms, {} KB a player, loadgen CPU {:.0} %, machine {:.0} %",
        kind.label(),
        summary.shard.us_per_frame,
        summary.nginx.as_ref().map_or(String::new(), |n| format!(" + nginx {} µs", n.us_per_frame)),
        summary.snapshot_gap_ms.p95,
        summary.shard_rss_growth_per_player_bytes / 1024,
        summary.loadgen_cpu_pct,
        summary.machine_busy_pct
    ));
    Ok(summary)
}
