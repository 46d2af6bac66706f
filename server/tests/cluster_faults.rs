//! A cluster survives Redis faults and shard faults: local play goes on, the
//! cross-shard view comes back by itself, and dead shards leave everyone's view.

use mino_testkit::{wait, Frame, Player, Redis, Shard, ShardBuilder, Signal, WorkDir};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// A shard of the place on `redis`.
fn shard(redis: &Redis, id: u32) -> ShardBuilder {
    Shard::build(SERVER).redis(redis).id(id)
}

/// [`shard`] that others find dead within a second of its last heartbeat
/// (every 200 ms).
fn fast(redis: &Redis, id: u32) -> ShardBuilder {
    shard(redis, id).shard_ttl(Duration::from_millis(1000)).heartbeat(Duration::from_millis(200))
}

/// Waits until `c` receives a snapshot of `shard`; returns how long it took.
async fn until_snapshot_of(c: &mut Player, shard: u32, limit: Duration) -> Duration {
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < limit, "no snapshot of shard {shard} within {limit:?}");
        if let Frame::Snapshot { shard: s, .. } = c.next().await {
            if s == shard {
                return start.elapsed();
            }
        }
    }
}

/// Waits until `c` receives a snapshot of `shard` taken after `after_ms`
/// (wall clock, ms since the Unix epoch): frames queued before are skipped.
async fn until_snapshot_after(c: &mut Player, shard: u32, after_ms: u64, limit: Duration) {
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < limit, "no snapshot of shard {shard} after {after_ms} within {limit:?}");
        if let Frame::Snapshot { shard: s, time_ms, .. } = c.next().await {
            if s == shard && time_ms > after_ms {
                return;
            }
        }
    }
}

/// Now, wall clock, ms since the Unix epoch.
fn wall_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Snapshot gaps of `shard` seen by `c` over `span`.
async fn gaps_of(c: &mut Player, shard: u32, span: Duration) -> Vec<Duration> {
    let start = Instant::now();
    let mut last = Instant::now();
    let mut gaps = Vec::new();
    while start.elapsed() < span {
        if let Frame::Snapshot { shard: s, .. } = c.next().await {
            if s == shard {
                gaps.push(last.elapsed());
                last = Instant::now();
            }
        }
    }
    gaps
}

/// Waits until `c` has been told of `player` (in a roster or a presence join).
async fn until_known(c: &mut Player, player: u32) {
    c.until(|f| match f {
        Frame::Roster(r) if r.iter().any(|(id, _)| *id == player) => Some(()),
        Frame::Presence { joined, .. } if joined.iter().any(|(id, _)| *id == player) => Some(()),
        _ => None,
    })
    .await;
}

fn p95(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() * 95 / 100]
}

#[tokio::test]
async fn redis_restart_keeps_local_play_and_restores_the_view_within_two_seconds() {
    let mut redis = Redis::start();
    let a = shard(&redis, 1).ready().await;
    let b = shard(&redis, 2).ready().await;
    let mut on_a = Player::join(&a, "OnA").await;
    let _on_b = Player::join(&b, "OnB").await;
    until_snapshot_of(&mut on_a, 2, Duration::from_secs(5)).await;

    redis.kill();
    let gaps = gaps_of(&mut on_a, 1, Duration::from_secs(3)).await;
    assert!(gaps.len() >= 50, "local snapshots during the outage: {}", gaps.len());
    assert!(p95(gaps) < Duration::from_millis(80), "local play at 20 Hz during the outage");
    assert_eq!(a.get("/readyz").await.status, 503, "not ready without redis");

    redis.restart();
    let back = Instant::now();
    // Drain what was queued before the restart, then wait for B's snapshots.
    let waited = until_snapshot_of(&mut on_a, 2, Duration::from_secs(5)).await;
    assert!(
        back.elapsed() < Duration::from_secs(2),
        "view back {:?} after redis returned ({waited:?})",
        back.elapsed()
    );
    assert!(a.metric("mino_redis_reconnects_total").await >= 1.0);
    a.wait_ready().await;
}

