//! Measures a ping flood against a real shard (issue 14, item 1): one player
//! sends 125-byte pings back to back for a while, another plays normally.
//! Prints what the flood cost: the shard's writes per socket per tick, its
//! CPU, the bystander's snapshot gap percentiles, the pongs the flooder got
//! and how (and when) the flooder was closed.
//!
//! ```sh
//! cargo build --release -p mino-server
//! cargo run -p mino-server --example ping_flood -- target/release/mino-server 10
//! ```
//!
//! Arguments: the server binary (default: the test kit's choice, see
//! `mino_testkit::server_bin`), the flood's length in seconds (default 10),
//! then any server flags (e.g. `--control-rate 10000` to watch the pongs
//! coalesce into the tick's write while the budget lasts).

use mino_testkit::process::cpu;
use mino_testkit::raw::{masked, op, RawSocket};
use mino_testkit::{server_bin, Frame, Player, Shard};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Pings per write of the flooder.
const BURST: usize = 1000;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let bin = args.next().map(PathBuf::from).unwrap_or_else(server_bin);
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let flags: Vec<String> = args.collect();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Shard::start(&bin, &flags);
    let mut bystander = Player::join(&server, "Bystander").await;
    let (flooder, _) = RawSocket::join(server.addr, "Flooder").await;
    // Settle, then measure the flood window only.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (writes0, ticks0) = (server.metric("mino_writes_total").await, server.metric("mino_ticks_total").await);
    let cpu0 = cpu(server.pid()).unwrap_or_default();
    let started = Instant::now();
    let window = Duration::from_secs(seconds);

    let (mut reader, mut writer) = flooder.split();
    let burst: Vec<u8> = (0..BURST).flat_map(|_| masked(op::PING, &[b'p'; 125])).collect();
    let flood = tokio::spawn(async move {
        let mut sent = 0u64;
        while started.elapsed() < window && writer.send_raw(&burst).await {
            sent += BURST as u64;
        }
        sent
    });
    let pongs = tokio::spawn(async move {
        let (mut pongs, mut bytes) = (0u64, 0u64);
        loop {
            match tokio::time::timeout(window + Duration::from_secs(1), reader.next()).await {
                Ok(Some(f)) if f.opcode == op::PONG => {
                    pongs += 1;
                    bytes += f.payload.len() as u64 + 2;
                }
                Ok(Some(f)) if f.opcode == op::CLOSE => return (pongs, bytes, f.close_code(), Some(started.elapsed())),
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => return (pongs, bytes, None, None),
            }
        }
    });

    let mut gaps = Vec::new();
    let mut last = None;
    while started.elapsed() < window {
        if let Frame::Snapshot { .. } | Frame::Cell(_) = bystander.next().await {
            let now = Instant::now();
            if let Some(prev) = last.replace(now) {
                gaps.push(now.duration_since(prev).as_secs_f64() * 1000.0);
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu1 = cpu(server.pid()).unwrap_or_default();
    let (writes1, ticks1) = (server.metric("mino_writes_total").await, server.metric("mino_ticks_total").await);
    let sent = flood.await.unwrap_or(0);
    let (pongs, pong_bytes, close, closed_after) = pongs.await.unwrap_or((0, 0, None, None));

    gaps.sort_by(f64::total_cmp);
    let pct = |p: f64| gaps.get(((gaps.len() as f64 * p) as usize).min(gaps.len().saturating_sub(1))).copied();
    let (writes, ticks) = (writes1 - writes0, ticks1 - ticks0);
    println!("server: {}", bin.display());
    println!("flood: {seconds} s of 125-byte pings, {sent} sent ({:.0}/s)", sent as f64 / elapsed);
    println!(
        "flooder: {pongs} pongs ({:.1} MB) received; closed with {close:?} after {closed_after:?}",
        pong_bytes as f64 / 1e6
    );
    println!(
        "server writes: {writes} in {ticks} ticks = {:.2} a tick for 2 sockets ({:.2} a socket a tick)",
        writes / ticks,
        writes / ticks / 2.0
    );
    println!("server CPU: {:.0} % of one core", cpu1.since(&cpu0).total().as_secs_f64() / elapsed * 100.0);
    println!(
        "bystander gap ms: p50 {:.1}, p99 {:.1}, max {:.1} ({} gaps)",
        pct(0.5).unwrap_or(0.0),
        pct(0.99).unwrap_or(0.0),
        gaps.last().copied().unwrap_or(0.0),
        gaps.len()
    );
}
