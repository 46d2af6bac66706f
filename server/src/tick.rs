//! The tick loop: the one task that owns the [`Shard`]. It applies commands from
//! sessions as they arrive (joins are answered at once, so welcome latency is
//! not a tick), and every tick period it steps the world, encodes one snapshot
//! and broadcasts one [`TickFrame`] shared by every socket.
//!
//! The loop never awaits a socket (or, clustered, Redis): sessions read the
//! broadcast at their own pace, and a session that falls more than the queue's
//! length behind is closed by its own task. Missed ticks after a stall are
//! skipped and counted, never replayed back to back.

use crate::admission::Refusal;
use crate::cluster::registry::ID_FETCH;
use crate::cluster::{ClusterEvent, LocalState, OwnSnapshot, TickLink};
use crate::config::Config;
use crate::metrics::{Metrics, ReasonLabel};
use crate::session::ws_frame;
use crate::shard::{Admitted, Shard, TickFrame, TICKET_BYTES};
use mino_protocol::client::Direction;
use mino_protocol::PlayerId;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

/// Capacity of the command queue from sessions to the tick loop.
pub const COMMAND_QUEUE: usize = 8192;

/// Longest `dt` one tick applies after a stall, so a frozen process does not
/// teleport its players when it wakes.
pub const MAX_DT: Duration = Duration::from_millis(250);

/// What sessions ask of the tick loop.
#[derive(Debug)]
pub enum Command {
    /// Admit a player; the answer comes back on `reply`.
    Join {
        /// Validated display name.
        name: String,
        /// Where the answer goes.
        reply: oneshot::Sender<JoinReply>,
    },
    /// A player's new wanted direction.
    Input {
        /// Who.
        player: PlayerId,
        /// Where to.
        dir: Direction,
    },
    /// A chat line (validated).
    Chat {
        /// Who.
        player: PlayerId,
        /// What.
        text: String,
    },
    /// The player's socket closed.
    Leave {
        /// Who.
        player: PlayerId,
    },
}

/// The answer to [`Command::Join`].
#[derive(Debug)]
pub enum JoinReply {
    /// Welcome; `frames` starts with the next tick.
    Admitted {
        /// The welcome.
        admitted: Admitted,
        /// This socket's view of the shared per-tick frames.
        frames: broadcast::Receiver<Arc<TickFrame>>,
    },
    /// Busy: retry after `retry_after_ms`.
    Refused {
        /// Why.
        refusal: Refusal,
        /// Suggested wait, ms.
        retry_after_ms: u32,
    },
}