#[tokio::test]
async fn a_shard_back_from_a_redis_outage_keeps_the_others_until_they_beat_again() {
    // Redis restarted empty, and A back before B has written its heartbeat
    // again (B is paused meanwhile, so that A is first). A dropped B from
    // its view then and took it back a beat later: every page on A saw B's
    // players leave and come back. Within a TTL of its own return, A keeps B.
    let dir = WorkDir::new("outage-flap");
    let log = dir.join("a.log");
    let mut redis = Redis::start();
    let ttl = Duration::from_millis(8000);
    let a = shard(&redis, 1).shard_ttl(ttl).heartbeat(Duration::from_millis(200)).log_to(&log, "info").ready().await;
    let b = shard(&redis, 2).shard_ttl(ttl).ready().await;
    let mut on_a = Player::join(&a, "OnA").await;
    let _on_b = Player::join(&b, "OnB").await;
    until_snapshot_of(&mut on_a, 2, Duration::from_secs(5)).await;
    redis.kill();
    a.wait_metric("mino_redis_up", 0.0).await;
    b.signal(Signal::SIGSTOP);
    redis.restart();
    // Logged once A's first heartbeat and read of the registry since it was
    // back are done (the registry's line on a shard gone comes before it);
    // only this return says how long Redis was gone.
    let back = a.logged(" down_for_s=").await;
    b.signal(Signal::SIGCONT);
    assert!(back, "A came back");
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!said.contains("shard left the view"), "A dropped B meanwhile: {said}");
    until_snapshot_of(&mut on_a, 2, Duration::from_secs(10)).await;
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!said.contains("left this place's view"), "A's view dropped B meanwhile: {said}");
}

#[tokio::test]
async fn after_redis_lost_the_id_counter_no_shard_is_granted_ids_another_holds() {
    // Each shard holds a block of 1,024 ids and has handed out one. Redis
    // restarts empty: the heartbeats raise the counter again, to the end of
    // the blocks held, not to the highest id handed out (then a new shard
    // was granted the unused tail of a live one's block, two players shared
    // an id, and the older was dropped with 4013, never to reconnect).
    let mut redis = Redis::start();
    let a = fast(&redis, 1).ready().await;
    let b = fast(&redis, 2).ready().await;
    let on_a = Player::join(&a, "OnA").await;
    let on_b = Player::join(&b, "OnB").await;
    let held = on_a.id().max(on_b.id()).div_ceil(1024) * 1024;
    redis.kill();
    a.wait_metric("mino_redis_up", 0.0).await;
    redis.restart();
    let counter = || {
        let keys = redis.cli(&["--scan", "--pattern", "*next_player*"]);
        let key = keys.lines().next().unwrap_or_default().to_owned();
        redis.cli(&["GET", &key]).trim().parse::<u32>().unwrap_or(0)
    };
    wait::until_true("the counter raised past the blocks held", || async { counter() >= held }).await;
    let c = fast(&redis, 3).ready().await;
    let on_c = Player::join(&c, "OnC").await;
    assert!(on_c.id() > held, "C was granted id {} within the blocks A and B hold (to {held})", on_c.id());
}

