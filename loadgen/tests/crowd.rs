//! The crowd scenario against the real server with area of interest: every
//! bot walks to one point and stays; the report says how many gathered, the
//! server's late ticks and too-slow closes (read from its /metrics), and the
//! bytes each socket got a tick against the view budget.

use mino_testkit::loadgen::{self, num};
use mino_testkit::{server_bin, Shard};

/// The loadgen binary cargo built for these tests.
const LOADGEN: &str = env!("CARGO_BIN_EXE_mino-loadgen");

#[test]
fn a_crowd_gathers_at_the_point_and_the_server_keeps_each_socket_within_its_budget() {
    // 50 bots in the cells around one point come to about 700 bytes of cell
    // frames a tick: over a 512-byte budget, which the server must meet by
    // sending the cells less often.
    let server = Shard::start(
        server_bin(),
        &["--cell-size", "100", "--speed", "240", "--view-hysteresis-ticks", "8", "--view-budget-bytes", "512"],
    );
    let run = loadgen::run(
        LOADGEN,
        &[
            "crowd",
            "--url",
            &server.ws_url(),
            "--bots",
            "50",
            "--ramp",
            "100",
            "--hold",
            "3s",
            "--point",
            "450,450",
            "--budget-bytes",
            "512",
            "-q",
        ],
    );
    let j = &run.json;
    assert_eq!(j["scenario"], "crowd");
    assert_eq!(j["point"], serde_json::json!([450.0, 450.0]));
    assert_eq!(num(j, "connected"), 50.0, "{j:#}");
    assert_eq!(num(j, "gathered"), 50.0, "everyone came: {j:#}");
    assert_eq!(num(j, "gathered_at_end"), 50.0, "and stayed");
    // The hold's ticks come from the server's /metrics (derived from the ws:// URL).
    let ticks = num(j, "late_ticks.ticks");
    assert!((40.0..=75.0).contains(&ticks), "3 s at 20 Hz: {ticks}");
    let late = num(j, "late_ticks.late_share");
    assert!((0.0..=1.0).contains(&late));
    assert_eq!(num(j, "too_slow.server"), 0.0);
    assert_eq!(num(j, "too_slow.bots"), 0.0);
    assert!(j["scrape_errors"].as_array().is_some_and(Vec::is_empty), "{j:#}");
    // Every bot got its cells, and no more than the budget a tick.
    assert_eq!(num(j, "budget.budget_bytes"), 512.0);
    assert_eq!(num(j, "budget.cell_bytes_per_tick.count"), 50.0);
    // A gathered crowd stands: its cell does not change, so a socket is
    // sent nothing or a few bytes a tick (stragglers' last steps), far below
    // the budget.
    let most = num(j, "budget.cell_bytes_per_tick.max");
    assert!((0.0..=64.0).contains(&most), "{:#}", j["budget"]);
    assert_eq!(j["budget"]["within_budget"], true);
    assert!(num(j, "budget.server_bytes_per_socket_tick") > 0.0);
    // Within the budget, yet the crowd is seen: the observers see most of it.
    assert!(num(j, "aoi.observers.players_in_view") >= 45.0, "{:#}", j["aoi"]);
    assert_eq!(
        num(j, "aoi.observers.blinks"),
        0.0,
        "a standing crowd held, never sent again, never blinks: {:#}",
        j["aoi"]
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn a_shuffling_crowd_changes_every_tick_and_is_seen_every_tick() {
    // Half of 30 bots step out every 1 to 3 s once gathered: the crowd's
    // cell changes nearly every tick, so every socket is sent a frame nearly
    // every tick of the hold (a still crowd is sent nothing), and the crowd
    // stays gathered.
    let server = Shard::start(server_bin(), &["--cell-size", "100", "--speed", "240", "--view-hysteresis-ticks", "8"]);
    let args = ["--bots", "30", "--ramp", "100", "--hold", "3s", "--point", "450,450", "-q"];
    let url = server.ws_url();
    let crowd = |extra: &[&str]| {
        let mut all = vec!["crowd", "--url", &url];
        all.extend(args);
        all.extend(extra);
        loadgen::run(LOADGEN, &all).json
    };
    let shuffled = crowd(&["--shuffle", "0.5"]);
    assert_eq!(num(&shuffled, "shuffle"), 0.5);
    assert!(num(&shuffled, "gathered_at_end") >= 28.0, "the shufflers stay near the point: {shuffled:#}");
    let ticks = num(&shuffled, "late_ticks.ticks");
    let gaps = num(&shuffled, "snapshot_gap_ms.count");
    assert!(gaps >= 0.6 * 30.0 * ticks, "a frame in most ticks for every bot: {gaps} gaps in {ticks} ticks");
    assert!(num(&shuffled, "news_gap_ms.p50") <= 60.0, "{:#}", shuffled["news_gap_ms"]);
    let still = crowd(&[]);
    assert_eq!(num(&still, "shuffle"), 0.0);
    let still_gaps = num(&still, "snapshot_gap_ms.count");
    assert!(still_gaps < gaps / 4.0, "a still crowd is sent (next to) nothing: {still_gaps} gaps against {gaps}");
}

#[test]
fn a_crowd_against_a_shard_that_does_not_answer_metrics_says_so() {
    let server = Shard::start(server_bin(), &["--cell-size", "100", "--speed", "240", "--view-hysteresis-ticks", "8"]);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr");
    let metrics = format!("http://{closed}/metrics");
    let run = loadgen::run(
        LOADGEN,
        &["crowd", "--url", &server.ws_url(), "--bots", "5", "--hold", "1s", "--metrics-url", &metrics],
    );
    let j = &run.json;
    assert_eq!(num(j, "gathered"), 5.0, "{j:#}");
    assert!(j["late_ticks"].is_null());
    assert!(j["too_slow"]["server"].is_null());
    let errors = j["scrape_errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{j:#}");
    assert!(run.stdout.contains("late ticks: no shard metrics read"), "{}", run.stdout);
}
