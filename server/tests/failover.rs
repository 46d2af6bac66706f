//! Failover across shards: a player whose shard is killed, paused or drained
//! continues on another shard with the same id, in place; a woken shard drops
//! the players resumed elsewhere, and no player is ever in two shards'
//! snapshots of one moment.

use mino_protocol::client;
use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, wait, Frame, Player, Redis, Shard, ShardBuilder, Signal};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// A shard of the place on `redis`: a 10,000-unit world, walkers at 100
/// units/s, dead to the others a second after its last heartbeat.
fn shard(redis: &Redis, id: u32) -> ShardBuilder {
    let world = Shard::build(SERVER).redis(redis).id(id).world_size(10_000.0).speed(100.0);
    world.shard_ttl(Duration::from_millis(1000))
}

/// Walkers on `server`: each walks in its own direction; returns them with the
/// newest position each saw of itself.
async fn walkers(server: &Shard, n: usize) -> Vec<Player> {
    let mut out = Vec::new();
    for i in 0..n {
        let mut c = Player::join(server, &format!("w{i}")).await;
        let a = i as f32;
        c.send(client::encode_input(1, a.cos(), a.sin())).await;
        out.push(c);
    }
    out
}

/// The newest own position in what `c` has received (reads what is queued).
async fn newest_position(c: &mut Player) -> (f32, f32) {
    let (_, _, x, y) = c.newest_own_position().await;
    (x, y)
}

/// Kills `victim` (SIGKILL) and resumes each of `players` (on it) on `on`
/// with its ticket: each must come back with its id, within 10.5 units of
/// where it last saw itself (one tick of walking at 100 units/s and 20 Hz,
/// plus a tick the bot had not read yet). Returns the resumed players.
async fn kill_and_resume_in_place(victim: &mut Shard, players: &mut [Player], on: &Shard) -> Vec<Player> {
    let mut last = Vec::new();
    for p in players.iter_mut() {
        last.push((p.id(), p.ticket(), newest_position(p).await));
    }
    victim.signal(Signal::SIGKILL);
    victim.wait_exit(Duration::from_secs(5)).expect("killed");
    let mut back = Vec::new();
    for (id, ticket, (x, y)) in last {
        let p = Player::hello(on, "x", Some(&ticket)).await.expect("resumed");
        let w = p.welcome.clone().expect("welcome");
        assert_eq!((w.player_id, w.resumed), (id, true));
        let off = ((w.x - x).powi(2) + (w.y - y).powi(2)).sqrt();
        assert!(off <= 10.5, "player {id} resumed {off} units from where it stood");
        back.push(p);
    }
    back
}

#[tokio::test]
async fn killed_shard_players_resume_on_the_other_in_place() {
    let redis = Redis::start();
    let mut a = shard(&redis, 1).ready().await;
    let b = shard(&redis, 2).ready().await;
    let mut bots = walkers(&a, 10).await;
    // They walk for ten ticks.
    a.wait_ticks(10).await;
    let resumed = kill_and_resume_in_place(&mut a, &mut bots, &b).await;
    assert!(resumed.iter().all(|p| p.welcome.as_ref().is_some_and(|w| w.shard_id == 2)));
    b.wait_metric("mino_players", 10.0).await;
}

