//! The idle scenario against the real server: idle sockets stay (their pongs
//! answer the server's pings), memory per connection is reported, and so is
//! what one chat line to all of them costs.

use mino_testkit::loadgen::{self, num};
use mino_testkit::{server_bin, Shard};

/// The loadgen binary cargo built for these tests.
const LOADGEN: &str = env!("CARGO_BIN_EXE_mino-loadgen");

#[test]
fn idle_sockets_answer_pings_and_memory_per_connection_is_reported() {
    // Pings every 200 ms and a 1 s silence limit: only pongs keep these sockets.
    let server = Shard::start(server_bin(), &["--ping-interval-ms", "200", "--peer-timeout-ms", "1000"]);
    let pid = server.pid().to_string();
    let run = loadgen::run(
        LOADGEN,
        &[
            "idle",
            "--bots",
            "20",
            "--ramp",
            "100",
            "--hold",
            "2500ms",
            "--url",
            &server.ws_url(),
            "--server-pid",
            &pid,
            "-q",
        ],
    );
    let j = &run.json;
    assert_eq!(num(j, "connected"), 20.0, "{j:#}");
    assert_eq!(num(j, "errors"), 0.0, "{j:#}");
    assert_eq!(num(j, "rtt_ms.count"), 0.0, "idle bots never ping");
    assert!(num(j, "server_rss_after_bytes") > 0.0);
    assert!(j["server_bytes_per_connection"].is_u64(), "{j:#}");
    // Read from the server's /proc in clock ticks (10 ms): 20 standing
    // players may cost less than one in the hold, so the figure is only
    // required to be there (it is absent when the server was not read).
    assert!(num(j, "server_cpu_per_tick_ms") >= 0.0, "{j:#}");
    // One chat line to all: 20 speakers take turns a tick for 4 s; every idle
    // bot hears every line (but those still on their way at the end).
    let lines = num(j, "chat_cost.lines");
    assert!(lines >= 40.0, "{j:#}");
    assert!(num(j, "chat_cost.deliveries") >= (lines - 5.0) * 20.0, "{j:#}");
    assert!(j["chat_cost"]["cpu_per_socket_us"].is_number(), "{j:#}");
    // Standing players cost nothing: once everyone is in, their cell does
    // not change, and no view frame reaches an idle socket during the hold.
    assert_eq!(num(j, "snapshot_age_ms.count"), 0.0, "{j:#}");
    assert_eq!(num(j, "snapshot_gap_ms.count"), 0.0, "{j:#}");
    // Nothing moves, so no bot observes unless asked to (observed bots wake
    // every tick to publish where they stand), and the hold starts once the
    // place has stood for --stand.
    assert!(j["aoi"]["observers"].is_null(), "{j:#}");
    assert_eq!(num(j, "stand_ms"), 4000.0, "{j:#}");
}