#[tokio::test]
async fn a_second_process_with_a_live_shards_id_takes_no_players_and_touches_nothing_of_it() {
    // The same --shard-id started twice in one place (an env file copied)
    // was taken by both: both admitted players, the place view showed one
    // shard, and the other shards dropped the relayed frames of one of them.
    let redis = Redis::start();
    let mut first = fast(&redis, 1).ready().await;
    let on_first = Player::join(&first, "OnFirst").await;
    let mut second = fast(&redis, 1).admin().start();
    let admin = second.admin.expect("an admin listener");
    wait::until_true("the second process refuses", || async {
        let r = mino_testkit::http::request(admin, "GET", "/readyz").await;
        r.status == 503 && r.text().contains("another process holds this shard id")
    })
    .await;
    // Its admin API says why, and that Redis answers it (it said "down").
    let place = mino_testkit::http::request(admin, "GET", "/admin/api/place").await.text();
    assert!(place.contains("\"state\":\"id_taken\"") && !place.contains("\"redis\":\"down\""), "{place}");
    match tokio_tungstenite::connect_async(second.ws_url()).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => assert_eq!(r.status(), 503, "no player on the second"),
        other => panic!("expected HTTP 503, got {:?}", other.map(|_| ())),
    }
    assert_eq!(second.metric("mino_unready_refusals_total{reason=\"shard_id_taken\"}").await, 1.0);
    // It stays so while the first beats, and writes nothing as shard 1: the
    // first's roster in Redis keeps its player through the second's beats.
    let roster_key =
        || redis.cli(&["--scan", "--pattern", "*players:00000001*"]).lines().next().unwrap_or_default().to_owned();
    let roster = || redis.cli(&["HLEN", &roster_key()]).trim().parse::<u32>().unwrap_or(0);
    // Its player in it (the hash also holds the presence sequence, alone in
    // it before the join's presence lands: HLEN 1 was no sign of the player).
    let id = on_first.id().to_string();
    wait::until_true("the first's roster written", || async {
        redis.cli(&["HEXISTS", &roster_key(), &id]).trim() == "1"
    })
    .await;
    let written = roster();
    for _ in 0..5 {
        first.wait_ticks(6).await;
        assert_eq!(roster(), written, "the first's roster, through the second's beats");
    }
    let ready = mino_testkit::http::request(admin, "GET", "/readyz").await.status;
    assert_eq!(ready, 503, "the second took the id while the first lives");
    assert_eq!(first.get("/readyz").await.status, 200, "the first is unaffected");
    // Stopped, the second leaves the first's keys alone.
    second.signal(Signal::SIGTERM);
    second.wait_exit(Duration::from_secs(10)).expect("the second stopped");
    assert!(redis.cli(&["--scan", "--pattern", "*shard:00000001*"]).lines().count() >= 1, "the first's heartbeat");
    assert_eq!(roster(), written);
    // A third waits, and registers once the first is gone (killed: its
    // heartbeat lasts its TTL).
    let third = fast(&redis, 1).start();
    first.signal(Signal::SIGKILL);
    first.wait_exit(Duration::from_secs(5)).expect("killed");
    third.wait_ready().await;
    let _on_third = Player::join(&third, "OnThird").await;
}

#[tokio::test]
async fn a_shard_whose_id_was_taken_while_it_was_away_moves_its_players_and_stops() {
    // The first is away from Redis past its TTL (paused); a second process
    // started with the same id takes it meanwhile. Back, the first finds its
    // id another's: it moves its players away and stops, so that one
    // process serves the id.
    let redis = Redis::start();
    let mut first = fast(&redis, 1).ready().await;
    let mut on_first = Player::join(&first, "OnFirst").await;
    let second = fast(&redis, 1).start();
    first.signal(Signal::SIGSTOP);
    second.wait_ready().await;
    first.signal(Signal::SIGCONT);
    let ticket = on_first.until(|f| if let Frame::Move(t) = f { Some(t.clone()) } else { None }).await;
    let status = first.wait_exit(Duration::from_secs(15)).expect("the first stopped");
    assert!(status.success(), "{status:?}");
    let back = Player::hello(&second, "x", Some(&ticket)).await.expect("resumed on the second");
    assert_eq!(back.id(), on_first.id());
    assert_eq!(second.get("/readyz").await.status, 200);
}