#[tokio::test]
async fn paused_shard_drops_players_resumed_elsewhere_and_never_duplicates_them() {
    let redis = Redis::start();
    let a = shard(&redis, 1).ready().await;
    let b = shard(&redis, 2).ready().await;
    let mut bots = walkers(&a, 5).await;
    let mut observer = Player::join(&b, "observer").await;
    let ids: HashSet<u32> = bots.iter().map(Player::id).collect();
    b.wait_metric("mino_cluster_shards", 1.0).await;
    a.signal(Signal::SIGSTOP);
    // A is dead to B once its heartbeat is older than the TTL.
    b.wait_metric("mino_cluster_shards", 0.0).await;
    let mut resumed = Vec::new();
    for c in &bots {
        resumed.push(Player::hello(&b, "x", Some(&c.ticket())).await.expect("resumed while A sleeps"));
    }
    let woke_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_millis() as u64;
    a.signal(Signal::SIGCONT);
    // For three seconds after the wake, A's snapshots never list the players
    // that live on B now.
    let start = Instant::now();
    let mut a_back = false;
    while start.elapsed() < Duration::from_secs(3) {
        if let Frame::Snapshot { shard, time_ms, players, .. } = observer.next().await {
            let set: HashSet<u32> = players.iter().map(|p| p.0).collect();
            // Frames queued from before the pause say nothing about the wake.
            if shard == 1 && time_ms >= woke_ms {
                a_back = true;
                let dup: Vec<_> = set.intersection(&ids).collect();
                assert!(dup.is_empty(), "woken shard still lists resumed players {dup:?}");
            }
        }
    }
    assert!(a_back, "the woken shard is back in the view");
    // The stale sockets on A were told the session lives elsewhere now.
    for c in &mut bots {
        assert_eq!(c.closed().await.0, close_code(CloseCode::SessionReplaced));
    }
    a.wait_metric("mino_players", 0.0).await;
    drop(resumed);
}

#[tokio::test]
async fn drained_shard_moves_everyone_and_exits_zero() {
    let redis = Redis::start();
    let mut a = shard(&redis, 1).flag("drain-rate", 100).ready().await;
    let b = shard(&redis, 2).ready().await;
    let mut bots = walkers(&a, 8).await;
    let ids: Vec<u32> = bots.iter().map(Player::id).collect();
    a.signal(Signal::SIGTERM);
    wait::until_true("draining is not ready", || async { a.get("/readyz").await.status == 503 }).await;
    match tokio_tungstenite::connect_async(a.ws_url()).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => assert_eq!(r.status(), 503, "no upgrade while draining"),
        other => panic!("expected HTTP 503, got {:?}", other.map(|_| ())),
    }
    let mut moved = Vec::new();
    for c in &mut bots {
        let ticket = c.until(|f| if let Frame::Move(t) = f { Some(t.clone()) } else { None }).await;
        assert_eq!(c.closed().await.0, close_code(CloseCode::Moved));
        moved.push(Player::hello(&b, "x", Some(&ticket)).await.expect("resumed on B"));
    }
    let back: Vec<u32> = moved.iter().map(Player::id).collect();
    assert_eq!(back, ids, "same ids, nobody lost");
    assert!(moved.iter().all(|c| c.welcome.as_ref().is_some_and(|w| w.resumed)));
    drop(bots);
    let status = a.wait_exit(Duration::from_secs(10)).expect("exited after the drain");
    assert!(status.success());
}

#[tokio::test]
async fn players_drained_then_killed_with_their_new_shard_resume_where_they_stood() {
    // Drained from A, resumed on B at once (as a websocket page does, before
    // A has closed the old socket), walked on B, then B is killed: C must
    // resume them where they stood on B. A's parks of their positions go
    // through its publisher and may land after B's claim; one that did was
    // taken over B's newer position (an outside trial: 10 of 20 players up
    // to 888 units off, 7 runs of 7).
    let redis = Redis::start();
    let mut a = shard(&redis, 1).flag("drain-rate", 100).ready().await;
    let mut b = shard(&redis, 2).ready().await;
    let c = shard(&redis, 3).ready().await;
    let mut bots = walkers(&a, 10).await;
    a.wait_ticks(5).await;
    a.signal(Signal::SIGTERM);
    let mut moved = Vec::new();
    for (i, old) in bots.iter_mut().enumerate() {
        let ticket = old.until(|f| if let Frame::Move(t) = f { Some(t.clone()) } else { None }).await;
        let mut on_b = Player::hello(&b, "x", Some(&ticket)).await.expect("resumed on B");
        let angle = i as f32 + 1.5;
        on_b.send(client::encode_input(1, angle.cos(), angle.sin())).await;
        moved.push(on_b);
    }
    drop(bots);
    a.wait_exit(Duration::from_secs(10)).expect("A exited after the drain");
    // A second of walking on B: 100 units from where A parked them.
    b.wait_ticks(20).await;
    kill_and_resume_in_place(&mut b, &mut moved, &c).await;
}

