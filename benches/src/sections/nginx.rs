//! Section 12, through nginx with TLS: Redis, two shards and nginx as
//! shipped (the template rendered by `deploy/nginx/render.sh`, a self-signed
//! certificate), walker bots over `wss://` through nginx, nginx reaching the
//! shards over loopback TCP in one kind of run and over Unix sockets in the
//! other, the kinds alternating so the machine's other load falls on both.
//!
//! Once the shards hold every bot, after a settle, the CPU of every nginx
//! worker and every shard (`/proc/PID/stat`) and the shards'
//! `mino_frames_sent_total` are read, and again after the hold. Frames
//! delivered in that window = the loadgen's frames a second (measured over
//! its hold, which spans the window) × the window. CPU per frame = CPU in
//! the window ÷ those frames. Each run goes to `raw/nginx/run-N-KIND/`
//! (`summary.json`, `loadgen.json`); `raw/nginx/compare.json` has each
//! kind's runs and medians, the ratio, and whether the kinds' runs overlap.

use crate::analysis::round;
use crate::plan::Upstream;
use crate::raw::{self, CpuPerFrame, NginxCompare, NginxKind, NginxRun, Runs};
use crate::report::fmt::median;
use crate::runner::Run;
use mino_loadgen::report::WalkReport;
use mino_loadgen::scrape::scrape;
use mino_loadgen::sysinfo::{CpuTimes, MachineCpu};
use mino_testkit::nginx::{Nginx, NginxSettings, Upstream as NginxUpstream};
use mino_testkit::process::{self, children_of};
use mino_testkit::{Cert, Launch, Redis, Shard, WorkDir};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// Shard processes behind nginx.
const SHARDS: u32 = 2;

/// Joins a second.
const RAMP: u32 = 100;

/// After every bot joined, before the window.
const SETTLE: Duration = Duration::from_secs(3);

/// Runs the kinds alternating, `repeat` times, then compares them.
///
/// Errors: a part could not be started or results written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let p = run.plan.nginx.clone();
    run.log(&format!(
        "through nginx (TLS): {} bots, {} run(s) of {}",
        p.bots,
        run.plan.repeat,
        p.upstreams.iter().map(|u| u.label()).collect::<Vec<_>>().join(" and ")
    ));
    let out = run.paths.raw.join("nginx");
    std::fs::create_dir_all(&out)?;
    let mut runs = Vec::new();
    for i in 1..=run.plan.repeat {
        for kind in &p.upstreams {
            let dir = out.join(format!("run-{i}-{}", kind.label()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir)?;
            match one(run, *kind, &dir).await {
                Ok(r) => {
                    raw::write(&dir.join("summary.json"), &r)?;
                    runs.push(r);
                }
                Err(e) => run.log(&format!("nginx: run {i} over {} failed: {e:#}", kind.label())),
            }
        }
    }
    raw::write(&out.join("compare.json"), &compare(&runs))
}

/// CPU of `pids` so far, summed.
pub fn cpu(pids: &[u32]) -> CpuTimes {
    pids.iter()
        .filter_map(|p| process::cpu(*p))
        .fold(CpuTimes::default(), |a, c| CpuTimes { user: a.user + c.user, system: a.system + c.system })
}

/// RSS of `pids` now, summed, bytes.
pub fn rss(pids: &[u32]) -> u64 {
    pids.iter().filter_map(|p| process::rss_bytes(*p)).sum()
}

/// The shards' summed value of `series`.
pub async fn sum(shards: &[Shard], series: &str) -> f64 {
    let mut total = 0.0;
    for s in shards {
        let addr = s.admin.unwrap_or(s.addr);
        if let Ok(m) = scrape(&format!("http://{addr}/metrics")).await {
            total += m.value(series);
        }
    }
    total
}

/// The load averages `uptime` prints ("0.52, 0.61, 0.70").
pub fn load_average() -> String {
    let up = crate::machine::uptime();
    up.split_once("load average:").map_or(up.clone(), |(_, l)| l.trim().to_owned())
}

