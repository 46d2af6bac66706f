//! `lossy`: issue 28's loss figure. Walkers on one shard behind a link that
//! loses packets and delays them (the test kit's [`mino_testkit::link`]: a
//! private network namespace, loopback addresses, a TUN device), once over
//! websockets (TCP: a lost segment holds every later frame until it is
//! resent) and once over WebTransport (view frames as datagrams, deltas the
//! bots check, asking for a resync when one was missed: a lost one costs
//! its tick), alternating, in one run. Reports, median over the
//! rounds: each transport's own-shard snapshot gap p99 and the longest
//! freeze p99 (the longest gap a bot saw in each 10 s, `mino_loadgen::freeze`).
//! WebTransport runs three times a round: with the shard's defaults (CUBIC,
//! its window floored at 16 KiB), with CUBIC as quinn has it
//! (`--webtransport-window-floor-bytes 0`, the floor's control) and with
//! `--webtransport-congestion bbr`.
//!
//! ```text
//! cargo build --release -p mino-server -p mino-loadgen -p mino-benches --bin lossy
//! target/release/lossy --rounds 3 --out benches/results/raw/lossy
//! ```
//!
//! Needs root (a network namespace and a TUN device; see the link's docs).
//! The shard is section 16's (cells of 100, a view radius of 400, walkers
//! at `--density 4`); the loadgen and the shard run inside the namespace,
//! the loadgen dialling the far side of the link. Loss is drawn for each
//! packet either way, so a round trip loses about twice the figure.

use clap::Parser;
use mino_benches::raw::{self, Lossy, LossyRun};
use mino_benches::sections::webtransport::{shard_flags, DENSITY};
use mino_loadgen::report::WalkReport;
use mino_testkit::link::{self, Link, LinkArgs, FAR, NEAR};
use mino_testkit::{Launch, Shard, WorkDir};
use std::path::PathBuf;

/// Flags.
#[derive(Parser, Debug, Clone)]
struct Args {
    /// The server binary (default: mino-server beside this program, where
    /// the same cargo build put it, CARGO_TARGET_DIR or target/).
    #[arg(long, default_value_os_t = mino_testkit::shard::bin_dir().join("mino-server"))]
    server: PathBuf,
    /// The loadgen binary (default: mino-loadgen beside this program).
    #[arg(long, default_value_os_t = mino_testkit::shard::bin_dir().join("mino-loadgen"))]
    loadgen: PathBuf,
    /// Walkers a run.
    #[arg(long, default_value_t = 200)]
    bots: u32,
    /// Rounds (each runs both transports; medians are reported).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// The measured hold of each run, seconds (the freeze is sampled every 10 s).
    #[arg(long, default_value_t = 30)]
    hold_s: u64,
    /// The link.
    #[command(flatten)]
    link: LinkArgs,
    /// Where to write `lossy.json` (`mino_benches::raw::Lossy`: the link
    /// and each run; the report takes medians).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// A kind of run: a transport, and for WebTransport the shard's
/// congestion controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Websockets, over TCP.
    Tcp,
    /// WebTransport, over QUIC with the default congestion controller (CUBIC,
    /// its window floored at the default `--webtransport-window-floor-bytes`).
    Quic,
    /// WebTransport, CUBIC as quinn has it: `--webtransport-window-floor-bytes 0`
    /// (the control of the floor).
    QuicUnfloored,
    /// WebTransport, over QUIC with `--webtransport-congestion bbr`.
    QuicBbr,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Tcp, Kind::Quic, Kind::QuicUnfloored, Kind::QuicBbr];

    fn label(self) -> &'static str {
        match self {
            Kind::Tcp => "websocket",
            Kind::Quic => "webtransport",
            Kind::QuicUnfloored => "webtransport-no-floor",
            Kind::QuicBbr => "webtransport-bbr",
        }
    }

    /// loadgen's `--transport`.
    fn transport(self) -> &'static str {
        match self {
            Kind::Tcp => "websocket",
            Kind::Quic | Kind::QuicUnfloored | Kind::QuicBbr => "webtransport",
        }
    }

    /// The shard's congestion controller.
    fn congestion(self) -> &'static str {
        match self {
            Kind::QuicBbr => "bbr",
            Kind::Tcp | Kind::Quic | Kind::QuicUnfloored => "cubic",
        }
    }

    /// The shard's `--webtransport-window-floor-bytes`, when not its default.
    fn window_floor(self) -> Option<&'static str> {
        (self == Kind::QuicUnfloored).then_some("0")
    }
}

/// A free port on `NEAR` (the namespace is this process's alone).
fn free_udp_port() -> u16 {
    let s = std::net::UdpSocket::bind((NEAR, 0)).expect("a UDP port on the link's near address");
    s.local_addr().expect("its address").port()
}