#[tokio::test]
async fn players_resume_after_redis_restarted_empty_and_their_shard_died() {
    // Redis restarted without its data takes every session and ticket with
    // it; the shards write their players' again (the heartbeat finds its own
    // key gone), so a shard killed after that still hands its players over
    // (an outside trial: 20 of 20 resumes refused, the players back as new
    // ones under new ids).
    let mut redis = Redis::start();
    let mut a = shard(&redis, 1).heartbeat(Duration::from_millis(200)).ready().await;
    let b = shard(&redis, 2).heartbeat(Duration::from_millis(200)).ready().await;
    let mut bots = walkers(&a, 5).await;
    redis.kill();
    a.wait_metric("mino_redis_up", 0.0).await;
    redis.restart();
    let sessions = || redis.cli(&["--scan", "--pattern", "*session:*"]).lines().count();
    wait::until_true("the sessions written again", || async { sessions() == 5 }).await;
    kill_and_resume_in_place(&mut a, &mut bots, &b).await;
}

#[tokio::test]
async fn a_drain_while_redis_is_out_of_reach_moves_its_players_once_it_is_back() {
    // A shard stopped (SIGTERM) during a Redis outage: its players stay and
    // play on until their move tickets are stored, then move (an outside
    // trial: the drain "moved" every player in 0.14 s with tickets Redis
    // never took, and each came back as a new player).
    let mut redis = Redis::start();
    let dir = mino_testkit::WorkDir::new("drain-redis-down");
    let log = dir.join("a.log");
    let a = shard(&redis, 1).heartbeat(Duration::from_millis(200)).log_to(&log, "info").ready().await;
    let b = shard(&redis, 2).heartbeat(Duration::from_millis(200)).ready().await;
    let mut bots = walkers(&a, 3).await;
    redis.kill();
    a.wait_metric("mino_redis_up", 0.0).await;
    a.signal(Signal::SIGTERM);
    assert!(a.logged("move ticket not stored").await, "the drain tried");
    // Still here: each still gets its shard's frames, and no Move came.
    for p in &mut bots {
        let own = |f: &Frame| match f {
            Frame::Snapshot { shard: 1, tick, .. } => Some(*tick),
            Frame::Move(_) => panic!("moved before Redis took the ticket"),
            _ => None,
        };
        let tick = p.until(own).await;
        let later = p.until(own).await;
        assert!(later > tick, "player {} plays on", p.id());
    }
    redis.restart();
    for p in &mut bots {
        let ticket = p.until(|f| if let Frame::Move(t) = f { Some(t.clone()) } else { None }).await;
        assert_eq!(p.closed().await.0, close_code(CloseCode::Moved));
        let back = Player::hello(&b, "x", Some(&ticket)).await.expect("resumed on shard 2");
        assert_eq!(back.welcome.as_ref().map(|w| (w.player_id, w.resumed)), Some((p.id(), true)));
    }
}

#[tokio::test]
async fn a_drain_below_the_tick_rate_keeps_its_pace() {
    // --drain-rate 4 at 20 Hz: a Move every fifth tick, not one a tick (all
    // four players were told within 150 ms, whatever the rate under 20).
    let redis = Redis::start();
    let a = shard(&redis, 1).flag("drain-rate", 4).ready().await;
    let _b = shard(&redis, 2).ready().await;
    let bots = walkers(&a, 4).await;
    a.signal(Signal::SIGTERM);
    let spread = moves_spread(bots).await;
    assert!(spread >= Duration::from_millis(600), "four moves at 4 a second came within {spread:?}");
}