/// One measured run with the shards on `kind`; writes `dir/loadgen.json`.
async fn one(run: &Run, kind: Upstream, dir: &Path) -> anyhow::Result<NginxRun> {
    let p = &run.plan.nginx;
    let load_before = load_average();
    let work = WorkDir::new("nginx-bench");
    let redis = Redis::start();
    let mut shards = Vec::new();
    for id in 1..=SHARDS {
        let listen = match kind {
            Upstream::Tcp => "127.0.0.1:0".to_owned(),
            Upstream::Unix => format!("unix:{}", work.join(format!("shard-{id}.sock")).display()),
        };
        let (id, url) = (id.to_string(), redis.url());
        let mut args = vec!["--shard-id", &id, "--redis-url", &url, "--busy-lateness-ms", "0"];
        if kind == Upstream::Tcp {
            args.extend(["--admin-listen", "127.0.0.1:0"]);
        }
        let launch =
            Launch { listen, log: Some((work.join(format!("shard-{id}.log")), "warn".into())), ..Launch::default() };
        let shard = Shard::launch(run.binary("mino-server"), &args, &launch);
        shard.wait_ready().await;
        shards.push(shard);
    }
    let cert = Cert::self_signed(work.path());
    let static_root = work.mkdir("client");
    work.write("client/index.html", "<!doctype html><title>mino bench</title>\n");
    let connections = p.bots * 2 + 1024;
    let mut settings = NginxSettings::new(shards.iter().map(NginxUpstream::from), static_root, cert.clone());
    settings.workers = "auto".into();
    settings.connections = connections;
    settings.nofile = connections * 2;
    let nginx = Nginx::start(&settings, &work);

    let json = dir.join("loadgen.json");
    let hold_s = SETTLE.as_secs() + p.hold.as_secs() + 5;
    let mut args: Vec<String> = vec!["walk".into()];
    if p.direct {
        for s in &shards {
            args.extend(["--url".to_owned(), s.ws_url()]);
        }
    } else {
        args.extend([
            "--url".to_owned(),
            nginx.wss_url(),
            "--ca-file".into(),
            cert.cert.to_string_lossy().into_owned(),
        ]);
    }
    args.extend(["--bots".to_owned(), p.bots.to_string(), "--ramp".into(), RAMP.to_string()]);
    args.extend(["--duration".to_owned(), format!("{hold_s}s")]);
    for s in &shards {
        args.extend(["--server-pid".to_owned(), s.pid().to_string()]);
    }
    args.extend(["--json".to_owned(), json.to_string_lossy().into_owned(), "--quiet".into()]);
    run.status(&format!("nginx: {} upstream, {} bots", kind.label(), p.bots));
    run.record("nginx", &run.shown(run.binary("mino-loadgen"), &args));
    let mut loadgen = tokio::process::Command::new(run.binary("mino-loadgen"))
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(work.join("loadgen.out"))?)
        .stderr(std::fs::File::create(work.join("loadgen.err"))?)
        .kill_on_drop(true)
        .spawn()?;

    let deadline = Instant::now() + Duration::from_secs(u64::from(p.bots / RAMP) + 60);
    loop {
        let players = sum(&shards, "mino_players").await;
        if players >= f64::from(p.bots) {
            break;
        }
        anyhow::ensure!(
            loadgen.try_wait()?.is_none(),
            "the loadgen ended before all bots joined ({players} of {})",
            p.bots
        );
        anyhow::ensure!(Instant::now() < deadline, "only {players} of {} players joined", p.bots);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    tokio::time::sleep(SETTLE).await;
    let workers = children_of(nginx.pid());
    let pids: Vec<u32> = shards.iter().map(Shard::pid).collect();
    let (n0, s0, m0, f0, t0) =
        (cpu(&workers), cpu(&pids), MachineCpu::read()?, sum(&shards, "mino_frames_sent_total").await, Instant::now());
    tokio::time::sleep(p.hold).await;
    let (n1, s1, m1, f1) =
        (cpu(&workers), cpu(&pids), MachineCpu::read()?, sum(&shards, "mino_frames_sent_total").await);
    let window = t0.elapsed().as_secs_f64();
    let (nginx_rss, shard_rss) = (rss(&workers), rss(&pids));
    let status = loadgen.wait().await?;
    // A run that measured nothing (exit 3, 4 or 5) still reports: its verdict counts in the runs' verdict.
    anyhow::ensure!(
        mino_loadgen::outcome::Outcome::reported(status.code()),
        "the loadgen failed: {}",
        std::fs::read_to_string(work.join("loadgen.err"))?
    );
    let load_after = load_average();
    // The figures are taken: nginx, the shards and Redis are killed on drop.
    drop(nginx);

    let m: WalkReport = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    let frames = m.measured.frames_per_s * window;
    let bots = f64::from(p.bots);
    let per_frame = |t: CpuTimes, rss: u64| {
        let (u, s) = (t.user.as_secs_f64(), t.system.as_secs_f64());
        CpuPerFrame {
            cpu_s: round(u + s, 3),
            cores: round((u + s) / window, 3),
            us_per_frame: round((u + s) * 1e6 / frames, 2),
            user_us_per_frame: round(u * 1e6 / frames, 2),
            sys_us_per_frame: round(s * 1e6 / frames, 2),
            rss_bytes_per_player: (rss as f64 / bots).round() as u64,
        }
    };
    let summary = NginxRun {
        upstream: kind.label().into(),
        bots: u64::from(p.bots),
        shard_processes: u64::from(SHARDS),
        nginx_workers: settings.workers.clone(),
        through_nginx: !p.direct,
        connected: m.measured.connected as u64,
        window_s: round(window, 2),
        snapshot_gap_ms: m.measured.snapshot_gap_ms,
        relayed_snapshot_gap_ms: m.measured.relayed_snapshot_gap_ms,
        frames_per_s_delivered: m.measured.frames_per_s,
        frames_per_s_sent_by_shards: round((f1 - f0) / window, 1),
        bytes_per_s_delivered: m.measured.bytes_per_s,
        nginx: per_frame(n1.since(&n0), nginx_rss),
        shards: per_frame(s1.since(&s0), shard_rss),
        shards_by_loadgen: m.measured.server.clone(),
        loadgen_machine_busy_pct: m.measured.machine_cpu_pct,
        loadgen_cpu_pct: m.measured.loadgen_cpu_pct,
        judgeable: m.measured.judgeable,
        machine_busy_pct: round(m1.busy_pct_since(&m0), 1),
        errors: m.measured.errors,
        error_kinds: m.measured.error_kinds.clone(),
        load_average_before: load_before,
        load_average_after: load_after,
    };
    run.log(&format!(
        "nginx {}: shards {} µs a frame, nginx {} µs a frame, own gap p95 {} ms, loadgen CPU {:.0} %, machine {:.0} %",
        kind.label(),
        summary.shards.us_per_frame,
        summary.nginx.us_per_frame,
        summary.snapshot_gap_ms.p95,
        summary.loadgen_cpu_pct,
        summary.machine_busy_pct
    ));
    Ok(summary)
}

