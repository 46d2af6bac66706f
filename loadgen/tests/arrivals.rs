//! The arrivals scenario against the real server: admission at the cap.

use mino_testkit::loadgen::{self, num};
use mino_testkit::{server_bin, Shard};

/// The loadgen binary cargo built for these tests.
const LOADGEN: &str = env!("CARGO_BIN_EXE_mino-loadgen");

#[test]
fn arrivals_past_max_players_are_busy_not_timed_out() {
    let server = Shard::start(server_bin(), &["--max-players", "5"]);
    let run = loadgen::run(
        LOADGEN,
        &["arrivals", "--bots", "12", "--rate", "60", "--hold", "1s", "--url", &server.ws_url(), "-q"],
    );
    let j = &run.json;
    assert_eq!(num(j, "bots"), 12.0);
    assert_eq!(num(j, "admitted"), 5.0, "{j:#}");
    assert_eq!(num(j, "connected"), 5.0, "{j:#}");
    assert_eq!(num(j, "busy"), 7.0, "{j:#}");
    assert_eq!(num(j, "busy_refusals"), 7.0, "{j:#}");
    assert_eq!(num(j, "timed_out"), 0.0);
    assert_eq!(num(j, "errors"), 0.0, "{j:#}");
    assert_eq!(num(j, "welcome_ms.count"), 5.0);
    assert!(num(j, "achieved_rate_per_s") > 30.0, "{j:#}");
}
