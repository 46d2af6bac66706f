//! A bot's input moves it at the server's speed, and snapshots come at 20 Hz.

use mino_protocol::client;
use mino_testkit::{Frame, Player, Shard};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// The next snapshot that lists the player (a full-forms player is in every
/// tick's snapshot): (tick, time ms, x, y).
async fn own_snapshot(c: &mut Player) -> (u64, u64, f32, f32) {
    let me = c.id();
    c.until(|f| match f {
        Frame::Snapshot { tick, time_ms, players, .. } => {
            players.iter().find(|p| p.0 == me).map(|p| (*tick, *time_ms, p.1, p.2))
        }
        _ => None,
    })
    .await
}

/// Reads the player's snapshots until one at least `ms` of server time
/// after `t0`; returns the last one and how many ticks ran meanwhile (one
/// snapshot each: a tick the server skipped, late on a loaded machine, moves
/// nobody and sends nothing).
async fn walk_for(c: &mut Player, t0: u64, ms: u64) -> ((u64, u64, f32, f32), u32) {
    let mut ran = 0;
    loop {
        let last = own_snapshot(c).await;
        ran += 1;
        if last.1 >= t0 + ms {
            return (last, ran);
        }
    }
}

#[tokio::test]
async fn input_moves_player_at_expected_speed() {
    let server = Shard::start(SERVER, &["--speed", "100", "--world-size", "10000"]);
    let mut c = Player::join(&server, "Walker").await;
    let (_, t0, x0, y0) = own_snapshot(&mut c).await;
    // Toward the far side, so no wall stops it within the second.
    let dir = if x0 < 5000.0 { 1.0 } else { -1.0 };
    c.send(client::encode_input(1, dir, 0.0)).await;
    // Let it walk for about a second, measured in server time: 5 units a
    // tick that ran.
    let ((_, t1, x1, y1), ran) = walk_for(&mut c, t0, 1000).await;
    c.send(client::encode_input(2, 0.0, 0.0)).await;
    let secs = (t1 - t0) as f32 / 1000.0;
    let expected = 100.0 / 20.0 * ran as f32;
    // One tick of slack: the input lands between two ticks.
    let moved = (x1 - x0) * dir;
    assert!(
        (moved - expected).abs() <= 100.0 * 0.05 + 0.5,
        "moved {moved} in {ran} ticks ({secs}s), expected {expected}"
    );
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
    let (_, t0, x0, y0) = own_snapshot(&mut c).await;
    // Toward the far quadrant, so no wall stops it within the second.
    let (sx, sy) = (if x0 < 5000.0 { 1.0 } else { -1.0 }, if y0 < 5000.0 { 1.0 } else { -1.0 });
    c.send(client::encode_input(1, 5.0 * sx, 5.0 * sy)).await;
    let ((_, _, x1, y1), ran) = walk_for(&mut c, t0, 1000).await;
    let dist = ((x1 - x0).powi(2) + (y1 - y0).powi(2)).sqrt();
    let expected = 100.0 / 20.0 * ran as f32;
    assert!((dist - expected).abs() <= 6.0, "walked {dist}, expected about {expected}");
    assert!(((x1 - x0) * sx - (y1 - y0) * sy).abs() < 1.0, "diagonal");
}

#[tokio::test]
async fn snapshots_arrive_at_20_hz_with_consecutive_ticks() {
    let server = Shard::start(SERVER, &[]);
    let mut c = Player::join(&server, "Clock").await;
    let mut arrivals = Vec::new();
    let mut ticks = Vec::new();
    let stalls = server.metric("mino_ticks_skipped_total").await;
    while arrivals.len() < 41 {
        if let Frame::Snapshot { tick, .. } = c.next().await {
            arrivals.push(std::time::Instant::now());
            ticks.push(tick);
        }
    }
    // Ticks follow the wall clock at 20 Hz, and every tick that ran was
    // sent: a tick missing from the row is one the server says it skipped
    // (late on a loaded machine: it does not try to catch up), or at most
    // two more.
    let stalls = server.metric("mino_ticks_skipped_total").await - stalls;
    let span = arrivals[40].duration_since(arrivals[0]).as_secs_f64();
    let rate = (ticks[40] - ticks[0]) as f64 / span;
    assert!((17.0..=23.0).contains(&rate), "tick rate {rate} Hz");
    let missing: u64 = ticks.windows(2).map(|w| w[1] - w[0] - 1).sum();
    assert!(missing as f64 <= stalls + 2.0, "{missing} ticks missing, {stalls} skipped by the server: {ticks:?}");
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

/// Sends `seq` walking `dir_x` (0: still), then a Ping; once its Pong is
/// back (the input was read before it), the own entry two ticks on.
async fn input_then_settle(c: &mut Player, seq: u32, dir_x: f32) -> mino_loadgen::event::PlayerPos {
    c.send(client::encode_input(seq, dir_x, 0.0)).await;
    let stamp = f64::from(seq % 1000);
    c.send(client::encode_ping(stamp)).await;
    c.until(|f| matches!(f, Frame::Pong(t) if *t == stamp).then_some(())).await;
    let (first, _) = c.own_entry().await;
    loop {
        let (tick, entry) = c.own_entry().await;
        if tick >= first + 2 {
            return entry;
        }
    }
}

/// Inputs apply in the order the client numbered them, in serial number
/// arithmetic over 32 bits (RFC 1982): an Input not newer than the last
/// applied (older, or the same again) is ignored, so the echo never goes
/// backwards; across the wrap from 2^32 - 1 to 0 a newer one applies, and
/// one from before the wrap is then older.
#[tokio::test]
async fn an_input_not_newer_than_the_last_applied_is_ignored_across_the_wrap() {
    let server = Shard::start(SERVER, &["--speed", "100", "--world-size", "10000"]);
    let mut c = Player::join(&server, "Seq").await;
    let (_, at) = c.own_entry().await;
    let away = if at.x < 5000.0 { 1.0 } else { -1.0 };
    let echo = |seq: u32| (seq & 0x7f) as u8;
    let steps: [(u32, f32, u32, bool, &str); 7] = [
        (0xffff_fffd, away, 0xffff_fffd, true, "the first input applies"),
        (0xffff_fffc, 0.0, 0xffff_fffd, true, "an older one is ignored"),
        (0xffff_fffd, 0.0, 0xffff_fffd, true, "the same again is ignored"),
        (2, 0.0, 2, false, "a newer one across the wrap applies"),
        (0xffff_fffe, away, 2, false, "one from before the wrap is older"),
        (1, away, 2, false, "an older one after the wrap is ignored"),
        (3, away, 3, true, "the next one applies"),
    ];
    for (seq, dir, applied, moving, what) in steps {
        let entry = input_then_settle(&mut c, seq, dir).await;
        assert_eq!((entry.input_seq, entry.moving), (echo(applied), moving), "{what} (sent {seq:#x})");
    }
}
