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
use crate::config::Config;
use crate::metrics::{Metrics, ReasonLabel};
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

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The tick loop's state besides the shard.
pub struct TickLoop {
    shard: Shard,
    config: Arc<Config>,
    metrics: Metrics,
    frames: broadcast::Sender<Arc<TickFrame>>,
    rng: StdRng,
}

impl TickLoop {
    /// A loop over `shard` that broadcasts on `frames`.
    pub fn new(
        shard: Shard,
        config: Arc<Config>,
        metrics: Metrics,
        frames: broadcast::Sender<Arc<TickFrame>>,
    ) -> TickLoop {
        TickLoop {
            shard,
            config,
            metrics,
            frames,
            rng: StdRng::from_os_rng(),
        }
    }

    /// Runs until `cancel` fires or every command sender is gone.
    pub async fn run(mut self, mut commands: mpsc::Receiver<Command>, cancel: CancellationToken) {
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
        let frame = self.shard.tick(dt, lateness, now_ms());
        m.ticks.inc();
        m.snapshots_encoded.inc();
        m.players.set(self.shard.players() as i64);
        m.overloaded
            .set(i64::from(self.shard.admission().is_overloaded()));
        // No receivers is fine: nobody is connected.
        let _ = self.frames.send(Arc::new(frame));
        m.tick_duration.observe(started.elapsed().as_secs_f64());
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
        let spawn = (
            self.rng.random_range(b.min_x()..=b.max_x()),
            self.rng.random_range(b.min_y()..=b.max_y()),
        );
        let mut ticket = [0u8; TICKET_BYTES];
        self.rng.fill(&mut ticket);
        match self.shard.join(name, spawn, ticket, now_ms()) {
            Ok(admitted) => {
                self.metrics.players.set(self.shard.players() as i64);
                JoinReply::Admitted {
                    admitted,
                    frames: self.frames.subscribe(),
                }
            }
            Err(refusal) => {
                self.metrics
                    .busy_refusals
                    .get_or_create(&ReasonLabel {
                        reason: refusal.as_str(),
                    })
                    .inc();
                let base = self.config.busy_retry.as_millis() as u32;
                let retry_after_ms = base + self.rng.random_range(0..=base / 2);
                JoinReply::Refused {
                    refusal,
                    retry_after_ms,
                }
            }
        }
    }
}