#[tokio::test]
async fn killed_pubsub_connection_recovers_by_itself() {
    let redis = Redis::start();
    let a = shard(&redis, 1).ready().await;
    let b = shard(&redis, 2).ready().await;
    let mut on_a = Player::join(&a, "OnA").await;
    let _on_b = Player::join(&b, "OnB").await;
    until_snapshot_of(&mut on_a, 2, Duration::from_secs(5)).await;
    let before = a.metric("mino_redis_reconnects_total").await;
    let killed = redis.cli(&["CLIENT", "KILL", "TYPE", "pubsub"]);
    let killed_ms = wall_ms();
    assert!(killed.trim().parse::<u32>().unwrap_or(0) >= 2, "killed subscribers: {killed}");
    // B's snapshots must come back: one taken after the kill (those queued
    // before it are skipped).
    until_snapshot_after(&mut on_a, 2, killed_ms, Duration::from_secs(2)).await;
    wait::until("reconnect counted", Duration::from_secs(2), || async {
        (a.metric("mino_redis_reconnects_total").await > before).then_some(())
    })
    .await;
}

#[tokio::test]
async fn paused_shard_leaves_the_view_and_returns_without_disconnecting_anyone() {
    let redis = Redis::start();
    let a = fast(&redis, 1).ready().await;
    let b = fast(&redis, 2).ready().await;
    let mut on_a = Player::join(&a, "Sleeper").await;
    let mut on_b = Player::join(&b, "Watcher").await;
    let sleeper = on_a.id();
    until_known(&mut on_b, sleeper).await;

    a.signal(Signal::SIGSTOP);
    on_b.until(|f| match f {
        Frame::Presence { left, .. } if left.contains(&sleeper) => Some(()),
        _ => None,
    })
    .await;
    // Snapshots of A stop while it sleeps: once B's next own snapshot is
    // read, nothing of A is queued before it.
    on_b.until(|f| matches!(f, Frame::Snapshot { shard: 2, .. }).then_some(())).await;
    let mut seen_a = 0;
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(600) {
        if let Frame::Snapshot { shard: 1, .. } = on_b.next().await {
            seen_a += 1;
        }
    }
    assert_eq!(seen_a, 0, "no snapshots of a paused shard");

    a.signal(Signal::SIGCONT);
    let name = on_b
        .until(|f| match f {
            Frame::Presence { joined, .. } => joined.iter().find(|(id, _)| *id == sleeper).map(|(_, n)| n.clone()),
            _ => None,
        })
        .await;
    assert_eq!(name, "Sleeper");
    until_snapshot_of(&mut on_b, 1, Duration::from_secs(3)).await;
    // The sleeper's own socket survived the pause.
    let (tick0, ..) = on_a.own_position().await;
    let (tick1, ..) = on_a.own_position().await;
    assert!(tick1 > tick0);
}

#[tokio::test]
async fn killed_shard_leaves_the_view_and_its_keys_expire() {
    let redis = Redis::start();
    let mut a = fast(&redis, 1).ready().await;
    let b = fast(&redis, 2).ready().await;
    let on_a = Player::join(&a, "Doomed").await;
    let mut on_b = Player::join(&b, "Watcher").await;
    let doomed = on_a.id();
    until_known(&mut on_b, doomed).await;
    assert!(redis.keys().iter().any(|k| k.ends_with(":shard:00000001")));

    let killed_at = Instant::now();
    a.signal(Signal::SIGKILL);
    a.wait_exit(Duration::from_secs(5)).expect("killed");
    on_b.until(|f| match f {
        Frame::Presence { left, .. } if left.contains(&doomed) => Some(()),
        _ => None,
    })
    .await;
    assert!(killed_at.elapsed() < Duration::from_millis(1000 + 200 + 800), "gone within TTL + interval");
    // Its keys expire by themselves: heartbeat and players within the TTL, its
    // last snapshot (kept for resumes) within two.
    let left_over = || redis.keys().into_iter().filter(|k| k.contains("00000001")).collect::<Vec<String>>();
    let expiry = Duration::from_millis(2000 + 1500);
    wait::until("keys of the dead shard expire", expiry, || async { left_over().is_empty().then_some(()) }).await;
    let left_over = left_over();
    assert!(left_over.is_empty(), "keys of the dead shard remain: {left_over:?}");
    let members = redis.cli(&["ZRANGE", "mino:{main}:shards", "0", "-1"]);
    assert!(!members.lines().any(|m| m.trim() == "1"), "dead shard still registered: {members}");
    drop(on_a);
}

