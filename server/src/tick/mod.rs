//! The tick driver: the one task that owns the [`Shard`] core. It only
//! carries out: it hands the sessions' commands and the cluster's events to
//! the core as they arrive (joins are answered at once, so welcome latency is
//! not a tick), runs the core's tick when the [`TickClock`] says, writes the
//! tick's frames to every socket through the [`Fanout`], and carries out the
//! core's [`Effect`]s. Every decision (fencing, drain pacing, links, the held
//! queue) is the core's; see [`crate::shard`].
//!
//! The driver never awaits a socket or Redis: the fan-out's writes do not
//! block (a socket that cannot take a tick is finished by its own session
//! task), publishing goes through a latest-only slot and a bounded queue, and
//! an ownership check after a fence runs in a task of its own.
//!
//! ```text
//!  commands (sessions) ─┐                      ┌─► Fanout ─► one writev a socket
//!  ClusterEvent ────────┼─► Shard core ─frame──┤
//!  TickClock ───────────┘     │ effects        └─► publisher (own snapshot)
//!                             ▼
//!   tell a session · publish · fence check · audit · fetch ids · drained · count
//! ```

mod clock;

pub use clock::TickClock;

use crate::clock as time;
use crate::cluster::{LocalState, OwnSnapshot, TickLink};
use crate::config::Config;
use crate::metrics::{DropKind, Metrics};
use crate::resume::AccountGate;
use crate::session::{Command, Fanout, Outbox};
use crate::shard::{ClusterEvent, Effect, LinkId, Shard, TickAt};
use mino_protocol::{PlayerId, Tick};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Wait between two attempts of the ownership check after a fence.
const CHECK_RETRY: Duration = Duration::from_millis(200);

/// Shutdown signals the driver takes part in.
#[derive(Clone, Debug, Default)]
pub struct Lifecycle {
    /// Cancelled to stop at once.
    pub stop: CancellationToken,
    /// Cancelled to start draining.
    pub drain: CancellationToken,
    /// Cancelled by the driver once a drain has emptied the shard.
    pub drained: CancellationToken,
}

/// The driver's state besides the core: the sockets and the channels.
pub struct TickDriver {
    shard: Shard,
    config: Arc<Config>,
    metrics: Metrics,
    fanout: Fanout,
    /// Every admitted socket by the link the core knows it as.
    outboxes: HashMap<LinkId, Arc<Outbox>>,
    cluster: Option<TickLink>,
    tracker: TaskTracker,
    life: Lifecycle,
    /// Reused between calls: the core's effects being carried out.
    effects: Vec<Effect>,
}

impl TickDriver {
    /// A driver of `shard`; clustered when `cluster` is given.
    pub fn new(
        shard: Shard,
        config: Arc<Config>,
        metrics: Metrics,
        cluster: Option<TickLink>,
        tracker: TaskTracker,
        life: Lifecycle,
    ) -> TickDriver {
        TickDriver {
            shard,
            config,
            fanout: Fanout::new(metrics.clone()),
            metrics,
            outboxes: HashMap::new(),
            cluster,
            tracker,
            life,
            effects: Vec::new(),
        }
    }

