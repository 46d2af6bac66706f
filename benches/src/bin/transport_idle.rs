//! `transport_idle`: what a standing player costs the shard on each
//! transport, side by side in one run: N websockets (taking deltas, as the
//! browser does) against N WebTransport sessions (served full forms as
//! datagrams), each on a fresh `mino-server` started with
//! `--webtransport-listen`. Reports, median over the rounds: the server's
//! RSS growth per connection (RSS with the N players joined and settled,
//! less RSS before the first), and its CPU per player per tick over a
//! window of standing (user + system time from /proc, ÷ players ÷ ticks).
//!
//! ```text
//! cargo build --release -p mino-server -p mino-benches --bin transport_idle
//! target/release/transport_idle --players 500 --rounds 3
//! ```
//!
//! The players stand one a cell (`--world-size`, `--cell-size 125`), so a
//! websocket is written nothing after its first frames, while a session is
//! sent its due cells' full forms every due tick (the rule for datagrams
//! today); both read what comes (the test kit's clients, in this process).

use clap::Parser;
use mino_testkit::process::{cpu, rss_bytes};
use mino_testkit::{Player, Shard, TransportPlayer};
use std::path::PathBuf;
use std::time::Duration;

/// Flags.
#[derive(Parser, Debug)]
struct Args {
    /// The server binary (default: mino-server beside this program, where
    /// the same cargo build put it, CARGO_TARGET_DIR or target/).
    #[arg(long, default_value_os_t = mino_testkit::shard::bin_dir().join("mino-server"))]
    server: PathBuf,
    /// Players a round.
    #[arg(long, default_value_t = 500)]
    players: usize,
    /// Rounds of each transport (the median is reported).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// The CPU window, seconds.
    #[arg(long, default_value_t = 10)]
    window_s: u64,
}

/// Which transport a round's players use.
#[derive(Clone, Copy, Debug)]
enum Transport {
    WebSocket,
    WebTransport,
}

impl Transport {
    fn label(self) -> &'static str {
        match self {
            Transport::WebSocket => "websocket",
            Transport::WebTransport => "webtransport",
        }
    }
}

/// One round's figures: bytes of RSS per player, µs of CPU per player per tick.
struct Round {
    rss_per_player: f64,
    cpu_us_per_player_tick: f64,
}

/// Ticks a second of the shard.
const TICK_HZ: f64 = 20.0;

async fn round(args: &Args, transport: Transport) -> Round {
    let world = ((args.players as f64).sqrt().ceil() * 125.0 * 2.0).to_string();
    let flags = [
        "--webtransport-listen",
        "127.0.0.1:0",
        "--world-size",
        &world,
        "--cell-size",
        "125",
        "--max-players",
        "100000",
    ];
    let shard = Shard::start(&args.server, &flags);
    shard.wait_ticks(20).await;
    let pid = shard.pid();
    let before = rss_bytes(pid).expect("the server runs");
    let (mut sockets, mut sessions) = (Vec::new(), Vec::new());
    for i in 0..args.players {
        match transport {
            Transport::WebSocket => sockets.push(Player::join_deltas(&shard, &format!("w{i}")).await),
            Transport::WebTransport => sessions.push(TransportPlayer::join(&shard, &format!("t{i}")).await),
        }
    }
    shard.wait_metric("mino_players", args.players as f64).await;
    // Every client reads what comes, so nothing backs up in the server.
    let drain = tokio::spawn(async move {
        let mut sessions = sessions;
        let mut sockets = sockets;
        loop {
            for s in &mut sessions {
                while let Ok(Ok(_)) = tokio::time::timeout(Duration::from_micros(1), s.conn.receive_datagram()).await {}
            }
            for p in &mut sockets {
                while p.next_within(Duration::from_micros(1)).await.is_some() {}
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss_bytes(pid).expect("the server runs");
    let cpu0 = cpu(pid).expect("the server runs").total();
    tokio::time::sleep(Duration::from_secs(args.window_s)).await;
    let cpu1 = cpu(pid).expect("the server runs").total();
    drain.abort();
    let players = args.players as f64;
    let cpu_s = cpu1.saturating_sub(cpu0).as_secs_f64();
    Round {
        rss_per_player: after.saturating_sub(before) as f64 / players,
        cpu_us_per_player_tick: cpu_s * 1e6 / players / (args.window_s as f64 * TICK_HZ),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    println!("| transport | players | server RSS a player (median) | server CPU a player a tick (median) | rounds |");
    println!("|---|---|---|---|---|");
    for transport in [Transport::WebSocket, Transport::WebTransport] {
        let mut rss = Vec::new();
        let mut cpu = Vec::new();
        let mut raw = Vec::new();
        for _ in 0..args.rounds {
            let r = round(&args, transport).await;
            raw.push(format!("{:.0} B / {:.2} µs", r.rss_per_player, r.cpu_us_per_player_tick));
            rss.push(r.rss_per_player);
            cpu.push(r.cpu_us_per_player_tick);
        }
        println!(
            "| {} | {} | {:.1} KB | {:.2} µs | {} |",
            transport.label(),
            args.players,
            median(rss) / 1024.0,
            median(cpu),
            raw.join(", ")
        );
    }
}
