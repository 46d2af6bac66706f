//! Bots driven by loadgen: a `mino-loadgen` swarm in this process whose only
//! target is one URL (nginx's wss URL, or a shard's own), with the loadgen's
//! reconnect policy (reconnect at once with jitter, then with capped backoff,
//! presenting the resume ticket).

use mino_loadgen::observer::Observers;
use mino_loadgen::profile::{Profile, ProfileName};
use mino_loadgen::progress::Progress;
use mino_loadgen::stats::{CounterValues, Window};
use mino_loadgen::steer::Movement;
use mino_loadgen::swarm::{Swarm, SwarmConfig};
use mino_loadgen::target::SourceAddrs;
use mino_loadgen::{ReconnectPolicy, Target, Transports};
use mino_protocol::PlayerId;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How often the waits look at the bots.
const POLL: Duration = Duration::from_millis(20);

/// Join rate of [`Bots::start`], bots per second.
const RAMP_PER_S: f64 = 50.0;

/// A swarm of bots.
pub struct Bots {
    swarm: Swarm,
}

impl Bots {
    /// Starts `n` bots of `profile` joining `target` at 50 per second, and
    /// returns once all are spawned (not necessarily welcomed).
    pub async fn start(target: Target, n: usize, profile: ProfileName) -> Bots {
        Bots::start_on(target, n, profile, Transports::Websocket).await
    }

    /// Like [`Bots::start`], the bots reaching `target` over `transports`
    /// (WebTransport needs the target's offer:
    /// `mino_loadgen::webtransport::offer`).
    pub async fn start_on(target: Target, n: usize, profile: ProfileName, transports: Transports) -> Bots {
        let config = SwarmConfig {
            targets: Arc::from(vec![target]),
            sources: Arc::new(SourceAddrs::default()),
            profile: Profile::of(profile),
            policy: ReconnectPolicy::default(),
            join_timeout: Duration::from_secs(5),
            frames: mino_loadgen::client::Frames::Deltas,
            transports,
            name_prefix: "bot-".into(),
            seed: 7,
            threads: 0,
            movement: Movement::Wander,
            observers: Observers::default(),
        };
        let mut swarm = Swarm::new(config);
        swarm.ramp_to(n, RAMP_PER_S, &Progress::new(true), &CancellationToken::new()).await;
        Bots { swarm }
    }

    /// Number of bots.
    pub fn len(&self) -> usize {
        self.swarm.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.swarm.is_empty()
    }

    /// Bots in a welcomed session now.
    pub fn connected(&self) -> usize {
        self.swarm.bots().iter().filter(|b| b.is_connected()).count()
    }

    /// Waits until every bot is in a welcomed session and `extra` holds, at
    /// most `limit`. Returns whether it happened.
    pub async fn wait_until(&self, limit: Duration, mut extra: impl FnMut(&Bots) -> bool) -> bool {
        let end = Instant::now() + limit;
        loop {
            if self.connected() == self.len() && extra(self) {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until every bot is in a welcomed session, at most `limit`.
    pub async fn wait_connected(&self, limit: Duration) -> bool {
        self.wait_until(limit, |_| true).await
    }

    /// Welcomes each bot received so far (first join, rejoins and resumes).
    pub fn welcomes(&self) -> Vec<u32> {
        self.swarm.bots().iter().map(|b| b.welcomes()).collect()
    }

    /// Each bot's player id (of its latest Welcome).
    pub fn ids(&self) -> Vec<Option<PlayerId>> {
        self.swarm.bots().iter().map(|b| b.player_id()).collect()
    }

    /// What the bots measured since the last call (or the start): gap and
    /// latency histograms and counters of that window.
    pub fn take_window(&self) -> Window {
        self.swarm.stats().take_window()
    }

    /// Everything counted since the start.
    pub fn totals(&self) -> CounterValues {
        self.swarm.stats().totals()
    }

    /// Largest distance between where a resumed bot last saw itself and where
    /// its first snapshot after resuming put it, world units.
    pub fn max_resume_jump(&self) -> f64 {
        self.swarm.stats().max_resume_jump()
    }

    /// Shard ids seen in the snapshots the bots received.
    pub fn shards_seen(&self) -> Vec<u32> {
        self.swarm.stats().shards_seen()
    }

    /// Snapshots of their own shards the bots received during `window`: at
    /// 20 Hz, about 20 per second per playing bot.
    pub async fn own_snapshots_during(&self, window: Duration) -> u64 {
        let before = self.totals().own_snapshots;
        tokio::time::sleep(window).await;
        self.totals().own_snapshots - before
    }

    /// Stops every bot (each closes politely) and waits for them, at most 5 s.
    pub async fn stop(self) {
        self.swarm.shutdown(Duration::from_secs(5)).await;
    }
}
