//! Resume on one shard (standalone, tickets in memory): a player that drops
//! comes back with the same id, in place; tickets are single use; forged,
//! expired and replayed tickets are refused with their own close codes; a
//! second live socket with the same ticket replaces the first. A session
//! taken over while its player walks (its socket half-open) starts standing
//! still, on the same shard or another, standalone or clustered.

use mino_protocol::client;
use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, Frame, Player, Redis, Shard};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn dropped_player_resumes_in_place_with_the_same_id() {
    let server = Shard::start(SERVER, &["--speed", "100", "--world-size", "10000"]);
    let mut a = Player::join(&server, "Ada").await;
    let (_, _, x0, y0) = a.own_position().await;
    // Walk some 30 units (a third of a second) toward the middle of the
    // 10,000-unit world: a player spawned by its east edge could not walk east.
    let dx = if x0 < 5000.0 { 1.0 } else { -1.0 };
    a.send(client::encode_input(1, dx, 0.0)).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        assert!(std::time::Instant::now() < deadline, "walked 30 units within 10 s");
        let (_, _, nx, ny) = a.own_position().await;
        if (nx - x0).hypot(ny - y0) >= 30.0 {
            break;
        }
    }
    a.send(client::encode_input(2, 0.0, 0.0)).await;
    // Read until the position settles (frames queued while walking are old).
    let (mut x, mut y) = (f32::NAN, f32::NAN);
    let mut still = 0;
    while still < 3 {
        let (_, _, nx, ny) = a.own_position().await;
        still = if nx == x && ny == y { still + 1 } else { 0 };
        (x, y) = (nx, ny);
    }
    let (id, ticket) = (a.id(), a.ticket());
    drop(a);
    server.wait_metric("mino_players", 0.0).await;
    let b = Player::hello(&server, "ignored", Some(&ticket)).await.expect("resumed");
    let w = b.welcome.clone().expect("welcome");
    assert!(w.resumed);
    assert_eq!(w.player_id, id);
    assert!((w.x - x).abs() < 0.1 && (w.y - y).abs() < 0.1, "in place: ({}, {}) vs ({x}, {y})", w.x, w.y);
    assert_ne!(w.ticket, ticket, "a fresh ticket");
}

#[tokio::test]
async fn used_forged_and_id_tickets_are_refused_with_their_codes() {
    let server = Shard::start(SERVER, &[]);
    let a = Player::join(&server, "Ada").await;
    let (id, ticket) = (a.id(), a.ticket());
    drop(a);
    server.wait_metric("mino_players", 0.0).await;
    let _back = Player::hello(&server, "Ada", Some(&ticket)).await.expect("first use");
    let (_, close) = Player::hello(&server, "Ada", Some(&ticket)).await.err().expect("replay refused");
    assert_eq!(close, close_code(CloseCode::TicketUsed));
    let mut forged = ticket.clone();
    forged[20] ^= 0xff;
    let (_, close) = Player::hello(&server, "Ada", Some(&forged)).await.err().expect("forged refused");
    assert_eq!(close, close_code(CloseCode::TicketInvalid));
    let (_, close) = Player::hello(&server, "Ada", Some(&id.to_be_bytes())).await.err().expect("id refused");
    assert_eq!(close, close_code(CloseCode::TicketInvalid));
    assert!(server.metric("mino_sockets_closed_total{transport=\"websocket\",reason=\"ticket_used\"}").await >= 1.0);
}

/// A ticket's first 8 bytes are its issue time, and a peer may send any: the
/// far future (every bit set) must be refused as unknown, not overflow the
/// expiry check (a debug build panicked there and the process died), on the
/// standalone store and on Redis alike; the shard then still admits players.
#[tokio::test]
async fn a_ticket_from_the_far_future_is_invalid_and_the_shard_lives_on() {
    let redis = Redis::start();
    let url = redis.url();
    let shards = [Shard::start(SERVER, &[]), Shard::start(SERVER, &["--redis-url", &url, "--shard-id", "1"])];
    for server in &shards {
        server.wait_ready().await;
        let mut forged = vec![0xff; 8];
        forged.extend((0u8..16).map(|i| i.wrapping_mul(37)));
        let (_, close) = Player::hello(server, "Eve", Some(&forged)).await.err().expect("refused");
        assert_eq!(close, close_code(CloseCode::TicketInvalid));
        let after = Player::join(server, "Ada").await;
        assert!(after.id() > 0, "the shard still admits players");
    }
}