/// Each kind's runs and medians, the ratio unix ÷ tcp, and whether the two
/// kinds' runs overlap.
pub fn compare(runs: &[NginxRun]) -> NginxCompare {
    let kind = |k: &str| -> Option<NginxKind> {
        let of: Vec<&NginxRun> = runs.iter().filter(|r| r.upstream == k).collect();
        if of.is_empty() {
            return None;
        }
        let figure = |f: fn(&NginxRun) -> f64| {
            let values: Vec<f64> = of.iter().map(|r| f(r)).collect();
            Runs { median: round(median(values.iter().copied().map(Some)).unwrap_or(0.0), 2), runs: values }
        };
        Some(NginxKind {
            shard_us_per_frame: figure(|r| r.shards.us_per_frame),
            shard_user_us_per_frame: figure(|r| r.shards.user_us_per_frame),
            shard_sys_us_per_frame: figure(|r| r.shards.sys_us_per_frame),
            nginx_us_per_frame: figure(|r| r.nginx.us_per_frame),
            nginx_user_us_per_frame: figure(|r| r.nginx.user_us_per_frame),
            nginx_sys_us_per_frame: figure(|r| r.nginx.sys_us_per_frame),
            frames_per_s_delivered: figure(|r| r.frames_per_s_delivered),
            snapshot_gap_p95_ms: figure(|r| r.snapshot_gap_ms.p95),
            relayed_snapshot_gap_p95_ms: figure(|r| r.relayed_snapshot_gap_ms.p95),
            machine_busy_pct: figure(|r| r.machine_busy_pct),
            load_average: of.iter().map(|r| [r.load_average_before.clone(), r.load_average_after.clone()]).collect(),
        })
    };
    let (tcp, unix) = (kind("tcp"), kind("unix"));
    let (mut ratio, mut overlap) = (None, None);
    if let (Some(t), Some(u)) = (&tcp, &unix) {
        let pairs: [(&str, &Runs, &Runs); 2] = [
            ("shard_us_per_frame", &t.shard_us_per_frame, &u.shard_us_per_frame),
            ("nginx_us_per_frame", &t.nginx_us_per_frame, &u.nginx_us_per_frame),
        ];
        let compared: Vec<_> = pairs.into_iter().filter(|(_, t, _)| t.median != 0.0).collect();
        ratio = Some(
            compared.iter().map(|(n, t, u)| (n.to_string(), round(u.median / t.median, 3))).collect::<BTreeMap<_, _>>(),
        );
        let spans = |r: &Runs| {
            (
                r.runs.iter().copied().fold(f64::INFINITY, f64::min),
                r.runs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        };
        overlap = Some(
            compared
                .iter()
                .map(|(n, t, u)| {
                    let ((tmin, tmax), (umin, umax)) = (spans(t), spans(u));
                    (n.to_string(), tmin <= umax && umin <= tmax)
                })
                .collect::<BTreeMap<_, _>>(),
        );
    }
    NginxCompare { tcp, unix, unix_over_tcp: ratio, runs_overlap: overlap }
}