#[tokio::test]
async fn shard_started_without_redis_is_not_ready_until_redis_comes() {
    let port = Redis::reserve();
    let url = format!("redis://127.0.0.1:{port}");
    let dir = WorkDir::new("no-redis-yet");
    let server = Shard::build(SERVER).redis_url(&url).log_to(&dir.join("shard.log"), "debug").start();
    assert!(server.logged("subscribe failed").await, "it tried redis");
    // The operator is told at once, at the default level (a warning), not
    // only once redis was reached and then lost.
    assert!(
        server.logged("WARN mino_server::cluster::registry: redis unreachable; this shard takes no players").await,
        "the shard says redis is unreachable"
    );
    assert_eq!(server.get("/readyz").await.status, 503);
    assert_eq!(server.get("/healthz").await.status, 200, "alive while waiting for redis");
    // The upgrade itself is refused, so a load balancer tries another shard.
    match tokio_tungstenite::connect_async(server.ws_url()).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => assert_eq!(r.status(), 503),
        other => panic!("expected HTTP 503, got {:?}", other.map(|_| ())),
    }
    let _redis = Redis::start_on(port);
    server.wait_ready().await;
    assert!(server.logged("redis reachable; shard registered shard=").await);
    assert!(server.logged(" down_for_s=").await, "how long redis was unreachable");
    let c = Player::join(&server, "Late").await;
    assert_ne!(c.id(), 0);
}

#[tokio::test]
async fn password_in_url_never_reaches_the_logs() {
    let port = Redis::reserve();
    let url = format!("redis://user:hunter2secret@127.0.0.1:{port}");
    let dir = WorkDir::new("password-in-url");
    let log = dir.join("shard.log");
    let server = Shard::build(SERVER).redis_url(&url).log_to(&log, "debug").start();
    // The lines that could name the URL: the cluster's, and failed
    // connections' (the subscriber's and the publisher's pool's).
    assert!(server.logged("subscribe failed").await && server.logged("publish failed").await, "it tried redis");
    drop(server);
    let log = std::fs::read_to_string(&log).expect("the log");
    assert!(log.contains("clustered"), "log has the cluster line: {log}");
    assert!(!log.contains("hunter2secret"), "password leaked into logs");
}

#[tokio::test]
async fn invalid_messages_from_redis_are_dropped_counted_and_warned_of_once_a_window() {
    // As a shard of another protocol version's bundles are during a rolling
    // upgrade: 20 a second a region. Each is counted; the log has one line.
    let dir = WorkDir::new("invalid-from-redis");
    let log = dir.join("shard.log");
    let redis = Redis::start();
    let a = shard(&redis, 1).log_to(&log, "info").ready().await;
    let _on_a = Player::join(&a, "OnA").await;
    // Three bytes, too short for any FlatBuffer, on the presence channel
    // and on the whole world's one region's (region ids start at 1).
    let channels = ["mino:{main}:presence", "mino:{main.r1}:cells"];
    wait::until("the shard subscribed to both channels", Duration::from_secs(10), || async {
        let numsub = redis.cli(&["PUBSUB", "NUMSUB", channels[0], channels[1]]);
        numsub.lines().skip(1).step_by(2).all(|n| n.trim() == "1").then_some(())
    })
    .await;
    for _ in 0..20 {
        for channel in channels {
            assert_eq!(redis.cli(&["PUBLISH", channel, "bad"]).trim(), "1", "the shard hears {channel}");
        }
    }
    a.wait_metric_at_least("mino_relay_dropped_total{kind=\"invalid\"}", 40.0).await;
    let text = std::fs::read_to_string(&log).expect("the shard's log");
    let lines =
        text.lines().filter(|l| l.contains("WARN") && l.contains("dropping invalid messages from redis")).count();
    assert_eq!(lines, 1, "one warning line for 40 invalid messages within 10 s:\n{text}");
}
