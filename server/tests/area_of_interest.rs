//! Area of interest against the real binary: a socket gets only the cells
//! near its player; far players are unseen, an approaching one appears before
//! it is within the view radius (the prefetch ring), a leaving one stops
//! being sent, walking back and forth across cell borders never drops a
//! player from view, a crowd in one cell stays within the socket budget, and
//! names come on request.

use mino_protocol::client;
use mino_testkit::{Frame, Player, Shard};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// A 1,000-unit world of 125-unit cells, a view radius of two cells, and
/// fast walkers (300 units/s, the most 125-unit cells allow), so a test
/// crosses the world in a few seconds.
const AOI: &[&str] = &[
    "--world-size",
    "1000",
    "--cell-size",
    "125",
    "--view-radius",
    "250",
    "--speed",
    "300",
    "--view-hysteresis-ticks",
    "2",
];

fn distance(a: (f32, f32), b: (f32, f32)) -> f32 {
    (a.0 - b.0).hypot(a.1 - b.1)
}
/// Skips the frames that waited in the socket while the test did something
/// else: reads until a frame of the last 60 ms arrives.
async fn skip_stale(p: &mut Player) {
    let w = p.welcome.clone().expect("welcome");
    let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    loop {
        if let Frame::Cell(c) = p.next().await {
            if w.unwrap_time(c.time_ms) + 60 >= now() {
                return;
            }
        }
    }
}

/// Everyone seen in one tick: (id, x, y).
type Seen = Vec<(u32, f32, f32)>;

/// Reads frames for `ticks` ticks (after skipping stale ones), collecting
/// everyone seen per tick.
async fn watch(p: &mut Player, ticks: usize) -> Vec<Seen> {
    skip_stale(p).await;
    let mut per_tick: Vec<(u32, Seen)> = Vec::new();
    while per_tick.len() < ticks + 2 {
        if let Frame::Cell(c) = p.next().await {
            let players = p.players_of(&c);
            let tick = c.tick;
            match per_tick.iter_mut().find(|t| t.0 == tick) {
                Some(t) => t.1.extend(players),
                None => per_tick.push((tick, players)),
            }
        }
    }
    // The first tick may have begun before the fresh frame, the last is not over.
    per_tick.pop();
    per_tick.into_iter().skip(1).map(|t| t.1).collect()
}

fn sees(tick: &[(u32, f32, f32)], id: u32) -> Option<(f32, f32)> {
    tick.iter().find(|p| p.0 == id).map(|p| (p.1, p.2))
}

#[tokio::test]
async fn far_players_are_unseen_an_approaching_one_appears_before_it_is_in_view_and_a_leaving_one_goes() {
    let server = Shard::start(SERVER, AOI);
    let mut a = Player::join(&server, "Watcher").await;
    let mut b = Player::join(&server, "Walker").await;
    let w = a.welcome.clone().expect("welcome");
    assert_eq!((w.cell_size, w.view_radius), (125.0, 250.0));
    let here = a.walk_to((125.0, 125.0), 30.0).await;
    let far = b.walk_to((875.0, 875.0), 30.0).await;
    let ticks = watch(&mut a, 20).await;
    assert!(ticks.iter().all(|t| sees(t, b.id()).is_none()), "a player 1,000 units away is not sent");
    assert!(ticks.iter().all(|t| sees(t, a.id()).is_some()), "the own cell comes every tick");

    // B walks toward A, checked as it goes.
    b.input(here.0 - far.0, here.1 - far.1).await;
    let mut first_seen = None;
    let deadline = Instant::now() + Duration::from_secs(8);
    // Every frame A gets, none skipped: the prefetch ring comes every 4th
    // tick, so sampling A's ticks now and then could miss it every time.
    skip_stale(&mut a).await;
    let mut frames = 0u32;
    while first_seen.is_none() && Instant::now() < deadline {
        if let Frame::Cell(c) = a.next().await {
            first_seen = sees(&a.players_of(&c), b.id());
            frames += 1;
            if frames.is_multiple_of(40) {
                let _ = b.own_position().await;
            }
        }
    }
    b.input(0.0, 0.0).await;
    let at = first_seen.expect("the approaching player is seen");
    assert!(distance(at, here) > 250.0, "seen in the prefetch ring before the view radius: {at:?} from {here:?}");
    assert!(distance(at, here) < 250.0 + 4.0 * 125.0, "not seen from afar: {at:?} from {here:?}");

    // Once near, it is sent every tick; then it walks away and stops being sent.
    b.walk_to(here, 30.0).await;
    let near = watch(&mut a, 10).await;
    assert!(near.iter().all(|t| sees(t, b.id()).is_some()), "a neighbour every tick: {near:?} (A at {here:?})");
    b.walk_to((875.0, 875.0), 30.0).await;
    let gone = watch(&mut a, 10).await;
    assert!(gone.iter().all(|t| sees(t, b.id()).is_none()), "a player that left is sent no more");
}