/// One run of `transport`'s walkers through the link.
async fn one(args: &Args, kind: Kind, work: &WorkDir, round: usize) -> LossyRun {
    let wt_port = free_udp_port();
    let mut flags = shard_flags(args.bots, &format!("{NEAR}:{wt_port}"));
    flags.extend(["--webtransport-advertise".into(), format!("{FAR}:{wt_port}")]);
    flags.extend(["--webtransport-congestion".into(), kind.congestion().into()]);
    if let Some(floor) = kind.window_floor() {
        flags.extend(["--webtransport-window-floor-bytes".into(), floor.into()]);
    }
    let name = format!("round-{round}-{}", kind.label());
    let launch = Launch {
        listen: format!("{NEAR}:0"),
        log: Some((work.join(format!("{name}.shard.log")), "warn".into())),
        ..Launch::default()
    };
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let shard = Shard::launch(&args.server, &flags, &launch);
    shard.wait_ready().await;
    let url = format!("ws://{FAR}:{}/ws", shard.addr.port());
    let run_args: Vec<String> = vec![
        "walk".into(),
        "--url".into(),
        url,
        "--transport".into(),
        kind.transport().into(),
        "--bots".into(),
        args.bots.to_string(),
        "--ramp".into(),
        "50".into(),
        "--duration".into(),
        format!("{}s", args.hold_s),
        "--density".into(),
        DENSITY.to_string(),
        "--observers".into(),
        "0".into(),
        // The kernel's source address, NEAR: the link reflects packets to
        // their source, where the shard must be (not 127.0.0.x).
        "--source-addrs".into(),
        "0".into(),
        "--quiet".into(),
    ];
    let loadgen = args.loadgen.clone();
    let report = tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = run_args.iter().map(String::as_str).collect();
        mino_testkit::loadgen::run(&loadgen, &refs).json
    })
    .await
    .expect("the loadgen ran");
    drop(shard);
    let report: WalkReport = serde_json::from_value(report).expect("the loadgen's report");
    let m = report.measured;
    let run = LossyRun {
        kind: kind.label().into(),
        connected: m.connected as u64,
        errors: m.errors,
        error_kinds: m.error_kinds,
        snapshot_gap_ms: m.snapshot_gap_ms,
        longest_freeze_ms: m.longest_freeze_ms,
        bytes_per_s_a_player: (m.bytes_per_s / (m.connected.max(1) as f64)).round(),
        loadgen_cpu_pct: m.loadgen_cpu_pct,
        judgeable: m.judgeable,
    };
    eprintln!("lossy: {run:?}");
    run
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

async fn run(args: Args) {
    let link = Link::start(args.link.impairment()).expect("the lossy link starts");
    let work = WorkDir::new("lossy-bench");
    let mut runs = Vec::new();
    for round in 0..args.rounds {
        let mut order = Kind::ALL;
        order.rotate_left(round % Kind::ALL.len());
        for kind in order {
            runs.push(one(&args, kind, &work, round + 1).await);
        }
    }
    let counts = link.counts();
    let lossy = Lossy {
        bots: args.bots,
        hold_s: args.hold_s,
        loss_pct_each_way: args.link.loss_pct,
        rtt_ms: args.link.rtt_ms,
        jitter_ms: args.link.jitter_ms,
        packets_passed: counts.passed,
        packets_dropped: counts.dropped,
        runs,
    };
    println!(
        "| kind | {} walkers, {} % loss each way, {} ms round trip: gap p99 (median) | longest freeze p99 (median) | runs (gap p99 / freeze p99, ms) |",
        args.bots, args.link.loss_pct, args.link.rtt_ms
    );
    println!("|---|---|---|---|");
    for t in Kind::ALL.map(Kind::label) {
        let mine: Vec<&LossyRun> = lossy.runs.iter().filter(|r| r.kind == t).collect();
        let each: Vec<String> =
            mine.iter().map(|r| format!("{:.0} / {:.0}", r.snapshot_gap_ms.p99, r.longest_freeze_ms.p99)).collect();
        println!(
            "| {t} | {:.1} ms | {:.1} ms | {} |",
            median(mine.iter().map(|r| r.snapshot_gap_ms.p99).collect()),
            median(mine.iter().map(|r| r.longest_freeze_ms.p99).collect()),
            each.join(", ")
        );
    }
    println!(
        "link: {} packets passed, {} dropped ({:.2} %)",
        counts.passed,
        counts.dropped,
        100.0 * counts.dropped as f64 / (counts.passed + counts.dropped).max(1) as f64
    );
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out).expect("the output folder");
        raw::write(&out.join("lossy.json"), &lossy).expect("lossy.json written");
    }
}

fn main() {
    let args = Args::parse();
    // Before the runtime's threads start: the whole process, and what it
    // starts, in a network namespace of its own.
    if let Err(e) = link::isolate() {
        eprintln!("lossy: a private network namespace is needed (run as root): {e}");
        std::process::exit(2);
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    rt.block_on(run(args));
}
