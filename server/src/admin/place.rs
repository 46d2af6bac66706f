//! The place as the admin console shows it: one row a live shard (this one
//! from its own state, the others from their heartbeats in the Redis
//! registry), and the last minutes of players and tick lateness a shard,
//! sampled once a second, for the console's charts.

use crate::cluster::registry::Heartbeat;
use crate::figures::ShardFigures;
use mino_protocol::ShardId;
use serde::{Serialize, Serializer};
use std::collections::VecDeque;
use std::time::Duration;

/// How often the history is sampled.
pub const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);

/// Samples kept: 5 minutes.
pub const HISTORY_SAMPLES: usize = 300;

/// A shard's link to Redis, as the console shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedisState {
    /// Its heartbeats reach Redis.
    Up,
    /// Up, but it holds back publishing until Redis says which of its
    /// players were resumed elsewhere (after a stall or an outage).
    Fenced,
    /// Its last heartbeat did not reach Redis.
    Down,
    /// It runs without Redis.
    Standalone,
    /// Another shard's, while this one cannot reach Redis: its row is its
    /// last heartbeat read before, which may no longer be so.
    Unknown,
}

impl RedisState {
    /// The console's (and the JSON's) name for it.
    pub fn label(self) -> &'static str {
        match self {
            RedisState::Up => "up",
            RedisState::Fenced => "fenced",
            RedisState::Down => "down",
            RedisState::Standalone => "standalone",
            RedisState::Unknown => "unknown",
        }
    }
}

/// Whether a shard takes players.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardState {
    /// It admits players (its `/readyz` is 200).
    Ready,
    /// It moves its players to the others and exits once empty.
    Draining,
    /// It is stopping.
    Stopping,
    /// It cannot reach Redis.
    RedisDown,
    /// Another process holds its shard id (the same id started twice).
    IdTaken,
}

impl ShardState {
    /// The console's (and the JSON's) name for it.
    pub fn label(self) -> &'static str {
        match self {
            ShardState::Ready => "ready",
            ShardState::Draining => "draining",
            ShardState::Stopping => "stopping",
            ShardState::RedisDown => "redis_down",
            ShardState::IdTaken => "id_taken",
        }
    }
}

/// Serializes an enum as its `label()`.
macro_rules! serialize_label {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.label())
            }
        }
    };
}
serialize_label!(RedisState);
serialize_label!(ShardState);

/// A drain under way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DrainProgress {
    /// Players when it began.
    pub from: u32,
    /// Players still there.
    pub left: u32,
}

/// One shard of the place, as the console shows it (JSON).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShardRow {
    /// Its id.
    pub id: u32,
    /// True for the shard answering.
    pub here: bool,
    /// Players on it.
    pub players: u32,
    /// Its `--max-players`.
    pub max_players: u32,
    /// True while its busy rule refuses players.
    pub overloaded: bool,
    /// Configured tick rate, Hz.
    pub tick_hz: u16,
    /// Ticks run a second, over the last 10 s.
    pub ticks_per_s: f32,
    /// Tick lateness p99 over the last 10 s, ms.
    pub lateness_p99_ms: f32,
    /// Relayed frames' age p99 over the last 10 s, ms (`null`: none relayed).
    pub relay_lag_p99_ms: Option<f32>,
    /// Its link to Redis.
    pub redis: RedisState,
    /// Whether it takes players.
    pub state: ShardState,
    /// The drain under way, if any.
    pub drain: Option<DrainProgress>,
    /// `mino-server --version`.
    pub version: String,
    /// Since its process started, ms.
    pub uptime_ms: u64,
    /// Its admin listener, if any.
    pub admin: Option<String>,
}

/// What this shard knows of itself besides its figures.
#[derive(Clone, Copy, Debug)]
pub struct OwnState {
    /// This shard.
    pub id: ShardId,
    /// Players here.
    pub players: u32,
    /// The busy rule refuses players.
    pub overloaded: bool,
    /// Its link to Redis.
    pub redis: RedisState,
    /// Whether it takes players.
    pub state: ShardState,
}

/// The row of this shard.
pub fn own_row(own: OwnState, figures: &ShardFigures) -> ShardRow {
    row(own.id, true, own.players, own.overloaded, own.redis, own.state, figures)
}

/// Every live shard's row, by id: this one (`own`), and the others from
/// their last heartbeats read. While this shard cannot reach Redis those are
/// out of date: their Redis is shown as unknown, not as up.
pub fn rows<'a>(own: ShardRow, peers: impl Iterator<Item = (ShardId, &'a Heartbeat)>) -> Vec<ShardRow> {
    let cut_off = own.redis == RedisState::Down;
    let mut rows = vec![own];
    rows.extend(peers.map(|(id, beat)| {
        let row = peer_row(id, beat);
        if cut_off {
            ShardRow { redis: RedisState::Unknown, ..row }
        } else {
            row
        }
    }));
    rows.sort_by_key(|r| r.id);
    rows
}

/// The row of another shard, from its heartbeat (written only while it
/// reaches Redis, so its Redis is up or fenced).
pub fn peer_row(id: ShardId, beat: &Heartbeat) -> ShardRow {
    let f = &beat.figures;
    let redis = if f.fenced { RedisState::Fenced } else { RedisState::Up };
    let state = if f.drain_from.is_some() { ShardState::Draining } else { ShardState::Ready };
    row(id, false, beat.players as u32, beat.overloaded, redis, state, f)
}