#[tokio::test]
async fn walking_back_and_forth_across_cell_borders_never_drops_a_neighbour() {
    // Walkers at 200 units/s (10 a tick), in a 400-unit world.
    let server = Shard::start(
        SERVER,
        &["--world-size", "400", "--cell-size", "100", "--speed", "200", "--view-hysteresis-ticks", "8"],
    );
    let mut a = Player::join(&server, "Still").await;
    let mut b = Player::join(&server, "Pacer").await;
    a.walk_to((150.0, 150.0), 15.0).await;
    b.walk_to((185.0, 150.0), 10.0).await;
    // B paces over the border at x = 200, from 175 to 225 and back: each
    // leg ends when A's frames show B past its goal (not after a fixed time,
    // which a loaded machine stretches unevenly), so B stays in A's own or
    // next cell and must be in every tick's frames.
    let mut blinks = 0;
    let mut crossings = 0;
    let mut last_cell = None;
    let mut bx = 185.0;
    for leg in 0..8u32 {
        let goal = if leg % 2 == 0 { 225.0 } else { 175.0 };
        let dir: f32 = if goal > bx { 1.0 } else { -1.0 };
        b.input(dir, 0.0).await;
        let deadline = Instant::now() + Duration::from_secs(5);
        while (goal - bx) * dir > 0.0 && Instant::now() < deadline {
            for t in watch(&mut a, 2).await {
                match sees(&t, b.id()) {
                    None => blinks += 1,
                    Some((x, _)) => {
                        bx = x;
                        let cell = (x / 100.0).floor() as i32;
                        crossings += usize::from(last_cell.is_some_and(|c| c != cell));
                        last_cell = Some(cell);
                    }
                }
            }
            let _ = b.own_position().await;
        }
    }
    b.input(0.0, 0.0).await;
    assert!(crossings >= 4, "the test walked over borders ({crossings} crossings)");
    assert_eq!(blinks, 0, "B was missing from A's frames in {blinks} ticks");
}

#[tokio::test]
async fn a_crowd_in_one_cell_costs_each_socket_its_budget_and_nobody_is_too_slow() {
    // The whole world is one cell: everyone stands in it.
    let server = Shard::start(
        SERVER,
        &["--world-size", "100", "--cell-size", "100", "--speed", "100", "--view-budget-bytes", "512"],
    );
    let mut crowd = Vec::new();
    for i in 0..60 {
        crowd.push(Player::join(&server, &format!("c{i}")).await);
    }
    let probe = &mut crowd[0];
    let me = probe.id();
    let before = probe.received_bytes();
    let mut ticks = std::collections::BTreeSet::new();
    let mut seen_self = 0;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        if let Frame::Cell(c) = probe.next().await {
            ticks.insert(c.tick);
            seen_self += usize::from(probe.players_of(&c).iter().any(|p| p.0 == me));
        }
    }
    let span = (ticks.iter().next_back().copied().unwrap_or(0) - ticks.iter().next().copied().unwrap_or(0)).max(1);
    let per_tick = (probe.received_bytes() - before) / u64::from(span);
    assert!(per_tick <= 512 + 100, "{per_tick} bytes a tick over a 512-byte budget");
    assert!(seen_self >= 5, "the crowd's cell still comes, less often ({seen_self} frames)");
    let too_slow = server.metric("mino_sockets_closed_total{transport=\"websocket\",reason=\"too_slow\"}").await;
    assert_eq!(too_slow, 0.0, "nobody closed as too slow");
    assert_eq!(server.players().await, 60);
}

#[tokio::test]
async fn names_of_players_in_view_come_on_request() {
    let server = Shard::start(SERVER, AOI);
    let mut a = Player::join(&server, "Asker").await;
    let mut b = Player::join(&server, "Bea").await;
    let here = a.walk_to((500.0, 500.0), 30.0).await;
    b.walk_to(here, 30.0).await;
    let b_id = b.id();
    let seen = a.until(|f| match f {
        Frame::Cell(c) if c.entries.iter().any(|e| e.id.0 == b_id) => Some(()),
        _ => None,
    });
    tokio::time::timeout(Duration::from_secs(5), seen).await.expect("B seen");
    a.send(client::encode_names_request(&[b_id, 999_999])).await;
    let names = a.until(|f| if let Frame::Names(n) = f { Some(n.clone()) } else { None }).await;
    assert_eq!(names, [(b_id, "Bea".to_owned())]);
    // The place's count goes to every socket when it changes (within a
    // second), however far the newcomer.
    let _c = Player::join(&server, "Cy").await;
    let status = a.until(|f| match f {
        Frame::PlaceStatus { players: 3, shards } => Some(*shards),
        _ => None,
    });
    assert_eq!(tokio::time::timeout(Duration::from_secs(3), status).await.expect("within a second"), 1);
}