    /// Runs until the lifecycle's stop fires or every command sender is gone.
    pub async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        // Standalone, this queue never yields (its sender lives as long as the loop).
        let (_keep, mut cluster_events) = match self.cluster.as_mut() {
            Some(link) => (None, std::mem::replace(&mut link.events, mpsc::channel(1).1)),
            None => {
                let (tx, rx) = mpsc::channel(1);
                (Some(tx), rx)
            }
        };
        let life = self.life.clone();
        let period = self.config.tick_period();
        let mut clock = TickClock::new(period);
        let mut draining = false;
        loop {
            tokio::select! {
                biased;
                () = life.stop.cancelled() => break,
                () = life.drain.cancelled(), if !draining => {
                    tracing::info!(players = self.shard.players(), "draining: moving players to other shards");
                    draining = true;
                    self.shard.start_drain();
                }
                (tick, due) = clock.tick() => self.tick(tick, due, period),
                // Cluster events first: an id block must land before the joins it serves.
                Some(event) = cluster_events.recv() => {
                    self.shard.cluster_event(event);
                    self.carry_out();
                }
                cmd = commands.recv() => match cmd {
                    Some(cmd) => self.command(cmd),
                    None => break,
                },
            }
        }
        self.shard.stop_admitting();
        tracing::debug!(shard = %self.shard.id(), "tick driver stopped");
    }

    fn tick(&mut self, tick: Tick, due: time::Instant, period: Duration) {
        let started = time::now();
        let lateness = started.saturating_duration_since(due);
        let m = &self.metrics;
        m.tick_lateness.observe(lateness.as_secs_f64());
        if lateness > period / 5 {
            m.ticks_late.inc();
        }
        let redis_up = self.cluster.as_ref().is_some_and(|l| l.status.redis_up.load(Ordering::Relaxed));
        let wall_ms = time::wall_ms();
        let out = self.shard.tick(TickAt { tick, lateness, now: started, wall_ms, redis_up });
        m.ticks.inc();
        m.ticks_skipped.inc_by(out.skipped);
        m.snapshots_encoded.inc();
        m.players.set(self.shard.players() as i64);
        let overloaded = self.shard.admission().is_overloaded();
        m.overloaded.set(i64::from(overloaded));
        for lag in &out.relay_lag_ms {
            m.relay_lag.observe(*lag as f64 / 1000.0);
        }
        let tick = out.frame.tick;
        let shard = &self.shard;
        self.fanout.deliver(&out.frame, |link| shard.view_of(link));
        if let Some(link) = &self.cluster {
            if let Some(bytes) = out.publish_snapshot {
                let cells = out.publish_cells;
                link.snapshot.send_replace(Some(OwnSnapshot {
                    tick,
                    server_time_ms: wall_ms,
                    at: started,
                    bytes,
                    cells,
                }));
            }
            let state = LocalState {
                players: self.shard.players(),
                overloaded,
                highest_player: self.shard.highest_player(),
                epoch: self.shard.presence_epoch(),
            };
            link.local.send_if_modified(|s| std::mem::replace(s, state) != state);
        }
        self.carry_out();
        self.metrics.tick_duration.observe(started.elapsed().as_secs_f64());
    }

    fn command(&mut self, cmd: Command) {
        let wall_ms = time::wall_ms();
        match cmd {
            Command::Reserve { reply } => {
                let answer = self.shard.reserve();
                if let Err(busy) = &answer {
                    self.metrics.refused(busy.refusal);
                }
                if let Err(Ok(())) = reply.send(answer) {
                    self.shard.unreserve();
                }
            }
            Command::Unreserve => self.shard.unreserve(),
            Command::ClaimLocal { ticket, account, require_account, reply } => {
                let gate = AccountGate { account: account.as_deref(), require: require_account };
                let _ = reply.send(self.shard.claim_local(&ticket, wall_ms, gate));
            }
            Command::LoginLocal { account, name, reply } => {
                let _ = reply.send(self.shard.login_local(&account, &name, wall_ms));
            }
            Command::NewId { reply } => {
                let _ = reply.send(self.shard.new_id());
            }
            Command::Join { name, resume, outbox, reply } => match self.shard.join(&name, resume, wall_ms) {
                Err(busy) => {
                    self.metrics.refused(busy.refusal);
                    let _ = reply.send(Err(busy));
                }
                Ok(admitted) => {
                    let (player, link) = (admitted.player, admitted.link);
                    self.outboxes.insert(link, outbox.clone());
                    self.metrics.players.set(self.shard.players() as i64);
                    if reply.send(Ok(admitted)).is_err() {
                        // The socket went away while we answered.
                        self.leave(player, link, wall_ms);
                    } else {
                        self.fanout.add(link, outbox);
                    }
                }
            },
            Command::Input { player, dir, seq } => self.shard.input(player, dir, seq),
            Command::Names { ids, reply } => {
                let _ = reply.send(self.shard.names(&ids));
            }
            Command::Chat { player, text } => self.shard.chat(player, &text, wall_ms),
            Command::Leave { player, link } => self.leave(player, link, wall_ms),
        }
        self.carry_out();
    }

    fn leave(&mut self, player: PlayerId, link: LinkId, wall_ms: u64) {
        self.outboxes.remove(&link);
        self.shard.leave(player, link, wall_ms);
    }

    /// Carries out what the core asked for, in order.
    fn carry_out(&mut self) {
        let mut effects = std::mem::take(&mut self.effects);
        effects.extend(self.shard.effects());
        for effect in effects.drain(..) {
            match effect {
                Effect::Tell { link, control } => {
                    if let Some(outbox) = self.outboxes.get(&link) {
                        outbox.tell(control);
                    }
                }
                Effect::Publish(frame) => {
                    if let Some(link) = &self.cluster {
                        if link.publish.try_send(frame).is_err() {
                            self.metrics.dropped(DropKind::PublishEvent, 1);
                        }
                    }
                }
                Effect::Fence { players } => self.check_ownership(players),
                Effect::Audit { players } => self.audit(players),
                Effect::Repaired(kind, n) => self.metrics.repaired(kind, n),
                Effect::Unfence => {
                    if let Some(link) = &self.cluster {
                        link.status.fenced.store(false, Ordering::Relaxed);
                    }
                }
                Effect::Regions(regions) => {
                    if let Some(link) = &self.cluster {
                        link.regions.send_replace(regions);
                    }
                }
                Effect::NeedIds => {
                    if let Some(link) = &self.cluster {
                        link.need_ids.notify_one();
                    }
                }
                Effect::Drained => self.life.drained.cancel(),
                Effect::Dropped(kind, n) => self.metrics.dropped(kind, n),
            }
        }
        self.effects = effects;
    }

    /// Anti-entropy: asks Redis once which of `players` another shard owns
    /// now, and hands the answer back to the core (a failed ask is asked
    /// again at the next audit).
    fn audit(&self, players: Vec<(PlayerId, u64)>) {
        let Some(link) = &self.cluster else { return };
        let (store, events) = (link.store.clone(), link.events_tx.clone());
        self.tracker.spawn(async move {
            match store.lost(&players).await {
                Ok(ids) if !ids.is_empty() => {
                    let lost = players.into_iter().filter(|(p, _)| ids.contains(p)).collect();
                    let _ = events.send(ClusterEvent::Audited { lost }).await;
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(error = %e, "ownership audit failed; asked again at the next one"),
            }
        });
    }

    /// Fenced: asks Redis (until it answers) which of `players` were resumed
    /// elsewhere, and hands the answer back to the core.
    fn check_ownership(&self, players: Vec<(PlayerId, u64)>) {
        let Some(link) = &self.cluster else { return };
        link.status.fenced.store(true, Ordering::Relaxed);
        let (store, events, stop) = (link.store.clone(), link.events_tx.clone(), link.stop.clone());
        self.tracker.spawn(async move {
            loop {
                match store.lost(&players).await {
                    Ok(lost) => {
                        let _ = events.send(ClusterEvent::Verified { lost }).await;
                        return;
                    }
                    Err(e) => tracing::debug!(error = %e, "ownership check failed; retrying"),
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(CHECK_RETRY) => {}
                }
            }
        });
    }
}