#[tokio::test]
async fn a_sigterm_during_a_drain_the_admin_api_ordered_keeps_its_pace() {
    // `systemctl stop` during a drain asked of the console or the API: the
    // process's first SIGTERM carries the paced drain on (it was taken for a
    // second SIGTERM, and every player not moved yet left at once: an
    // outside trial).
    let redis = Redis::start();
    let dir = mino_testkit::WorkDir::new("drain-then-term");
    let log = dir.join("a.log");
    let a = shard(&redis, 1).flag("drain-rate", 4).admin().log_to(&log, "info").ready().await;
    let _b = shard(&redis, 2).ready().await;
    let bots = walkers(&a, 4).await;
    let admin = a.admin.expect("an admin listener");
    assert_eq!(mino_testkit::http::request(admin, "POST", "/admin/drain").await.status, 202);
    a.signal(Signal::SIGTERM);
    assert!(a.logged("SIGTERM: draining already").await, "the SIGTERM taken as the drain's");
    let spread = moves_spread(bots).await;
    assert!(spread >= Duration::from_millis(600), "four moves at 4 a second came within {spread:?}");
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!said.contains("second SIGTERM: stopping now"), "{said}");
}

/// How long apart the first and the last of `bots` were told to move
/// (each read on its own task: when its Move came).
async fn moves_spread(mut bots: Vec<Player>) -> Duration {
    let tasks: Vec<_> = bots
        .drain(..)
        .map(|mut c| {
            tokio::spawn(async move {
                c.until(|f| if let Frame::Move(t) = f { Some(t.clone()) } else { None }).await;
                (Instant::now(), c)
            })
        })
        .collect();
    let mut told = Vec::new();
    for t in tasks {
        told.push(t.await.expect("a bot").0);
    }
    told.sort();
    told[told.len() - 1] - told[0]
}

#[tokio::test]
async fn second_socket_on_another_shard_replaces_the_first() {
    let redis = Redis::start();
    let a = shard(&redis, 1).ready().await;
    let b = shard(&redis, 2).ready().await;
    let mut first = Player::join(&a, "Ada").await;
    let second = Player::hello(&b, "Ada", Some(&first.ticket())).await.expect("taken over on B");
    assert_eq!(second.id(), first.id());
    assert_eq!(first.closed().await.0, close_code(CloseCode::SessionReplaced));
    a.wait_metric("mino_players", 0.0).await;
    b.wait_metric("mino_players", 1.0).await;
}

/// True when shard `id`'s last snapshot in Redis lists `player`.
fn in_last_snapshot(redis: &Redis, id: u32, player: u32) -> bool {
    let key = format!("mino:{{main}}:lastsnap:{id:08x}");
    let mut conn = redis::Client::open(redis.url()).and_then(|c| c.get_connection()).expect("redis");
    let bytes: Option<Vec<u8>> = redis::Commands::get(&mut conn, key).expect("GET");
    bytes.is_some_and(|b| match mino_protocol::server::decode(&b) {
        Ok(mino_protocol::server::ServerMsg::Snapshot(s)) => {
            s.players().is_some_and(|ps| ps.iter().any(|p| mino_protocol::server::player_id(p).0 == player))
        }
        _ => false,
    })
}

#[tokio::test]
async fn a_player_killed_with_its_shard_before_any_snapshot_listed_it_resumes_where_it_was_placed() {
    let redis = Redis::start();
    // One tick a second: the shard can be stopped between a welcome and the
    // next snapshot it publishes.
    let mut a = shard(&redis, 1).flag("tick-hz", 1).ready().await;
    let b = shard(&redis, 2).ready().await;
    let mut placed = None;
    for attempt in 0..5 {
        let c = Player::join(&a, &format!("new{attempt}")).await;
        a.signal(Signal::SIGSTOP);
        if !in_last_snapshot(&redis, 1, c.id()) {
            placed = Some(c);
            break;
        }
        a.signal(Signal::SIGCONT);
    }
    let c = placed.expect("a welcome no snapshot had listed yet, within 5 tries");
    let w = c.welcome.clone().expect("welcome");
    a.signal(Signal::SIGKILL);
    a.wait_exit(Duration::from_secs(5)).expect("killed");
    let back = Player::hello(&b, "ignored", Some(&c.ticket())).await.expect("resumed on the other shard");
    let bw = back.welcome.clone().expect("welcome");
    assert!(bw.resumed && bw.player_id == w.player_id);
    assert!(
        (bw.x - w.x).abs() < 0.5 && (bw.y - w.y).abs() < 0.5,
        "resumed at ({}, {}), placed at ({}, {})",
        bw.x,
        bw.y,
        w.x,
        w.y
    );
}
