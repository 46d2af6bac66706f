//! A bot's input moves it at the server's speed, and snapshots come at 20 Hz.

use mino_protocol::client;
use mino_testkit::{Frame, Player, Shard};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn input_moves_player_at_expected_speed() {
    let server = Shard::start(SERVER, &["--speed", "100", "--world-size", "10000"]);
    let mut c = Player::join(&server, "Walker").await;
    let (_, t0, x0, y0) = c.own_position().await;
    // Toward the far side, so no wall stops it within the second.
    let dir = if x0 < 5000.0 { 1.0 } else { -1.0 };
    c.send(client::encode_input(1, dir, 0.0)).await;
    // Let it walk for about a second, measured in server time.
    let (mut t1, mut x1, mut y1) = (t0, x0, y0);
    while t1 < t0 + 1000 {
        (_, t1, x1, y1) = c.own_position().await;
    }
    c.send(client::encode_input(2, 0.0, 0.0)).await;
    let secs = (t1 - t0) as f32 / 1000.0;
    let expected = 100.0 * secs;
    // One tick of slack: the input lands between two ticks.
    let moved = (x1 - x0) * dir;
    assert!((moved - expected).abs() <= 100.0 * 0.05 + 0.5, "moved {moved} in {secs}s, expected {expected}");
    assert!((y1 - y0).abs() < 0.5, "no drift across");
    // Standing still: position stops changing.
    let (_, _, xa, _) = c.own_position().await;
    let (_, _, xb, _) = c.own_position().await;
    let (_, _, xc, _) = c.own_position().await;
    assert!((xc - xa).abs() <= 100.0 * 0.05 + 0.5 && (xc - xb).abs() < 0.01);
}

#[tokio::test]
async fn diagonal_input_is_normalized() {
    let server = Shard::start(SERVER, &["--speed", "100", "--world-size", "10000"]);
    let mut c = Player::join(&server, "Diag").await;
    let (_, t0, x0, y0) = c.own_position().await;
    // Toward the far quadrant, so no wall stops it within the second.
    let (sx, sy) = (if x0 < 5000.0 { 1.0 } else { -1.0 }, if y0 < 5000.0 { 1.0 } else { -1.0 });
    c.send(client::encode_input(1, 5.0 * sx, 5.0 * sy)).await;
    let (mut t1, mut x1, mut y1) = (t0, x0, y0);
    while t1 < t0 + 1000 {
        (_, t1, x1, y1) = c.own_position().await;
    }
    let dist = ((x1 - x0).powi(2) + (y1 - y0).powi(2)).sqrt();
    let expected = 100.0 * (t1 - t0) as f32 / 1000.0;
    assert!((dist - expected).abs() <= 6.0, "walked {dist}, expected about {expected}");
    assert!(((x1 - x0) * sx - (y1 - y0) * sy).abs() < 1.0, "diagonal");
}

#[tokio::test]
async fn snapshots_arrive_at_20_hz_with_consecutive_ticks() {
    let server = Shard::start(SERVER, &[]);
    let mut c = Player::join(&server, "Clock").await;
    let mut arrivals = Vec::new();
    let mut ticks = Vec::new();
    while arrivals.len() < 41 {
        if let Frame::Snapshot { tick, .. } = c.next().await {
            arrivals.push(std::time::Instant::now());
            ticks.push(tick);
        }
    }
    let span = arrivals[40].duration_since(arrivals[0]).as_secs_f64();
    let rate = 40.0 / span;
    assert!((17.0..=23.0).contains(&rate), "snapshot rate {rate} Hz");
    let skipped = ticks.windows(2).filter(|w| w[1] != w[0] + 1).count();
    assert!(skipped <= 2, "ticks {ticks:?}");
}

#[tokio::test]
async fn ticks_fall_on_the_wall_clocks_grid() {
    // Every shard ticks when the time since the Unix epoch is a whole number
    // of periods (50 ms at 20 Hz), so the shards of a place tick together.
    // A tick's server time is read as it runs, a little after it was due.
    let server = Shard::start(SERVER, &["--tick-hz", "20"]);
    let mut c = Player::join(&server, "Phase").await;
    let mut past_grid = Vec::new();
    for _ in 0..21 {
        let (_, time_ms, _, _) = c.own_position().await;
        past_grid.push(time_ms % 50);
    }
    past_grid.sort_unstable();
    assert!(past_grid[10] <= 5, "ms past the wall clock's 50 ms grid, median over 21 ticks: {past_grid:?}");
}
