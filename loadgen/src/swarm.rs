//! A swarm of bots for one run: spawned at a paced rate, tracked (every task
//! joined at shutdown), counted by state, all recording into one [`Stats`]
//! (in a `--transport mix` run, each bot into its transport's part of it).

use crate::bot::{Bot, BotConfig, BotReport};
use crate::observer::Observers;
use crate::positions::Positions;
use crate::profile::Profile;
use crate::progress::Progress;
use crate::reconnect::ReconnectPolicy;
use crate::stats::Stats;
use crate::status::{BotShared, BotState};
use crate::steer::Movement;
use crate::target::{SourceAddrs, Target};
use crate::threads::BotThreads;
use crate::transport::{Transport, Transports};
use mino_protocol::limits::MAX_NAME_CHARS;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// What every bot of a swarm shares.
#[derive(Clone, Debug)]
pub struct SwarmConfig {
    /// Targets, bots spread round-robin.
    pub targets: Arc<[Target]>,
    /// Local source addresses.
    pub sources: Arc<SourceAddrs>,
    /// Behaviour.
    pub profile: Profile,
    /// Reconnect policy.
    pub policy: ReconnectPolicy,
    /// Join timeout.
    pub join_timeout: Duration,
    /// What view frames the bots ask for.
    pub frames: crate::client::Frames,
    /// Which transport each bot takes.
    pub transports: Transports,
    /// Names are this prefix plus the bot index (cut to 24 characters).
    pub name_prefix: String,
    /// Base random seed.
    pub seed: u64,
    /// Threads the bots run on (see [`BotThreads`]); 0 means one per core.
    pub threads: usize,
    /// Where the bots walk.
    pub movement: Movement,
    /// Which bots observe (area of interest); none by default.
    pub observers: Observers,
}

/// Bots by state at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Census {
    /// Bots spawned.
    pub bots: usize,
    /// In a welcomed session now.
    pub connected: usize,
    /// Connecting or waiting for Welcome now.
    pub joining: usize,
    /// Waiting to retry after Busy now.
    pub busy: usize,
    /// Waiting to retry after a failure now.
    pub retrying: usize,
    /// Stopped for good.
    pub stopped: usize,
    /// Welcomed at least once.
    pub admitted: usize,
    /// Refused with Busy at least once.
    pub ever_busy: usize,
}

impl Census {
    /// The bots of two swarms together.
    pub fn plus(&self, o: &Census) -> Census {
        Census {
            bots: self.bots + o.bots,
            connected: self.connected + o.connected,
            joining: self.joining + o.joining,
            busy: self.busy + o.busy,
            retrying: self.retrying + o.retrying,
            stopped: self.stopped + o.stopped,
            admitted: self.admitted + o.admitted,
            ever_busy: self.ever_busy + o.ever_busy,
        }
    }
}

/// How many bots stood where they should after a wait (see
/// `scenario::plan::Plan::converge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Converged {
    /// Connected bots where they should be.
    pub inside: usize,
    /// Connected bots.
    pub connected: usize,
    /// How long the wait took, s.
    pub seconds: f64,
}

impl Converged {
    /// The bots of two swarms together (the longer wait kept).
    pub fn plus(&self, o: &Converged) -> Converged {
        Converged {
            inside: self.inside + o.inside,
            connected: self.connected + o.connected,
            seconds: self.seconds.max(o.seconds),
        }
    }
}

/// What one bot has received so far (see [`Swarm::received`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// Payload bytes of every message, bytes.
    pub bytes: u64,
    /// Of those, the cells', bytes.
    pub cell_bytes: u64,
    /// Welcomes so far (a new one means a new session).
    pub welcomes: u32,
    /// In a welcomed session now.
    pub connected: bool,
}

/// The bots of one run.
pub struct Swarm {
    config: SwarmConfig,
    stats: Arc<Stats>,
    /// A mix's parts: each transport's bots record here (and so in `stats`).
    parts: Option<[Arc<Stats>; 2]>,
    cancel: CancellationToken,
    tracker: TaskTracker,
    bots: Vec<Arc<BotShared>>,
    handles: Vec<JoinHandle<BotReport>>,
    threads: Option<BotThreads>,
    positions: Option<Arc<Positions>>,
    numbering: (usize, usize),
}

