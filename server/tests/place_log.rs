//! What a surviving shard logs at info during a failover: the dead shard
//! leaving its view (with its player count), the players resumed here as one
//! line with counts (not a line a player), and the shard rejoining the view
//! once restarted.

use mino_testkit::{wait, Frame, Player, Redis, Shard, Signal, WorkDir, WAIT};
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

const PLAYERS: usize = 4;

fn flags(redis: &Redis, id: u32) -> Vec<String> {
    ["--redis-url", &redis.url(), "--shard-id", &id.to_string(), "--shard-ttl-ms", "1000", "--heartbeat-ms", "200"]
        .map(str::to_owned)
        .to_vec()
}

/// Waits until `log` has `at_least` lines containing every one of `parts`;
/// returns the lines that do.
async fn lines_with(log: &Path, parts: &[&str], at_least: usize) -> Vec<String> {
    let what = format!("{at_least} lines with {parts:?} in {}", log.display());
    wait::until(&what, WAIT, || async {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let found: Vec<String> =
            text.lines().filter(|l| parts.iter().all(|p| l.contains(p))).map(str::to_owned).collect();
        (found.len() >= at_least).then_some(found)
    })
    .await
}

#[tokio::test]
async fn a_failover_is_told_at_info_with_counts() {
    let redis = Redis::start();
    let dir = WorkDir::new("place-log");
    let log = dir.join("survivor.log");
    let survivor_flags = flags(&redis, 1);
    let args: Vec<&str> = survivor_flags.iter().map(String::as_str).collect();
    // info for the shard's own lines, as an operator runs it.
    let survivor = Shard::start_logging_to(SERVER, &args, &log, "info");
    survivor.wait_ready().await;
    let doomed_flags = flags(&redis, 2);
    let doomed_args: Vec<&str> = doomed_flags.iter().map(String::as_str).collect();
    let mut doomed = Shard::start(SERVER, &doomed_args);
    doomed.wait_ready().await;
    lines_with(&log, &["INFO", "shard 00000002 joined this place's view"], 1).await;

    let mut observer = Player::join(&survivor, "observer").await;
    let mut on_doomed = Vec::new();
    for i in 0..PLAYERS {
        on_doomed.push(Player::join(&doomed, &format!("p{i}")).await);
    }
    let tickets: Vec<Vec<u8>> = on_doomed.iter().map(Player::ticket).collect();
    let mut ids: HashSet<u32> = on_doomed.iter().map(Player::id).collect();
    // The survivor knows the doomed shard's players before it dies: its
    // player saw them join.
    while !ids.is_empty() {
        let joined =
            observer.until(|f| if let Frame::Presence { joined, .. } = f { Some(joined.clone()) } else { None }).await;
        for (id, _) in joined {
            ids.remove(&id);
        }
    }

    doomed.signal(Signal::SIGKILL);
    doomed.wait_exit(Duration::from_secs(5)).expect("killed");
    drop(on_doomed);
    let mut resumed = Vec::new();
    for ticket in &tickets {
        resumed.push(Player::hello(&survivor, "ignored", Some(ticket)).await.expect("resumed"));
    }

    let left = lines_with(&log, &["INFO", "shard 00000002 left this place's view"], 1).await;
    assert!(left[0].contains(&format!("({PLAYERS} players were on it)")), "{left:?}");
    let counted = lines_with(&log, &["INFO", "players resumed here"], 1).await;
    assert_eq!(counted.len(), 1, "one line for the whole failover, not one a player: {counted:?}");
    assert!(counted[0].contains(&format!("from shard 00000002: {PLAYERS}")), "{counted:?}");

    // Shard 2 comes back: the survivor says so.
    let back = Shard::start(SERVER, &doomed_args);
    back.wait_ready().await;
    let joined = lines_with(&log, &["INFO", "shard 00000002 joined this place's view"], 2).await;
    assert_eq!(joined.len(), 2, "at the start and again after the restart: {joined:?}");
    let text = std::fs::read_to_string(&log).expect("log");
    assert_eq!(text.matches("players resumed here").count(), 1, "one line for the failover:\n{text}");
    drop((resumed, observer));
}
