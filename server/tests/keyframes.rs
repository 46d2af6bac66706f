//! Keyframes (`--keyframe-ticks`) against the real binary: a standing
//! player's cell is sent once a keyframe instead of every tick, a walking
//! one's every tick, a newcomer gets its whole view at once, and the Welcome's
//! view grace covers two keyframe periods so clients keep drawing the
//! standing.

use mino_protocol::client;
use mino_testkit::{Frame, Player, Shard};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// A 500-unit world of 125-unit cells with a view radius of 250: everyone
/// sees everyone; a keyframe every 20 ticks (1 s at 20 Hz).
const KEYFRAMES: &[&str] =
    &["--world-size", "500", "--cell-size", "125", "--view-radius", "250", "--keyframe-ticks", "20"];

/// The ticks in which `p` got any cell over `d`, and the ticks in which
/// one of them had `id` in it.
async fn ticks_over(p: &mut Player, d: Duration, id: u32) -> (BTreeSet<u32>, BTreeSet<u32>) {
    let (mut any, mut with) = (BTreeSet::new(), BTreeSet::new());
    let end = Instant::now() + d;
    while Instant::now() < end {
        let Ok(frame) = tokio::time::timeout(end - Instant::now(), p.next()).await else { break };
        if let Frame::Cell(c) = frame {
            any.insert(c.tick);
            if p.players_of(&c).iter().any(|e| e.0 == id) {
                with.insert(c.tick);
            }
        }
    }
    (any, with)
}

#[tokio::test]
async fn a_standing_player_is_sent_once_a_keyframe_and_a_walking_one_every_tick() {
    let server = Shard::start(SERVER, KEYFRAMES);
    let mut a = Player::join(&server, "Stander").await;
    let mut b = Player::join(&server, "Other").await;
    let grace = a.welcome.as_ref().expect("welcome").view_grace_ms;
    assert!(grace >= 2 * 20 * 50, "the grace covers two keyframe periods: {grace} ms");

    // Both stand (for a while first, so that their arrival is long sent): A
    // hears of B (and of itself) about once a second.
    ticks_over(&mut a, Duration::from_millis(3500), b.id()).await;
    let (any, with_b) = ticks_over(&mut a, Duration::from_secs(3), b.id()).await;
    assert!(!with_b.is_empty(), "the standing player is still sent (at keyframes)");
    assert!(any.len() <= 6, "about one write a second, not 20: frames in ticks {any:?}");

    // B walks toward the middle: A hears of it at B's cell's tier rate (every
    // tick near, every 2nd or 4th farther out), not once a keyframe.
    let (_, _, x, y) = b.own_position().await;
    let (dx, dy) = if (250.0 - x).hypot(250.0 - y) > 20.0 { (250.0 - x, 250.0 - y) } else { (1.0, 0.0) };
    b.send(client::encode_input(1, dx, dy)).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (any, with_b) = ticks_over(&mut a, Duration::from_millis(800), b.id()).await;
    b.send(client::encode_input(2, 0.0, 0.0)).await;
    assert!(with_b.len() >= 4, "a walker at its tier's rate, not once a second: {with_b:?} of {any:?}");
}

#[tokio::test]
async fn a_newcomer_gets_its_whole_view_at_once() {
    let server = Shard::start(SERVER, KEYFRAMES);
    let mut a = Player::join(&server, "Stander").await;
    // A stands long enough that its cell is quiet.
    let id = a.id();
    ticks_over(&mut a, Duration::from_millis(3500), id).await;
    let started = Instant::now();
    let mut b = Player::join(&server, "Newcomer").await;
    let seen = loop {
        if let Frame::Cell(c) = b.next().await {
            if b.players_of(&c).iter().any(|e| e.0 == a.id()) {
                break started.elapsed();
            }
        }
    };
    assert!(seen < Duration::from_millis(400), "the standing player is sent with the first frames: after {seen:?}");
}