/// `prefix` + `index`, cut so the whole fits a name.
pub fn bot_name(prefix: &str, index: usize) -> String {
    let suffix = index.to_string();
    let keep = MAX_NAME_CHARS.saturating_sub(suffix.len());
    let mut name: String = prefix.chars().take(keep).collect();
    name.push_str(&suffix);
    name
}

impl Swarm {
    /// An empty swarm and the threads its bots will run on. Its bots run until
    /// [`Swarm::shutdown`], so a run that is stopped early can still count them
    /// before they close. If the threads cannot be started, the bots run on
    /// the caller's runtime (and a warning says so). With observers, the
    /// shared position table has a slot for each of `config.observers.bots`
    /// bots (bots past it neither publish nor observe).
    pub fn new(config: SwarmConfig) -> Swarm {
        let positions = (config.observers.count > 0).then(|| Arc::new(Positions::new(config.observers.bots)));
        let n = if config.threads == 0 { crate::meter::available_cores() } else { config.threads };
        let threads = BotThreads::start(n)
            .inspect_err(|e| tracing::warn!("bot threads not started ({e}); bots share the main runtime"))
            .ok();
        let stats = Arc::new(Stats::new());
        let parts =
            config.transports.is_mix().then(|| std::array::from_fn(|_| Arc::new(Stats::part_of(stats.clone()))));
        Swarm {
            config,
            stats,
            parts,
            cancel: CancellationToken::new(),
            tracker: TaskTracker::new(),
            bots: Vec::new(),
            handles: Vec::new(),
            threads,
            positions,
            numbering: (0, 1),
        }
    }

    /// Numbers this swarm's bots `first`, `first + stride`, `first + 2 *
    /// stride`, ... in the run (names, seeds, which target and source
    /// address each starts with): one agent's share of a run spread over
    /// several (see `fleet::share`). By default bots are numbered 0, 1, 2, ...
    pub fn numbered(mut self, first: usize, stride: usize) -> Swarm {
        self.numbering = (first, stride.max(1));
        self
    }

    /// The run's stats.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// A mix's part: the stats of the bots on `transport` (None: not a mix).
    pub fn part(&self, transport: Transport) -> Option<&Arc<Stats>> {
        self.parts.as_ref().map(|p| &p[transport.index()])
    }

    /// The transport of the bot at `local` (its place in [`Swarm::bots`]).
    pub fn transport_of(&self, local: usize) -> Transport {
        self.config.transports.of_bot(local)
    }

    /// Every bot's shared state, by index.
    pub fn bots(&self) -> &[Arc<BotShared>] {
        &self.bots
    }

    /// Bots spawned.
    pub fn len(&self) -> usize {
        self.bots.len()
    }

    /// True before the first bot.
    pub fn is_empty(&self) -> bool {
        self.bots.is_empty()
    }

    /// Starts one more bot.
    pub fn spawn_one(&mut self) {
        let local = self.bots.len();
        let index = self.numbering.0 + local * self.numbering.1;
        let c = &self.config;
        let config = BotConfig {
            index,
            name: bot_name(&c.name_prefix, index),
            targets: c.targets.clone(),
            target_slot: c.transports.target_slot(index, self.numbering.0, local),
            sources: c.sources.clone(),
            profile: c.profile,
            policy: c.policy,
            join_timeout: c.join_timeout,
            frames: c.frames,
            transport: c.transports.of_bot(local),
            seed: c.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            movement: c.movement,
            positions: self.positions.clone(),
            observer: c.observers.includes(index),
        };
        let stats = self.part(config.transport).unwrap_or(&self.stats).clone();
        let bot = Bot::new(config, stats);
        self.bots.push(bot.shared());
        let run = self.tracker.track_future(bot.run(self.cancel.clone()));
        let handle = match &self.threads {
            Some(threads) => threads.spawn(local, run),
            None => tokio::spawn(run),
        };
        self.handles.push(handle);
    }

