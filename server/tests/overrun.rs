//! A shard whose every tick takes longer than a period (a fail point makes
//! each tick sleep past it, as sustained overload would) still hears its
//! stop: SIGTERM closes its players and ends it at once, not after the drain
//! timeout, and welcomes the players who join meanwhile. Each tick is
//! followed by a look at the stop, the drain, the commands and the sockets.
//!
//! Needs the `failpoints` feature (`cargo test -p mino-server --features
//! failpoints --test overrun`, which scripts/test.sh runs).

use mino_testkit::{Player, Shard, Signal};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn a_shard_whose_ticks_overrun_their_period_still_stops_at_once() {
    // 20 Hz: a period of 50 ms; every tick sleeps 70 ms.
    let env = [("FAILPOINTS".to_owned(), "tick=sleep(70)".to_owned())];
    let mut server = Shard::start_with_env(SERVER, &["--busy-lateness-ms", "0"], &env);
    server.wait_ready().await;
    let mut ada = Player::join(&server, "Ada").await;
    server.wait_ticks(10).await;
    // Every tick overdue, the sockets are still heard between two: players
    // joining now are welcomed within a few ticks (a loop that took the
    // overdue tick first every time left them waiting for 10 s and more).
    for name in ["Bo", "Cy", "Di"] {
        let asked = Instant::now();
        let _player = Player::join(&server, name).await;
        assert!(asked.elapsed() < Duration::from_secs(2), "{name} welcomed {:?} after its hello", asked.elapsed());
    }
    let asked = Instant::now();
    server.signal(Signal::SIGTERM);
    let status = server.wait_exit(Duration::from_secs(20)).expect("exited");
    let took = asked.elapsed();
    assert!(status.success(), "{status:?}");
    // The drain timeout is 30 s; a loop that only ticked would wait for it.
    assert!(took < Duration::from_secs(5), "stopped {took:?} after SIGTERM");
    assert!(ada.closed().await.0.is_some(), "the player was closed");
}