/// The tick's frames as websocket frames, each encoded once for every socket.
fn framed(frame: TickFrame) -> TickFrame {
    TickFrame {
        tick: frame.tick,
        snapshots: frame.snapshots.into_iter().map(|(shard, b)| (shard, ws_frame::binary(&b))).collect(),
        events: frame.events.iter().map(|b| ws_frame::binary(b)).collect(),
        roster: frame.roster.as_deref().map(ws_frame::binary),
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The tick loop's state besides the shard.
pub struct TickLoop {
    shard: Shard,
    config: Arc<Config>,
    metrics: Metrics,
    frames: broadcast::Sender<Arc<TickFrame>>,
    rng: StdRng,
    cluster: Option<TickLink>,
    last_id_request: Option<std::time::Instant>,
}

impl TickLoop {
    /// A loop over `shard` that broadcasts on `frames`; clustered when `cluster`
    /// is given.
    pub fn new(
        shard: Shard,
        config: Arc<Config>,
        metrics: Metrics,
        frames: broadcast::Sender<Arc<TickFrame>>,
        cluster: Option<TickLink>,
    ) -> TickLoop {
        TickLoop { shard, config, metrics, frames, rng: StdRng::from_os_rng(), cluster, last_id_request: None }
    }

    /// Runs until `cancel` fires or every command sender is gone.
    pub async fn run(mut self, mut commands: mpsc::Receiver<Command>, cancel: CancellationToken) {
        // Standalone, this queue never yields (its sender lives as long as the loop).
        let (_keep, mut cluster_events) = match self.cluster.as_mut() {
            Some(link) => (None, std::mem::replace(&mut link.events, mpsc::channel(1).1)),
            None => {
                let (tx, rx) = mpsc::channel(1);
                (Some(tx), rx)
            }
        };
        let period = self.config.tick_period();
        let mut interval = tokio::time::interval_at(Instant::now() + period, period);
        interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
        let mut last_scheduled: Option<Instant> = None;
        let mut last_start = Instant::now();
        loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                scheduled = interval.tick() => {
                    let start = Instant::now();
                    if let Some(prev) = last_scheduled {
                        let gap = scheduled.saturating_duration_since(prev);
                        let skipped = (gap.as_secs_f64() / period.as_secs_f64()).round() as u64;
                        self.metrics.ticks_skipped.inc_by(skipped.saturating_sub(1));
                    }
                    last_scheduled = Some(scheduled);
                    let dt = start.saturating_duration_since(last_start).min(MAX_DT);
                    last_start = start;
                    self.tick(dt, start.saturating_duration_since(scheduled), period);
                }
                // Cluster events first: an id block must land before the joins it serves.
                Some(event) = cluster_events.recv() => self.cluster_event(event),
                cmd = commands.recv() => match cmd {
                    Some(cmd) => self.handle(cmd),
                    None => break,
                },
            }
        }
        self.shard.set_draining();
        tracing::debug!(shard = %self.shard.id(), "tick loop stopped");
    }

    fn tick(&mut self, dt: Duration, lateness: Duration, period: Duration) {
        let started = std::time::Instant::now();
        let m = &self.metrics;
        m.tick_lateness.observe(lateness.as_secs_f64());
        if lateness > period / 5 {
            m.ticks_late.inc();
        }
        let now = now_ms();
        let out = self.shard.tick(dt, lateness, now);
        m.ticks.inc();
        m.snapshots_encoded.inc();
        m.players.set(self.shard.players() as i64);
        let overloaded = self.shard.admission().is_overloaded();
        m.overloaded.set(i64::from(overloaded));
        for lag in &out.relay_lag_ms {
            m.relay_lag.observe(*lag as f64 / 1000.0);
        }
        let tick = out.frame.tick;
        // No receivers is fine: nobody is connected.
        let _ = self.frames.send(Arc::new(framed(out.frame)));
        if let Some(link) = &self.cluster {
            link.snapshot.send_replace(Some(OwnSnapshot { tick, server_time_ms: now, bytes: out.snapshot }));
            for frame in out.publish {
                if link.publish.try_send(frame).is_err() {
                    m.dropped("publish_event", 1);
                }
            }
            let state = LocalState { players: self.shard.players(), overloaded };
            link.local.send_if_modified(|s| std::mem::replace(s, state) != state);
            self.request_ids();
        }
        self.metrics.tick_duration.observe(started.elapsed().as_secs_f64());
    }

    /// Asks the registry for ids when running low (at most once a second).
    fn request_ids(&mut self) {
        let Some(link) = &self.cluster else { return };
        let low = self.shard.ids_remaining() < u64::from(ID_FETCH / 2);
        let due = self.last_id_request.is_none_or(|t| t.elapsed() > Duration::from_secs(1));
        if low && due {
            link.need_ids.notify_one();
            self.last_id_request = Some(std::time::Instant::now());
        }
    }

    fn cluster_event(&mut self, event: ClusterEvent) {
        match event {
            ClusterEvent::Snapshot { shard, bytes, server_time_ms } => {
                if !self.shard.relay_snapshot(shard, bytes, server_time_ms) {
                    self.metrics.dropped("relay_snapshot", 1);
                }
            }
            ClusterEvent::Chat { bytes } => self.shard.relay_chat(bytes),
            ClusterEvent::Presence { shard, seq, bytes, joined, left } => {
                self.shard.relay_presence(shard, seq, bytes, &joined, &left);
            }
            ClusterEvent::Live(shards) => {
                tracing::trace!(?shards, "live shards");
                self.shard.set_live_shards(&shards);
            }
            ClusterEvent::Roster { shard, seq, players } => {
                tracing::trace!(%shard, seq, players = players.len(), "roster of a shard");
                self.shard.remote_roster(shard, seq, players);
            }
            ClusterEvent::Ids { start, len } => {
                self.shard.add_id_block(start, len);
                self.last_id_request = None;
            }
        }
    }

    fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::Join { name, reply } => {
                let answer = self.join(&name);
                if let Err(JoinReply::Admitted { admitted, .. }) = reply.send(answer) {
                    // The socket went away while we answered.
                    self.shard.leave(admitted.player);
                }
            }
            Command::Input { player, dir } => self.shard.input(player, dir),
            Command::Chat { player, text } => self.shard.chat(player, &text, now_ms()),
            Command::Leave { player } => self.shard.leave(player),
        }
    }

    fn join(&mut self, name: &str) -> JoinReply {
        let b = *self.shard.world().bounds();
        let spawn = (self.rng.random_range(b.min_x()..=b.max_x()), self.rng.random_range(b.min_y()..=b.max_y()));
        let mut ticket = [0u8; TICKET_BYTES];
        self.rng.fill(&mut ticket);
        match self.shard.join(name, spawn, ticket, now_ms()) {
            Ok(admitted) => {
                self.metrics.players.set(self.shard.players() as i64);
                JoinReply::Admitted { admitted, frames: self.frames.subscribe() }
            }
            Err(refusal) => {
                self.metrics.busy_refusals.get_or_create(&ReasonLabel { reason: refusal.as_str() }).inc();
                let base = self.config.busy_retry.as_millis() as u32;
                let retry_after_ms = base + self.rng.random_range(0..=base / 2);
                JoinReply::Refused { refusal, retry_after_ms }
            }
        }
    }
}