    /// Spawns bots at `per_second` until there are `n`. Returns false if `stop` fired.
    pub async fn ramp_to(&mut self, n: usize, per_second: f64, progress: &Progress, stop: &CancellationToken) -> bool {
        let from = self.len();
        let bar = progress.counter(n.saturating_sub(from) as u64, format!("ramp to {n}"));
        let start = Instant::now();
        let per_second = if per_second > 0.0 { per_second } else { f64::INFINITY };
        let mut ok = true;
        for i in 0..n.saturating_sub(from) {
            let due = start + Duration::from_secs_f64(i as f64 / per_second);
            tokio::select! {
                _ = stop.cancelled() => { ok = false; break; }
                _ = tokio::time::sleep_until(due) => {}
            }
            self.spawn_one();
            bar.inc(1);
            if i % 16 == 0 {
                bar.set_prefix(format!("{} connected", self.stats.connected()));
            }
        }
        bar.finish_and_clear();
        ok
    }

    /// Waits until no bot is joining (each has been welcomed, refused or has
    /// failed at least once), at most `timeout`. Returns false on timeout or stop.
    pub async fn settle(&self, timeout: Duration, stop: &CancellationToken) -> bool {
        let end = Instant::now() + timeout;
        loop {
            if self.bots.iter().all(|b| b.state() != BotState::Joining) {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            tokio::select! {
                _ = stop.cancelled() => return false,
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
    }

    /// What every bot has received so far, by index.
    pub fn received(&self) -> Vec<Received> {
        self.bots
            .iter()
            .map(|b| Received {
                bytes: b.bytes(),
                cell_bytes: b.cell_bytes(),
                welcomes: b.welcomes(),
                connected: b.is_connected(),
            })
            .collect()
    }

    /// Bots by state now.
    pub fn census(&self) -> Census {
        self.census_where(|_| true)
    }

    /// The bots on `transport` by state now.
    pub fn census_of(&self, transport: Transport) -> Census {
        self.census_where(|local| self.transport_of(local) == transport)
    }

    fn census_where(&self, keep: impl Fn(usize) -> bool) -> Census {
        let mut c = Census::default();
        for (_, b) in self.bots.iter().enumerate().filter(|(i, _)| keep(*i)) {
            c.bots += 1;
            match b.state() {
                BotState::Connected => c.connected += 1,
                BotState::Joining => c.joining += 1,
                BotState::Busy => c.busy += 1,
                BotState::Retrying => c.retrying += 1,
                BotState::Stopped => c.stopped += 1,
            }
            c.admitted += usize::from(b.ever_welcomed());
            c.ever_busy += usize::from(b.ever_busy());
        }
        c
    }

    /// Stops every bot (each closes its socket politely) and joins them, at most
    /// `timeout`; bots still running then are aborted.
    pub async fn shutdown(mut self, timeout: Duration) -> Vec<BotReport> {
        self.cancel.cancel();
        self.tracker.close();
        if tokio::time::timeout(timeout, self.tracker.wait()).await.is_err() {
            tracing::warn!("bots did not stop within {timeout:?}; aborting the rest");
            self.handles.iter().for_each(JoinHandle::abort);
        }
        let handles = std::mem::take(&mut self.handles);
        let mut reports = Vec::with_capacity(handles.len());
        for h in handles {
            if let Ok(r) = h.await {
                reports.push(r);
            }
        }
        if let Some(threads) = self.threads.take() {
            threads.join().await;
        }
        reports
    }
}

impl Drop for Swarm {
    /// A swarm dropped without [`Swarm::shutdown`] (a panic, an early return)
    /// still stops its bots.
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_limit_and_stay_unique() {
        assert_eq!(bot_name("bot-", 7), "bot-7");
        let long = bot_name(&"x".repeat(40), 123_456);
        assert_eq!(long.chars().count(), MAX_NAME_CHARS);
        assert!(long.ends_with("123456"));
        assert!(mino_protocol::client::validate_name(&long).is_ok());
    }
}
