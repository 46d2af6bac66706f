//! The bot library against the real server: a walking bot tracks its own
//! position, the client API moves a player at the server's speed, and a bot
//! whose server restarts reconnects by itself.

use mino_loadgen::event::ServerEvent;
use mino_loadgen::reconnect::StopReason;
use mino_loadgen::stats::Metric;
use mino_loadgen::steer::Movement;
use mino_loadgen::target::SourceAddrs;
use mino_loadgen::{
    Bot, BotConfig, BotState, Client, JoinRequest, Profile, ProfileName, ReconnectPolicy, Stats, Target,
};
use mino_protocol::held::{Held, Update};
use mino_protocol::view::tick_time_ms;
use mino_testkit::{server_bin, Shard};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::{timeout, Instant};
use tokio_util::sync::CancellationToken;

async fn config(urls: &[String], profile: ProfileName) -> BotConfig {
    let mut targets = Vec::new();
    for u in urls {
        targets.push(Target::resolve(u).await.expect("resolves"));
    }
    let sources = SourceAddrs::for_targets(&targets, 4);
    BotConfig {
        index: 0,
        name: "tester".into(),
        targets: targets.into(),
        target_slot: 0,
        sources: Arc::new(sources),
        profile: Profile::of(profile),
        policy: ReconnectPolicy::default(),
        join_timeout: Duration::from_secs(5),
        frames: mino_loadgen::client::Frames::Deltas,
        transport: mino_loadgen::Transport::WebSocket,
        seed: 7,
        movement: Movement::Wander,
        positions: None,
        observer: false,
    }
}

async fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walker_tracks_its_own_position_and_stops_cleanly() {
    let server = Shard::start(server_bin(), &[]);
    let stats = Arc::new(Stats::new());
    let bot = Bot::new(config(&[server.ws_url()], ProfileName::Walker).await, stats.clone());
    let shared = bot.shared();
    let cancel = CancellationToken::new();
    let task = tokio::spawn(bot.run(cancel.clone()));
    wait_for("welcome", Duration::from_secs(5), || shared.is_connected()).await;
    let first = shared.position().expect("welcome position");
    wait_for("walking", Duration::from_secs(5), || shared.position().is_some_and(|p| p != first)).await;
    let (x, y) = shared.position().expect("position");
    assert!((0.0..=1000.0).contains(&x) && (0.0..=1000.0).contains(&y));
    tokio::time::sleep(Duration::from_millis(500)).await;
    cancel.cancel();
    let report = timeout(Duration::from_secs(5), task).await.expect("stops").expect("joins");
    assert_eq!(report.stop, StopReason::Stopped);
    assert_eq!((report.welcomes, report.player_id), (1, shared.player_id()));
    assert_eq!(shared.state(), BotState::Stopped);
    let w = stats.take_window();
    assert_eq!(w.latencies.summary(Metric::Welcome).count, 1);
    assert!(w.latencies.summary(Metric::SnapshotGap).count >= 5);
    assert_eq!(w.counters.disconnects, 0, "a stop is not a disconnect");
}

#[tokio::test]
async fn client_input_walks_the_player_at_the_servers_speed() {
    let server = Shard::start(server_bin(), &["--speed", "100"]);
    let target = Target::resolve(&server.ws_url()).await.expect("target");
    let req = JoinRequest { name: "walker", ..Default::default() };
    let (mut client, welcome) = Client::join(&target, None, req, Duration::from_secs(5)).await.expect("welcome");
    assert_eq!((welcome.speed, welcome.tick_hz, welcome.resumed), (100.0, 20, false));
    let dir = if welcome.position.0 < 500.0 { 1.0 } else { -1.0 };
    client.send_input(dir, 0.0).await.expect("input");
    // The player as the view frames show it, applied to what the client
    // holds; each sample at its tick's time.
    let mut held = Held::for_place(
        &welcome.bounds,
        welcome.speed,
        welcome.tick_hz,
        (welcome.cell_size, welcome.view_radius),
        usize::MAX,
    );
    let mut samples = Vec::new();
    let end = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < end {
        let Ok(Ok(ServerEvent::View(v))) = timeout(Duration::from_secs(2), client.recv_event()).await else {
            continue;
        };
        let frame = v.frame().expect("verified");
        for update in held.apply(&frame).expect("applies") {
            let Update::Cell { shard, cell, tick } = update else { continue };
            let entries = held.cell(shard, cell).map(|c| c.entries).unwrap_or_default();
            if let Some(p) = entries.iter().find(|p| p.id == welcome.player_id && p.moving()) {
                let time_ms = tick_time_ms(tick, welcome.tick_hz, welcome.server_time_ms);
                samples.push((time_ms, p.position(&welcome.bounds).0));
            }
        }
    }
    let (&(t0, x0), &(t1, x1)) = (samples.first().expect("moving"), samples.last().expect("moving"));
    let speed = (x1 - x0).abs() / ((t1 - t0) as f32 / 1000.0);
    assert!((90.0..=110.0).contains(&speed), "speed {speed} from {} samples", samples.len());
    client.close(Duration::from_millis(500)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bot_reconnects_by_itself_when_its_server_comes_back() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let listen = format!("127.0.0.1:{port}");
    let first = Shard::start_on(server_bin(), &listen, &[]);
    let stats = Arc::new(Stats::new());
    let bot = Bot::new(config(&[first.ws_url()], ProfileName::Walker).await, stats.clone());
    let shared = bot.shared();
    let cancel = CancellationToken::new();
    let task = tokio::spawn(bot.run(cancel.clone()));
    wait_for("first welcome", Duration::from_secs(5), || shared.welcomes() == 1).await;
    drop(first);
    wait_for("the loss", Duration::from_secs(5), || !shared.is_connected()).await;
    let _second = Shard::start_on(server_bin(), &listen, &[]);
    wait_for("second welcome", Duration::from_secs(10), || shared.welcomes() == 2 && shared.is_connected()).await;
    cancel.cancel();
    let _ = timeout(Duration::from_secs(5), task).await.expect("stops");
    let c = stats.totals();
    assert_eq!(c.disconnects, 1);
    assert_eq!(c.fresh_rejoins, 1, "a restarted standalone server has no tickets");
    assert!(c.errors_of(mino_loadgen::failure::FailureKind::ConnectionLost) == 1, "{:?}", c.error_kinds());
}