fn row(
    id: ShardId,
    here: bool,
    players: u32,
    overloaded: bool,
    redis: RedisState,
    state: ShardState,
    f: &ShardFigures,
) -> ShardRow {
    ShardRow {
        id: id.0,
        here,
        players,
        max_players: f.max_players,
        overloaded,
        tick_hz: f.tick_hz,
        ticks_per_s: f.ticks_per_s,
        lateness_p99_ms: f.lateness_p99_ms,
        relay_lag_p99_ms: f.relay_lag_p99_ms,
        redis,
        state,
        drain: f.drain_from.map(|from| DrainProgress { from, left: players }),
        version: f.version.clone(),
        uptime_ms: f.uptime_ms,
        admin: f.admin.clone(),
    }
}

/// One shard in one sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SampleShard {
    /// Its id.
    pub id: u32,
    /// Players on it.
    pub players: u32,
    /// Tick lateness p99 over the 10 s before, ms.
    pub lateness_p99_ms: f32,
}

/// The live shards at one moment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// When, ms since the Unix epoch (this shard's clock).
    pub at_ms: u64,
    /// Every live shard then.
    pub shards: Vec<SampleShard>,
}

/// The last [`HISTORY_SAMPLES`] samples (JSON: `interval_ms` and `samples`,
/// oldest first).
#[derive(Clone, Debug, Default, Serialize)]
pub struct History {
    /// Between samples, ms.
    pub interval_ms: u64,
    /// Oldest first.
    pub samples: VecDeque<Sample>,
}

impl History {
    /// An empty history.
    pub fn new() -> History {
        History { interval_ms: SAMPLE_INTERVAL.as_millis() as u64, samples: VecDeque::new() }
    }

    /// Adds a sample of `rows` at `at_ms`, dropping the oldest past
    /// [`HISTORY_SAMPLES`].
    pub fn push(&mut self, at_ms: u64, rows: &[ShardRow]) {
        let shards = rows
            .iter()
            .map(|r| SampleShard { id: r.id, players: r.players, lateness_p99_ms: r.lateness_p99_ms })
            .collect();
        self.samples.push_back(Sample { at_ms, shards });
        while self.samples.len() > HISTORY_SAMPLES {
            self.samples.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures() -> ShardFigures {
        ShardFigures {
            tick_hz: 20,
            ticks_per_s: 19.9,
            lateness_p99_ms: 2.5,
            max_players: 5000,
            version: "0.1.0".into(),
            uptime_ms: 60_000,
            ..ShardFigures::default()
        }
    }

    #[test]
    fn a_peer_row_comes_from_its_heartbeat_and_shows_its_drain() {
        let beat = Heartbeat {
            players: 120,
            overloaded: false,
            published_ms: 1,
            epoch: 7,
            figures: ShardFigures { drain_from: Some(300), ..figures() },
        };
        let row = peer_row(ShardId(2), &beat);
        assert_eq!((row.id, row.here, row.players, row.state), (2, false, 120, ShardState::Draining));
        assert_eq!(row.drain, Some(DrainProgress { from: 300, left: 120 }));
        assert_eq!(row.redis, RedisState::Up);
        let json = serde_json::to_value(&row).expect("json");
        assert_eq!((json["state"].as_str(), json["redis"].as_str()), (Some("draining"), Some("up")));
        assert_eq!(json["drain"]["from"], 300);
        assert!(json["relay_lag_p99_ms"].is_null());
    }

    #[test]
    fn peers_read_before_this_shard_lost_redis_show_their_redis_as_unknown() {
        let own = |redis| OwnState { id: ShardId(1), players: 3, overloaded: false, redis, state: ShardState::Ready };
        let beat = Heartbeat { players: 20, overloaded: false, published_ms: 1, epoch: 7, figures: figures() };
        for (mine, theirs) in [(RedisState::Up, RedisState::Up), (RedisState::Down, RedisState::Unknown)] {
            let rows = rows(own_row(own(mine), &figures()), [(ShardId(2), &beat)].into_iter());
            let seen: Vec<_> = rows.iter().map(|r| (r.id, r.redis)).collect();
            assert_eq!(seen, [(1, mine), (2, theirs)]);
        }
        let json = serde_json::to_value(RedisState::Unknown).expect("json");
        assert_eq!(json, "unknown");
    }

    #[test]
    fn the_heartbeat_json_carries_the_figures_beside_its_own_fields() {
        let beat = Heartbeat { players: 3, overloaded: true, published_ms: 9, epoch: 5, figures: figures() };
        let json = serde_json::to_string(&beat).expect("json");
        assert!(json.contains("\"players\":3") && json.contains("\"tick_hz\":20"), "{json}");
        assert!(json.contains("\"epoch\":5"), "the registry's own fields stay beside the figures: {json}");
        let back: Heartbeat = serde_json::from_str(&json).expect("parse");
        assert_eq!(back, beat);
        let old: Heartbeat = serde_json::from_str(r#"{"players":4,"overloaded":false,"published_ms":1}"#).expect("old");
        assert_eq!((old.players, old.figures.tick_hz), (4, 0), "an older shard's heartbeat still reads");
    }

    #[test]
    fn history_keeps_the_last_five_minutes() {
        let mut h = History::new();
        let own = OwnState {
            id: ShardId(1),
            players: 7,
            overloaded: false,
            redis: RedisState::Standalone,
            state: ShardState::Ready,
        };
        let rows = [own_row(own, &figures())];
        for i in 0..(HISTORY_SAMPLES as u64 + 20) {
            h.push(i * 1000, &rows);
        }
        assert_eq!(h.samples.len(), HISTORY_SAMPLES);
        assert_eq!(h.samples.front().map(|s| s.at_ms), Some(20_000));
        assert_eq!(
            h.samples.back().map(|s| s.shards[0]),
            Some(SampleShard { id: 1, players: 7, lateness_p99_ms: 2.5 })
        );
    }
}