#[tokio::test]
async fn expired_ticket_is_refused() {
    let server = Shard::start(SERVER, &["--ticket-ttl-ms", "1000"]);
    let a = Player::join(&server, "Ada").await;
    let ticket = a.ticket();
    drop(a);
    // 2.3 s of the shard's ticks: past the ticket's TTL (1 s) whatever the load.
    server.wait_ticks(46).await;
    let (_, close) = Player::hello(&server, "Ada", Some(&ticket)).await.err().expect("expired refused");
    assert_eq!(close, close_code(CloseCode::TicketExpired));
}

#[tokio::test]
async fn second_live_socket_replaces_the_first_without_ping_pong() {
    let server = Shard::start(SERVER, &[]);
    let mut first = Player::join(&server, "Ada").await;
    let (id, ticket) = (first.id(), first.ticket());
    let mut second = Player::hello(&server, "Ada", Some(&ticket)).await.expect("takes over");
    assert_eq!(second.id(), id);
    assert_eq!(first.closed().await.0, close_code(CloseCode::SessionReplaced));
    // The replaced client does not come back (its ticket is spent), and the
    // new session keeps running.
    let (_, close) = Player::hello(&server, "Ada", Some(&ticket)).await.err().expect("old ticket is used");
    assert_eq!(close, close_code(CloseCode::TicketUsed));
    for _ in 0..20 {
        second.own_position().await;
    }
    server.wait_metric("mino_players", 1.0).await;
}

#[tokio::test]
async fn a_busy_shard_refuses_a_resume_before_spending_the_ticket() {
    let server = Shard::start(SERVER, &["--max-players", "1"]);
    let a = Player::join(&server, "Ada").await;
    let ticket = a.ticket();
    drop(a);
    server.wait_metric("mino_players", 0.0).await;
    let _b = Player::join(&server, "Bob").await;
    let (frame, close) = Player::hello(&server, "Ada", Some(&ticket)).await.err().expect("busy");
    assert!(matches!(frame, Frame::Busy { .. }), "{frame:?}");
    assert_eq!(close, close_code(CloseCode::ServerBusy));
    drop(_b);
    server.wait_metric("mino_players", 0.0).await;
    let back = Player::hello(&server, "Ada", Some(&ticket)).await.expect("the ticket still works");
    assert!(back.welcome.as_ref().is_some_and(|w| w.resumed));
}

/// Walks `p` away from the nearer wall (Input 1) until its own entry shows
/// the input applied.
async fn walk(p: &mut Player) {
    let (_, at) = p.own_entry().await;
    let b = p.welcome.as_ref().expect("welcomed").bounds;
    let dir = if at.x < (b.min_x() + b.max_x()) / 2.0 { 1.0 } else { -1.0 };
    p.send(client::encode_input(1, dir, 0.0)).await;
    loop {
        let (_, e) = p.own_entry().await;
        if e.moving && e.input_seq == 1 {
            return;
        }
    }
}

/// `p`, just resumed, stands still with no input applied over ten ticks of
/// its shard.
async fn stands_still(p: &mut Player, path: &str) {
    let (first, at) = p.own_entry().await;
    loop {
        let (tick, e) = p.own_entry().await;
        assert!(!e.moving && e.input_seq == 0, "{path}: walks on after the takeover, no key held: {e:?}");
        assert_eq!((e.x, e.y), (at.x, at.y), "{path}: moved after the takeover");
        if tick >= first + 10 {
            return;
        }
    }
}

/// A session taken over while its player walks (the old socket silent, as
/// half-open: never closed, never read) starts standing still, by every
/// path: a ticket on the same shard, standalone and clustered, and a ticket
/// on another shard.
#[tokio::test]
async fn a_session_taken_over_while_walking_starts_standing_still_by_every_path() {
    let flags = ["--speed", "100", "--world-size", "10000", "--peer-timeout-ms", "30000"];
    let alone = Shard::start(SERVER, &flags);
    let redis = Redis::start();
    let clustered = |id: u32| {
        let mut args = flags.map(str::to_owned).to_vec();
        args.extend(["--redis-url".into(), redis.url(), "--shard-id".into(), id.to_string()]);
        Shard::start(SERVER, &args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (one, two) = (clustered(1), clustered(2));
    one.wait_ready().await;
    two.wait_ready().await;
    for (path, from, to) in [
        ("standalone, same shard", &alone, &alone),
        ("clustered, same shard", &one, &one),
        ("clustered, another shard", &one, &two),
    ] {
        let mut walker = Player::join(from, "Ada").await;
        walk(&mut walker).await;
        let half_open = walker;
        let mut back = Player::hello(to, "Ada", Some(&half_open.ticket())).await.expect("taken over");
        assert_eq!(back.id(), half_open.id(), "{path}");
        stands_still(&mut back, path).await;
        drop(half_open);
    }
}
