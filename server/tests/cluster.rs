//! Shards of one place share it through Redis: each sees the others' players
//! move, chat and presence cross shards, and relayed bytes are the published
//! bytes unchanged.

use futures_util::StreamExt;
use mino_protocol::client;
use mino_protocol::server::{decode, ServerMsg};
use mino_protocol::view::DeltaWith;
use mino_testkit::{Frame, Player, Redis, Shard, ShardBuilder};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// A shard of the place on `redis`: a 10,000-unit world, walkers at 100
/// units/s.
fn shard(redis: &Redis, id: u32) -> ShardBuilder {
    Shard::build(SERVER).redis(redis).id(id).world_size(10_000.0).speed(100.0)
}

/// Positions of `player` in snapshots of `shard` seen by `c`, for `span`.
async fn track(c: &mut Player, shard: u32, player: u32, span: Duration) -> Vec<(u64, f32, f32)> {
    let deadline = Instant::now() + span;
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Frame::Snapshot { shard: s, time_ms, players, .. } = c.next().await {
            if s == shard {
                seen.extend(players.iter().filter(|p| p.0 == player).map(|p| (time_ms, p.1, p.2)));
            }
        }
    }
    seen
}

#[tokio::test]
async fn players_on_two_shards_see_each_other_move() {
    let redis = Redis::start();
    let a = shard(&redis, 1).ready().await;
    let b = shard(&redis, 2).ready().await;
    let mut on_a = Player::join(&a, "OnA").await;
    let mut on_b = Player::join(&b, "OnB").await;
    assert_ne!(on_a.id(), on_b.id(), "ids are unique across shards");
    // Each sees the other's shard in its snapshots within a couple of seconds.
    let me_b = on_b.id();
    on_a.until(|f| match f {
        Frame::Snapshot { shard: 2, players, .. } if players.iter().any(|p| p.0 == me_b) => Some(()),
        _ => None,
    })
    .await;
    // Toward the middle of the 10,000-unit world: from a spawn near the
    // east edge, walking east would stop at the wall within the window.
    let start_x = on_b.welcome.as_ref().expect("welcome").x;
    let east = if start_x < 5000.0 { 1.0 } else { -1.0 };
    on_b.send(client::encode_input(1, east, 0.0)).await;
    let seen = track(&mut on_a, 2, me_b, Duration::from_millis(2500)).await;
    assert!(seen.len() >= 20, "relayed snapshots of B seen on A: {}", seen.len());
    // Measure from the second snapshot after B started walking (the input
    // lands between two ticks; a loaded machine may take a while).
    let started = seen.iter().position(|s| s.1 != seen[0].1).expect("B walked");
    let walking = &seen[(started + 1).min(seen.len() - 1)..];
    assert!(walking.len() >= 10, "B seen walking in {} snapshots", walking.len());
    let (t0, x0, y0) = walking[0];
    let (t1, x1, y1) = walking[walking.len() - 1];
    let expected = 100.0 * (t1 - t0) as f32 / 1000.0;
    let moved = (x1 - x0) * east;
    assert!((moved - expected).abs() < 6.0, "B moved {moved} its way in its own time, expected {expected}");
    assert!((y1 - y0).abs() < 0.5);
    // And B sees A's player in A's snapshots.
    let me_a = on_a.id();
    on_b.until(|f| match f {
        Frame::Snapshot { shard: 1, players, .. } if players.iter().any(|p| p.0 == me_a) => Some(()),
        _ => None,
    })
    .await;
}

