//! Frames that are not messages against a per-socket budget: a ping flood
//! closes with the flood code (4019) within its burst, other players keep
//! their ticks, and pings within the budget are answered in the tick's one
//! write (the newest only), so writes stay one a socket a tick; a message in
//! endless empty fragments closes as too big (1009) at its fragment limit,
//! where it once held every tick of the shard for as long as it lasted.

use mino_testkit::raw::{frame, masked, op, RawSocket};
use mino_testkit::{Player, Shard};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn a_ping_flood_closes_with_the_flood_code_and_spares_the_others() {
    let server = Shard::start(SERVER, &[]);
    let mut bystander = Player::join(&server, "Bystander").await;
    let (flooder, _) = RawSocket::join(server.addr, "Flooder").await;
    // 125-byte pings back to back, 1,000 a write, for at most 10 s.
    let burst: Vec<u8> = (0..1000).flat_map(|_| masked(op::PING, &[b'p'; 125])).collect();
    let started = Instant::now();
    let (mut reader, mut writer) = flooder.split();
    let flood = tokio::spawn(async move {
        let mut sent = 0u64;
        while started.elapsed() < Duration::from_secs(10) && writer.send_raw(&burst).await {
            sent += 1000;
        }
        sent
    });
    let end = reader.ending().await;
    let closed_in = started.elapsed();
    assert_eq!((end.code, end.error), (Some(4019), Some(4019)), "{end:?}");
    assert_eq!(end.reason, "too many pings");
    assert!(closed_in < Duration::from_secs(3), "closed within its burst, not after the flood: {closed_in:?}");
    let sent = flood.await.expect("flooder");
    assert!(sent > 0);
    let series = "mino_sockets_closed_total{transport=\"websocket\",reason=\"control_flood\"}";
    assert_eq!(server.metric(series).await, 1.0);
    let before = bystander.own_position().await.0;
    let after = bystander.own_position().await.0;
    assert!(after > before, "the bystander still ticks");
}

#[tokio::test]
async fn pings_within_the_budget_ride_the_ticks_write_and_the_newest_is_answered() {
    let server = Shard::start(SERVER, &["--control-rate", "20"]);
    let (mut s, _) = RawSocket::join(server.addr, "Pinger").await;
    // Five pings in one packet: one tick's write answers the newest.
    let five: Vec<u8> = (b'1'..=b'5').flat_map(|n| masked(op::PING, &[n])).collect();
    assert!(s.send_raw(&five).await);
    let mut pongs = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(2);
    while pongs.last() != Some(&b"5".to_vec()) && Instant::now() < deadline {
        let f = s.next().await.expect("frames");
        if f.opcode == op::PONG {
            pongs.push(f.payload);
        }
    }
    assert_eq!(pongs.last(), Some(&b"5".to_vec()), "the newest ping is answered: {pongs:?}");
    assert!(pongs.len() <= 2, "one pong a tick, not one a ping: {pongs:?}");
    // A ping every 2 ticks (10 a second) for 40 ticks: writes stay one a
    // socket a tick.
    let (mut reader, mut writer) = s.split();
    let drain = tokio::spawn(async move { while reader.next().await.is_some() {} });
    let (writes0, ticks0) = (server.metric("mino_writes_total").await, server.metric("mino_ticks_total").await);
    for i in 0..20u8 {
        assert!(writer.send_raw(&masked(op::PING, &[i])).await);
        server.wait_ticks(2).await;
    }
    let (writes1, ticks1) = (server.metric("mino_writes_total").await, server.metric("mino_ticks_total").await);
    let per_tick = (writes1 - writes0) / (ticks1 - ticks0);
    assert!(per_tick <= 1.1, "{per_tick:.2} writes per socket per tick");
    assert_eq!(server.metric("mino_sockets_closed_total{transport=\"websocket\",reason=\"control_flood\"}").await, 0.0);
    drop(writer);
    drain.abort();
}

#[tokio::test]
async fn a_message_of_endless_empty_fragments_closes_as_too_big_and_no_tick_waits_for_it() {
    let server = Shard::start(SERVER, &[]);
    let mut bystander = Player::join(&server, "Bystander").await;
    let (flooder, _) = RawSocket::join(server.addr, "Flooder").await;
    let skipped = server.metric("mino_ticks_skipped_total").await;
    // A binary message begun and never finished: empty continuation
    // frames back to back, 1,000 a write, for at most 5 s.
    let mut burst = frame(false, 0, op::BINARY, true, &[]);
    burst.extend((0..1000).flat_map(|_| frame(false, 0, op::CONTINUATION, true, &[])));
    let started = Instant::now();
    let (mut reader, mut writer) = flooder.split();
    let flood =
        tokio::spawn(
            async move { while started.elapsed() < Duration::from_secs(5) && writer.send_raw(&burst).await {} },
        );
    let end = reader.ending().await;
    assert_eq!(end.code, Some(1009), "{end:?}");
    assert!(started.elapsed() < Duration::from_secs(2), "closed at its limit: {:?}", started.elapsed());
    flood.await.expect("flooder");
    assert_eq!(server.metric("mino_sockets_closed_total{transport=\"websocket\",reason=\"too_big\"}").await, 1.0);
    let before = bystander.own_position().await.0;
    let after = bystander.own_position().await.0;
    assert!(after > before, "the bystander still ticks");
    let skipped = server.metric("mino_ticks_skipped_total").await - skipped;
    assert!(skipped <= 2.0, "{skipped} ticks skipped");
}
