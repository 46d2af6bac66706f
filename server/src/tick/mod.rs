//! The tick loop: the one task that owns the [`Shard`]. It applies commands from
//! sessions as they arrive (joins are answered at once, so welcome latency is
//! not a tick), and every tick period it steps the world, encodes one snapshot
//! and hands one [`TickFrame`], the same bytes for every socket, to the
//! [`Fanout`].
//!
//! The loop never awaits a socket (or, clustered, Redis): the fan-out's writes
//! do not block, a socket that cannot take a tick is finished by its own
//! session task, and one that stays behind is closed as too slow. Missed ticks
//! after a stall are skipped and counted, never replayed back to back.
//!
//! Clustered, a shard that may have been taken for dead (its ticks stalled past
//! half the shard TTL, or Redis was out of reach that long) is *fenced*: it
//! publishes nothing until it has checked in Redis which of its players were
//! resumed elsewhere meanwhile, and dropped those. So a woken shard never
//! brings back a player that lives on another shard.
//!
//! Draining (SIGTERM), the loop admits nobody and tells its players to move,
//! a paced number a tick, each with a fresh resume ticket.

mod clock;
mod command;

pub use clock::TickClock;
pub use command::{Command, Control, JoinReply};

use crate::admission::Refusal;
use crate::cluster::registry::ID_FETCH;
use crate::cluster::view::Relay;
use crate::cluster::{ClusterEvent, LocalState, Outgoing, OwnSnapshot, TickLink};
use crate::config::Config;
use crate::metrics::{Metrics, ReasonLabel};
use crate::resume::local::LocalSessions;
use crate::resume::{ResumeError, Ticket};
use crate::session::{ws_frame, CloseReason, Fanout, Outbox};
use crate::shard::{Shard, TickFrame};
use mino_protocol::PlayerId;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Capacity of the command queue from sessions to the tick loop.
pub const COMMAND_QUEUE: usize = 8192;

/// Longest `dt` one tick applies after a stall, so a frozen process does not
/// teleport its players when it wakes.
pub const MAX_DT: Duration = Duration::from_millis(250);

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

/// How the tick loop reaches one admitted session.
#[derive(Debug)]
struct Link {
    id: u64,
    outbox: Arc<Outbox>,
    generation: u64,
}

/// Shutdown signals the tick loop takes part in.
#[derive(Clone, Debug, Default)]
pub struct Lifecycle {
    /// Cancelled to stop at once.
    pub stop: CancellationToken,
    /// Cancelled to start draining.
    pub drain: CancellationToken,
    /// Cancelled by the tick loop once a drain has emptied the shard.
    pub drained: CancellationToken,
}

/// The tick loop's state besides the shard.
pub struct TickLoop {
    shard: Shard,
    config: Arc<Config>,
    metrics: Metrics,
    fanout: Fanout,
    rng: StdRng,
    cluster: Option<TickLink>,
    tracker: TaskTracker,
    last_id_request: Option<std::time::Instant>,
    links: HashMap<PlayerId, Link>,
    next_link: u64,
    local: Option<LocalSessions>,
    moved: HashSet<PlayerId>,
    draining: bool,
    fenced: bool,
    held: Vec<Outgoing>,
    redis_down_since: Option<Instant>,
}

/// Most frames a fenced shard holds back before it drops (and counts) them.
const HELD_MAX: usize = 10_000;

impl TickLoop {
    /// A loop over `shard` that writes each tick to the sockets it admits;
    /// clustered when `cluster` is given (standalone, resume tickets are kept
    /// here in memory).
    pub fn new(
        shard: Shard,
        config: Arc<Config>,
        metrics: Metrics,
        cluster: Option<TickLink>,
        tracker: TaskTracker,
    ) -> TickLoop {
        let local = cluster.is_none().then(|| LocalSessions::new(config.ticket_ttl.as_millis() as u64));
        TickLoop {
            shard,
            config,
            fanout: Fanout::new(metrics.clone()),
            metrics,
            rng: StdRng::from_os_rng(),
            cluster,
            tracker,
            last_id_request: None,
            links: HashMap::new(),
            next_link: 1,
            local,
            moved: HashSet::new(),
            draining: false,
            fenced: false,
            held: Vec::new(),
            redis_down_since: None,
        }
    }