#[tokio::test]
async fn chat_and_presence_cross_three_shards() {
    let redis = Redis::start();
    let (a, b, c) = (shard(&redis, 1).ready().await, shard(&redis, 2).ready().await, shard(&redis, 3).ready().await);
    let mut on_b = Player::join(&b, "OnB").await;
    let mut on_c = Player::join(&c, "OnC").await;
    // The shards see each other before A's player arrives.
    for shard in [&a, &b, &c] {
        shard.wait_metric("mino_cluster_shards", 2.0).await;
    }
    let mut on_a = Player::join(&a, "Ada").await;
    let ada = on_a.id();
    for who in [&mut on_b, &mut on_c] {
        let name = who
            .until(|f| match f {
                Frame::Presence { joined, .. } => joined.iter().find(|(id, _)| *id == ada).map(|(_, n)| n.clone()),
                _ => None,
            })
            .await;
        assert_eq!(name, "Ada");
    }
    // A's roster covers the players of B and C.
    let roster = on_a.until(|f| if let Frame::Roster(r) = f { Some(r.clone()) } else { None }).await;
    let mut names: Vec<_> = roster.iter().map(|(_, n)| n.clone()).collect();
    names.sort();
    assert_eq!(names, ["Ada", "OnB", "OnC"]);
    on_a.send(client::encode_chat("hi from A")).await;
    for who in [&mut on_b, &mut on_c, &mut on_a] {
        let got = who
            .until(|f| match f {
                Frame::Chat { from, text, .. } => Some((*from, text.clone())),
                _ => None,
            })
            .await;
        assert_eq!(got, (ada, "hi from A".to_owned()));
    }
    drop(on_a);
    for who in [&mut on_b, &mut on_c] {
        who.until(|f| match f {
            Frame::Presence { left, .. } if left.contains(&ada) => Some(()),
            _ => None,
        })
        .await;
    }
}

#[tokio::test]
async fn relayed_bytes_equal_published_bytes() {
    let redis = Redis::start();
    let a = shard(&redis, 1).ready().await;
    let b = shard(&redis, 2).ready().await;
    // A walker on A: its cell changes every tick, so deltas flow.
    let mut on_a = Player::join(&a, "OnA").await;
    on_a.send(client::encode_input(1, 0.6, 0.8)).await;
    // Record every item shard 1 publishes on the place's region channel.
    let rc = redis::Client::open(redis.url()).expect("client");
    let mut sub = rc.get_async_pubsub().await.expect("pubsub");
    sub.subscribe("mino:{main.r1}:cells").await.expect("subscribe");
    let recorder = tokio::spawn(async move {
        let mut published: HashSet<Vec<u8>> = HashSet::new();
        let mut stream = sub.on_message();
        let deadline = Instant::now() + Duration::from_secs(4);
        while let Ok(Some(m)) = tokio::time::timeout_at(deadline.into(), stream.next()).await {
            let bytes = m.get_payload_bytes().to_vec();
            let Ok(ServerMsg::CellBundle(b)) = decode(&bytes) else { continue };
            if b.stamp().shard.0 != 1 {
                continue;
            }
            for cell in b.cells() {
                published.insert(b.items()[cell.full.clone()].to_vec());
                // Each delta with its supplements: a view carries the delta's
                // item and some of them, each as published.
                for (_, r) in &cell.deltas {
                    let d = DeltaWith::parse(&b.items()[r.clone()], cell.cell).expect("a delta");
                    published.insert(d.item.to_vec());
                    published.extend(d.supplements().map(|(_, item)| item.to_vec()));
                }
            }
        }
        published
    });
    // What a player on B taking deltas is sent of shard 1's cells.
    let mut on_b = Player::join_deltas(&b, "OnB").await;
    let mut received: Vec<Vec<u8>> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        let m =
            tokio::time::timeout(mino_testkit::WAIT, on_b.ws.next()).await.expect("frame").expect("open").expect("ok");
        let data = m.into_data();
        let Ok(ServerMsg::View(v)) = decode(&data) else { continue };
        for section in v.sections().filter(|s| s.shard == 1) {
            for cell in section.cells() {
                received.extend(cell.items().map(|i| i.bytes.to_vec()));
            }
        }
    }
    let published = recorder.await.expect("recorder");
    assert!(received.len() >= 20, "compared {} relayed items", received.len());
    for item in &received {
        assert!(published.contains(item), "a relayed item is exactly as published: {item:?}");
    }
}

#[tokio::test]
async fn standalone_without_redis_url_ignores_redis() {
    let redis = Redis::start();
    let server = Shard::start(SERVER, &[]);
    let c = Player::join(&server, "Solo").await;
    assert_eq!(c.id(), 1, "local ids");
    assert!(redis.keys().is_empty());
    assert_eq!(server.get("/readyz").await.status, 200);
}