    /// Runs until `life.stop` fires or every command sender is gone.
    pub async fn run(mut self, mut commands: mpsc::Receiver<Command>, life: Lifecycle) {
        // Standalone, this queue never yields (its sender lives as long as the loop).
        let (_keep, mut cluster_events) = match self.cluster.as_mut() {
            Some(link) => (None, std::mem::replace(&mut link.events, mpsc::channel(1).1)),
            None => {
                let (tx, rx) = mpsc::channel(1);
                (Some(tx), rx)
            }
        };
        let period = self.config.tick_period();
        let stall = self.config.shard_ttl / 2;
        let mut clock = TickClock::new(period);
        let mut last_scheduled: Option<Instant> = None;
        let mut last_start = Instant::now();
        loop {
            tokio::select! {
                biased;
                () = life.stop.cancelled() => break,
                () = life.drain.cancelled(), if !self.draining => {
                    tracing::info!(players = self.shard.players(), "draining: moving players to other shards");
                    self.draining = true;
                    self.shard.set_draining();
                }
                scheduled = clock.tick() => {
                    let start = Instant::now();
                    if let Some(prev) = last_scheduled {
                        let gap = scheduled.saturating_duration_since(prev);
                        let skipped = (gap.as_secs_f64() / period.as_secs_f64()).round() as u64;
                        self.metrics.ticks_skipped.inc_by(skipped.saturating_sub(1));
                    }
                    last_scheduled = Some(scheduled);
                    let gap = start.saturating_duration_since(last_start);
                    if gap > stall {
                        tracing::warn!(?gap, "ticks stalled; checking which players are still ours");
                        self.fence();
                    }
                    last_start = start;
                    self.tick(gap.min(MAX_DT), start.saturating_duration_since(scheduled), period);
                    if self.draining {
                        self.drain_step();
                        if self.shard.players() == 0 {
                            life.drained.cancel();
                        }
                    }
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
        self.fanout.deliver(&framed(out.frame));
        if let Some(local) = self.local.as_mut() {
            if tick.0.is_multiple_of(u64::from(self.config.tick_hz)) {
                local.expire(now);
            }
        }
        if self.cluster.is_some() {
            self.watch_redis();
            if self.fenced {
                let room = HELD_MAX.saturating_sub(self.held.len());
                let dropped = out.publish.len().saturating_sub(room);
                self.held.extend(out.publish.into_iter().take(room));
                self.metrics.dropped("publish_event", dropped as u64);
            } else if let Some(link) = &self.cluster {
                link.snapshot.send_replace(Some(OwnSnapshot { tick, server_time_ms: now, bytes: out.snapshot }));
                for frame in out.publish {
                    if link.publish.try_send(frame).is_err() {
                        self.metrics.dropped("publish_event", 1);
                    }
                }
            }
            if let Some(link) = &self.cluster {
                let state = LocalState {
                    players: self.shard.players(),
                    overloaded,
                    highest_player: self.shard.highest_player(),
                };
                link.local.send_if_modified(|s| std::mem::replace(s, state) != state);
            }
            self.request_ids();
        }
        self.metrics.tick_duration.observe(started.elapsed().as_secs_f64());
    }

    /// Fences the shard after Redis was out of reach for half a shard TTL.
    fn watch_redis(&mut self) {
        let Some(link) = &self.cluster else { return };
        if !link.status.redis_up.load(Ordering::Relaxed) {
            self.redis_down_since.get_or_insert_with(Instant::now);
        } else if let Some(since) = self.redis_down_since.take() {
            if since.elapsed() > self.config.shard_ttl / 2 {
                tracing::warn!("redis was out of reach; checking which players are still ours");
                self.fence();
            }
        }
    }

    /// Stops publishing until Redis says which players were resumed elsewhere.
    fn fence(&mut self) {
        let Some(link) = &self.cluster else { return };
        if self.fenced {
            return;
        }
        self.fenced = true;
        link.status.fenced.store(true, Ordering::Relaxed);
        let players: Vec<(PlayerId, u64)> = self.links.iter().map(|(p, l)| (*p, l.generation)).collect();
        let (store, events) = (link.store.clone(), link.events_tx.clone());
        let stop = link.stop.clone();
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
                    () = tokio::time::sleep(Duration::from_millis(200)) => {}
                }
            }
        });
    }

    /// Moves up to a tick's share of the drain rate.
    fn drain_step(&mut self) {
        let per_tick = (self.config.drain_rate / u32::from(self.config.tick_hz)).max(1) as usize;
        let now = now_ms();
        let due: Vec<PlayerId> =
            self.links.keys().filter(|p| !self.moved.contains(p)).take(per_tick).copied().collect();
        for player in due {
            let ticket = Ticket::issue(now, &mut self.rng);
            if let (Some(local), Some(p)) = (self.local.as_mut(), self.shard.world().player(player)) {
                let generation = self.links.get(&player).map_or(0, |l| l.generation);
                local.issue(player, &p.name, ticket, generation, now);
            }
            if let Some(link) = self.links.get(&player) {
                link.outbox.tell(Control::Move(ticket));
            }
            self.park(player);
            self.moved.insert(player);
        }
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
                match self.shard.relay_snapshot(shard, bytes, server_time_ms) {
                    Relay::Kept => {}
                    Relay::Replaced => self.metrics.dropped("relay_replaced", 1),
                    Relay::Dropped => self.metrics.dropped("relay_snapshot", 1),
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
            ClusterEvent::Takeover { player, generation } => {
                if self.links.get(&player).is_some_and(|l| l.generation < generation) {
                    self.drop_player(player, CloseReason::SessionReplaced);
                }
            }
            ClusterEvent::Verified { lost } => {
                if !lost.is_empty() {
                    tracing::warn!(players = lost.len(), "dropping players resumed on other shards meanwhile");
                }
                for player in lost {
                    self.drop_player(player, CloseReason::SessionReplaced);
                }
                self.fenced = false;
                if let Some(link) = &self.cluster {
                    link.status.fenced.store(false, Ordering::Relaxed);
                    for frame in self.held.drain(..) {
                        if link.publish.try_send(frame).is_err() {
                            self.metrics.dropped("publish_event", 1);
                        }
                    }
                }
            }
        }
    }

    /// Clustered: records where `player` stands in its session in Redis.
    fn park(&mut self, player: PlayerId) {
        let (Some(link), Some(p)) = (&self.cluster, self.shard.world().player(player)) else { return };
        let park = Outgoing::Park { player, x: p.x, y: p.y };
        if self.fenced {
            self.held.push(park);
        } else if link.publish.try_send(park).is_err() {
            self.metrics.dropped("publish_event", 1);
        }
    }

    /// Removes a player whose session lives elsewhere now and closes its socket.
    fn drop_player(&mut self, player: PlayerId, reason: CloseReason) {
        if let Some(link) = self.links.remove(&player) {
            link.outbox.tell(Control::Close(reason));
        }
        self.shard.leave(player);
    }

    fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::Reserve { reply } => {
                let answer = self.shard.reserve().map_err(|r| (r, self.refused(r)));
                if let Err(Ok(())) = reply.send(answer) {
                    self.shard.unreserve();
                }
            }
            Command::Unreserve => self.shard.unreserve(),
            Command::ClaimLocal { ticket, reply } => {
                let now = now_ms();
                let next = Ticket::issue(now, &mut self.rng);
                let answer = match self.local.as_mut() {
                    Some(local) => local.claim(&ticket, next, now),
                    None => Err(ResumeError::Unavailable),
                };
                let _ = reply.send(answer);
            }
            Command::Join { name, resume, outbox, reply } => self.join(name, resume, outbox, reply),
            Command::Input { player, dir } => self.shard.input(player, dir),
            Command::Chat { player, text } => self.shard.chat(player, &text, now_ms()),
            Command::Leave { player, link } => {
                if self.links.get(&player).is_some_and(|l| l.id == link) {
                    self.links.remove(&player);
                    self.moved.remove(&player);
                    if let (Some(local), Some(p)) = (self.local.as_mut(), self.shard.world().player(player)) {
                        local.park(player, (p.x, p.y), now_ms());
                    }
                    self.park(player);
                    self.shard.leave(player);
                }
            }
        }
    }

    fn join(
        &mut self,
        name: String,
        resume: Option<crate::resume::Claimed>,
        outbox: Arc<Outbox>,
        reply: tokio::sync::oneshot::Sender<JoinReply>,
    ) {
        let now = now_ms();
        let b = *self.shard.world().bounds();
        let spawn = (self.rng.random_range(b.min_x()..=b.max_x()), self.rng.random_range(b.min_y()..=b.max_y()));
        let link = self.next_link;
        self.next_link += 1;
        let (admitted, generation) = match resume {
            None => {
                let ticket = Ticket::issue(now, &mut self.rng);
                match self.shard.join(&name, spawn, ticket, now) {
                    Ok(a) => {
                        if let Some(local) = self.local.as_mut() {
                            local.issue(a.player, &name, ticket, 0, now);
                        }
                        (a, 0)
                    }
                    Err(refusal) => {
                        let retry_after_ms = self.refused(refusal);
                        let _ = reply.send(JoinReply::Refused { refusal, retry_after_ms });
                        return;
                    }
                }
            }
            Some(c) => {
                let a = self.shard.rejoin(c.player, &c.name, c.position, spawn, c.ticket, now);
                if let Some(local) = self.local.as_mut() {
                    local.issue(c.player, &c.name, c.ticket, c.generation, now);
                }
                (a, c.generation)
            }
        };
        let player = admitted.player;
        self.moved.remove(&player);
        if let Some(old) = self.links.insert(player, Link { id: link, outbox: outbox.clone(), generation }) {
            old.outbox.tell(Control::Close(CloseReason::SessionReplaced));
        }
        self.metrics.players.set(self.shard.players() as i64);
        if reply.send(JoinReply::Admitted { admitted, link }).is_err() {
            // The socket went away while we answered.
            self.handle(Command::Leave { player, link });
            return;
        }
        self.fanout.add(outbox);
    }

    /// Counts a refusal and picks its retry-after, ms.
    fn refused(&mut self, refusal: Refusal) -> u32 {
        self.metrics.busy_refusals.get_or_create(&ReasonLabel { reason: refusal.as_str() }).inc();
        let base = self.config.busy_retry.as_millis() as u32;
        base + self.rng.random_range(0..=base / 2)
    }
}
