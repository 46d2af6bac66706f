//! The tick driver: the one task that owns the [`Shard`] core and the
//! [`Hub`] of every admitted socket. It only carries out: it hands the
//! handshakes' commands, the players' messages (read by the hub when their
//! sockets are ready) and the cluster's events to the core as they arrive
//! (joins are answered at once, so welcome latency is not a tick), runs the
//! core's tick when the [`TickClock`] says, writes the tick's frames to every
//! socket through the hub, and carries out the core's [`Effect`]s. Every
//! decision (fencing, drain pacing, links, the held queue) is the core's; see
//! [`crate::shard`].
//!
//! The driver never awaits a socket or Redis: the hub's reads and writes do
//! not block (a socket that cannot take a tick is finished when it has
//! room), publishing goes through a latest-only slot and a bounded queue, and
//! what needs Redis (an ownership check after a fence, a ticket reissued for
//! a move, tickets refreshed) runs in a task of its own.
//!
//! ```text
//!  commands (handshakes) ─┐                      ┌─► Hub ─► one writev a socket
//!  Hub (players' input) ──┤                      │
//!  ClusterEvent ──────────┼─► Shard core ─frame──┤
//!  TickClock ─────────────┘     │ effects        └─► publisher (own snapshot)
//!                               ▼
//!   tell a socket · publish · fence check · audit · fetch ids · drained · count drops
//! ```

mod clock;
pub mod vitals;

pub use clock::TickClock;
pub use vitals::Vitals;

use crate::clock as time;
use crate::close::CloseReason;
use crate::cluster::{LocalState, OwnSnapshot, TickLink};
use crate::config::Config;
use crate::guard;
use crate::hub::remote::FromSession;
use crate::hub::{Handed, Hub, Inbound, Joined, Refresh, Tickets, Welcome, CLOSE_WRITE_TIMEOUT};
use crate::metrics::{DropKind, Metrics, PanicKind};
use crate::resume::store::{Kept, Reissued};
use crate::resume::{AccountGate, Ticket};
use crate::session::{Ask, Command, Join};
use crate::shard::{Admitted, Busy, Carrier, ClusterEvent, Control, Effect, LinkId, Shard, TickAt};
use crate::websocket::closing::LINGER;
use crate::websocket::frame as ws_frame;
use mino_protocol::server as msg;
use mino_protocol::{PlayerId, Tick};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use vitals::CoreState;

/// Wait between two attempts of the ownership check after a fence, and of
/// a drain's move ticket that Redis did not take.
const CHECK_RETRY: Duration = Duration::from_millis(200);

/// Capacity of the queue of moves whose fresh ticket is stored in Redis
/// (draining: at most `--drain-rate` a second come back; a full queue makes
/// the storing tasks wait, never the driver).
const MOVE_QUEUE: usize = 1024;

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

/// How often the driver looks at closing sockets' deadlines while it stops.
const STOPPING_STEP: Duration = Duration::from_millis(20);

/// The driver's state besides the core: the sockets and the channels.
pub struct TickDriver {
    shard: Shard,
    config: Arc<Config>,
    metrics: Metrics,
    /// Every socket past its handshake.
    hub: Hub,
    cluster: Option<TickLink>,
    tracker: TaskTracker,
    life: Lifecycle,
    /// Reused between calls: the core's effects being carried out.
    effects: Vec<Effect>,
    /// The shard's own figures (admin console, heartbeat).
    vitals: Vitals,
    /// Reused between calls: the players' messages being carried out.
    inbound: Vec<Inbound>,
    /// Tickets reissued in Redis for a move, back from their tasks: the
    /// sender each task gets a clone of, and the receiver [`TickDriver::run`]
    /// takes.
    moves_tx: mpsc::Sender<(LinkId, Ticket)>,
    moves: Option<mpsc::Receiver<(LinkId, Ticket)>>,
    /// A ticket refresh task is running (one at a time).
    refreshing: Arc<AtomicBool>,
    /// What the WebTransport sessions' tasks say (`None`: none are served).
    sessions: Option<mpsc::Receiver<FromSession>>,
}

impl TickDriver {
    /// A driver of `shard`; clustered when `cluster` is given; its figures
    /// are kept in `vitals`.
    ///
    /// Errors: the hub's poller could not be made (called outside a tokio
    /// runtime, or out of descriptors).
    pub fn new(
        shard: Shard,
        config: Arc<Config>,
        metrics: Metrics,
        cluster: Option<TickLink>,
        tracker: TaskTracker,
        life: Lifecycle,
        vitals: Vitals,
    ) -> std::io::Result<TickDriver> {
        let tickets = if cluster.is_some() { Tickets::Redis } else { Tickets::Local };
        let (moves_tx, moves) = mpsc::channel(MOVE_QUEUE);
        Ok(TickDriver {
            vitals,
            shard,
            hub: Hub::new(&config, metrics.clone(), tickets)?,
            config,
            metrics,
            cluster,
            tracker,
            life,
            effects: Vec::new(),
            inbound: Vec::new(),
            moves_tx,
            moves: Some(moves),
            refreshing: Arc::default(),
            sessions: None,
        })
    }

    /// Serves sessions whose I/O runs in tasks of their own (WebTransport):
    /// what they say comes on `sessions`.
    pub fn with_sessions(mut self, sessions: mpsc::Receiver<FromSession>) -> TickDriver {
        self.sessions = Some(sessions);
        self
    }

    /// The capacity of each such session's queue (see
    /// [`crate::hub::remote::queue_capacity`]).
    pub fn session_queue(&self) -> usize {
        self.hub.remote_queue()
    }

    /// Runs until the lifecycle's stop fires or every command sender is gone.
    pub async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        // Standalone there is no queue of cluster events.
        let mut cluster_events = self.cluster.as_mut().and_then(|link| link.events.take());
        let mut moves = self.moves.take();
        let mut sessions = self.sessions.take();
        let life = self.life.clone();
        let period = self.config.tick_period();
        let mut clock = TickClock::new(period);
        let mut draining = false;
        // True right after a tick, served by the clock or by the `select!`:
        // the next `select!` does not take a tick, so that stop, drain,
        // commands and the sockets are heard between ticks even when every
        // tick is overdue (a tick that takes a period or more: the timer is
        // ready at once then, and a biased `select!` that may take it first
        // took it every time, new players' handshakes waiting for 10 s and
        // more: found by `.ci/run`, the overrun test's join timing out).
        let mut just_ticked = false;
        loop {
            // A tick due while sockets kept the loop busy (the timer is read
            // only when the loop yields: see `TickClock::overdue`).
            if !just_ticked {
                if let Some((tick, due)) = clock.overdue() {
                    self.tick(tick, due, period);
                    just_ticked = true;
                    // Let the runtime's other tasks (the admin listener,
                    // Redis) run between ticks, however busy the sockets are.
                    tokio::task::yield_now().await;
                }
            }
            let after_tick = std::mem::take(&mut just_ticked);
            tokio::select! {
                biased;
                () = life.stop.cancelled() => break,
                () = life.drain.cancelled(), if !draining => {
                    draining = true;
                    let players = self.shard.players();
                    let closed = self.shard.start_drain();
                    self.carry_out();
                    match self.cluster {
                        Some(_) => tracing::info!(players, "draining: moving players to other shards"),
                        None => tracing::info!(
                            disconnected = closed,
                            "standalone restart: no other shard to move players to; closing every socket with 1012 (service restart)"
                        ),
                    }
                }
                (tick, due) = clock.tick(), if !after_tick => {
                    self.tick(tick, due, period);
                    just_ticked = true;
                }
                // Cluster events first: an id block must land before the joins it serves.
                Some(event) = next(&mut cluster_events) => {
                    if matches!(event, ClusterEvent::Superseded) {
                        // Drained as SIGTERM would: the players move away
                        // with their tickets, then the process ends.
                        self.life.drain.cancel();
                        continue;
                    }
                    self.shard.cluster_event(event);
                    self.carry_out();
                }
                ready = self.hub.ready() => {
                    self.hub.on_ready(&ready);
                    // The sessions' queue is read here too: websockets ready
                    // on every pass would otherwise starve it (the branch
                    // below comes last), and every session's task waits on
                    // it once it is full.
                    self.sessions_said(&mut sessions);
                    self.players_said();
                }
                cmd = commands.recv() => match cmd {
                    Some(cmd) => self.command(cmd),
                    None => break,
                },
                Some((link, ticket)) = next(&mut moves) => self.move_out(link, ticket),
                Some(said) = next(&mut sessions) => {
                    self.hub.on_session(said);
                    self.sessions_said(&mut sessions);
                    self.players_said();
                }
                // Right after a tick, nothing else ready: round again, where
                // the clock is read (no wait here, which would hold the tick).
                () = std::future::ready(()), if after_tick => {}
            }
        }
        self.shard.stop_admitting();
        self.stop(&mut commands).await;
        tracing::debug!(shard = %self.shard.id(), "tick driver stopped");
    }

    /// Stopping: closes every socket ("going away"), then serves their
    /// closes and lingers until they are all done or the longest close is
    /// over. Handshakes still arriving are refused.
    async fn stop(&mut self, commands: &mut mpsc::Receiver<Command>) {
        self.hub.close_all(CloseReason::Shutdown);
        self.players_said();
        let deadline = time::now() + CLOSE_WRITE_TIMEOUT + LINGER + STOPPING_STEP;
        let mut step = tokio::time::interval(STOPPING_STEP);
        while !self.hub.is_empty() && time::now() < deadline {
            tokio::select! {
                ready = self.hub.ready() => self.hub.on_ready(&ready),
                _ = step.tick() => self.hub.expire(time::now()),
                Some(cmd) = commands.recv() => match cmd {
                    Command::Join(join) => self.refuse(join.conn, CloseReason::Shutdown, None),
                    Command::Ask(Ask::Refuse { conn, .. }) => self.hub.refuse(*conn, CloseReason::Shutdown, None),
                    Command::Ask(_) => {}
                },
            }
            // Nobody is left to tell: the players' last words are dropped.
            self.inbound = self.hub.take_inbound(std::mem::take(&mut self.inbound));
            self.inbound.clear();
        }
    }

    fn tick(&mut self, tick: Tick, due: time::Instant, period: Duration) {
        // Tests only: a panic outside the core's guards ends the driver.
        fail::fail_point!("tick");
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
        m.views_assembled.inc_by(out.views_assembled as u64);
        m.players.set(self.shard.players() as i64);
        let overloaded = self.shard.admission().is_overloaded();
        m.overloaded.set(i64::from(overloaded));
        for lag in &out.relay_lag_ms {
            m.relay_lag.observe(*lag as f64 / 1000.0);
        }
        let core = CoreState { drain_from: self.shard.drain_from(), fenced: self.shard.is_fenced() };
        let figures = self.vitals.tick(started, lateness, &out.relay_lag_ms, core);
        let tick = out.frame.tick;
        let mut resync = Vec::new();
        let delivering = time::now();
        self.hub.deliver(&out.frame, &mut resync);
        m.tick_deliver.observe(delivering.elapsed().as_secs_f64());
        self.metrics.view_resyncs.inc_by(resync.len() as u64);
        for link in resync {
            self.shard.resync(link);
        }
        let now = time::now();
        let refresh = self.hub.sweep(now);
        self.hub.expire(now);
        self.refresh(refresh);
        if let Some(link) = &self.cluster {
            if let Some(bytes) = out.publish_snapshot {
                let cells = out.publish_cells;
                link.snapshot.send_replace(Some(OwnSnapshot {
                    tick,
                    step: out.step,
                    server_time_ms: wall_ms,
                    at: started,
                    bytes,
                    cells,
                }));
            }
            link.local.send_if_modified(|s| {
                let state = LocalState {
                    players: self.shard.players(),
                    overloaded,
                    highest_player: self.shard.highest_player(),
                    epoch: self.shard.presence_epoch(),
                    figures: figures.unwrap_or_else(|| s.figures.clone()),
                };
                std::mem::replace(s, state.clone()) != state
            });
        }
        self.players_said();
        self.metrics.tick_duration.observe(started.elapsed().as_secs_f64());
    }

    /// Carries out a handshake task's request. A panic in the core while
    /// doing it is caught, counted and logged, and the shard goes on; the
    /// connection ends with 1011: a join's socket is refused here, and for
    /// the other requests the reply channel is dropped, which the handshake
    /// task that asked answers with 1011.
    fn command(&mut self, cmd: Command) {
        let what = cmd.label();
        let run = match cmd {
            Command::Join(join) => self.join(*join),
            Command::Ask(ask) => guard::caught(|| self.ask(ask)),
        };
        if let Err(panic) = run {
            self.metrics.core_panic(PanicKind::Command);
            tracing::error!(
                command = what,
                panic,
                "the shard core panicked on a request; its connection is dropped, the shard goes on"
            );
        }
        self.players_said();
    }

    /// A join: the one request that carries its socket, so the socket is
    /// kept out of the core's call and a panic there refuses it with 1011
    /// rather than dropping it without a code.
    fn join(&mut self, join: Join) -> Result<(), String> {
        let Join { name, resume, account, capabilities, conn, welcome, reply } = join;
        let admitted = guard::caught(|| {
            fail::fail_point!("core-command");
            let carrier = match conn {
                Handed::Socket(_) => Carrier::Stream,
                Handed::Session(_) => Carrier::Datagrams,
            };
            self.shard.join(&name, resume, time::wall_ms(), capabilities, carrier)
        });
        match admitted {
            Ok(admitted) => guard::caught(|| self.joined(admitted, account, conn, welcome, reply)),
            Err(panic) => {
                self.refuse(conn, CloseReason::Internal, None);
                Err(panic)
            }
        }
    }

    /// Refuses a joining connection, whichever it is.
    fn refuse(&mut self, conn: Handed, reason: CloseReason, first: Option<bytes::Bytes>) {
        match conn {
            Handed::Socket(conn) => self.hub.refuse(*conn, reason, first),
            Handed::Session(conn) => self.hub.refuse_remote(conn, reason, first),
        }
    }

    /// Carries out an ask other than a join.
    fn ask(&mut self, ask: Ask) {
        fail::fail_point!("core-command");
        let wall_ms = time::wall_ms();
        match ask {
            Ask::Reserve { reply } => {
                let answer = self.shard.reserve();
                if let Err(busy) = &answer {
                    self.metrics.refused(busy.refusal);
                }
                if let Err(Ok(())) = reply.send(answer) {
                    self.shard.unreserve();
                }
            }
            Ask::Unreserve => self.shard.unreserve(),
            Ask::ClaimLocal { ticket, account, require_account, reply } => {
                let gate = AccountGate { account: account.as_deref(), require: require_account };
                let _ = reply.send(self.shard.claim_local(&ticket, wall_ms, gate));
            }
            Ask::LoginLocal { account, name, reply } => {
                let _ = reply.send(self.shard.login_local(&account, &name, wall_ms));
            }
            Ask::NewId { reply } => {
                let _ = reply.send(self.shard.new_id());
            }
            Ask::ReleaseWelcome { link } => self.hub.welcome(link),
            Ask::Refuse { conn, reason, first } => self.hub.refuse(*conn, reason, first),
            Ask::Order { order, reply } => {
                let _ = reply.send(self.shard.order(&order));
            }
            Ask::Find { query, limit, reply } => {
                let _ = reply.send(self.shard.find(&query, limit));
            }
        }
    }

    /// A join the core answered: refused (busy) or admitted (the socket
    /// joins the hub).
    fn joined(
        &mut self,
        admitted: Result<Admitted, Busy>,
        account: Option<Box<str>>,
        conn: Handed,
        welcome: Welcome,
        reply: oneshot::Sender<Result<Joined, Busy>>,
    ) {
        match admitted {
            Err(busy) => {
                self.metrics.refused(busy.refusal);
                let frame = ws_frame::binary(&msg::encode_busy(busy.refusal.label(), busy.retry_after_ms));
                self.refuse(conn, CloseReason::Busy, Some(frame));
                let _ = reply.send(Err(busy));
            }
            Ok(admitted) => {
                let joined = Joined {
                    player: admitted.player,
                    link: admitted.link,
                    ticket: admitted.ticket,
                    position: admitted.position,
                };
                match conn {
                    Handed::Socket(conn) => self.hub.join(*conn, &joined, account, &admitted.welcome, welcome),
                    Handed::Session(conn) => {
                        self.hub.join_remote(conn, &joined, account, &admitted.welcome, welcome);
                    }
                }
                self.metrics.players.set(self.shard.players() as i64);
                if reply.send(Ok(joined)).is_err() && welcome == Welcome::Held {
                    // Its handshake task is gone: nobody will release the welcome.
                    self.hub.welcome(joined.link);
                }
            }
        }
    }

    /// Takes what the sessions' tasks said and is waiting, up to
    /// [`SESSIONS_A_PASS`] messages.
    fn sessions_said(&mut self, sessions: &mut Option<mpsc::Receiver<FromSession>>) {
        let Some(queue) = sessions.as_mut() else { return };
        for _ in 0..SESSIONS_A_PASS {
            let Ok(said) = queue.try_recv() else { return };
            self.hub.on_session(said);
        }
    }

    /// Carries what the players sent (and their sockets' closes) to the
    /// core, then the core's effects out.
    fn players_said(&mut self) {
        loop {
            let mut inbound = self.hub.take_inbound(std::mem::take(&mut self.inbound));
            if inbound.is_empty() {
                self.inbound = inbound;
                break;
            }
            let wall_ms = time::wall_ms();
            for event in inbound.drain(..) {
                self.event(event, wall_ms);
            }
            self.inbound = inbound;
        }
        self.carry_out();
    }

    /// Carries one thing a player sent (or its leave) to the core. A panic
    /// in the core while doing it is caught: that player's socket closes
    /// with 1011 (its leave then comes back through the hub), it is counted
    /// and logged, and the shard goes on.
    fn event(&mut self, event: Inbound, wall_ms: u64) {
        // Whose it was, for the log and the close if the core panics (a
        // leave's socket is gone already; a player's is looked up then).
        let (what, player, link) = match &event {
            Inbound::Input { player, .. } => ("input", Some(*player), None),
            Inbound::Chat { player, .. } => ("chat", Some(*player), None),
            Inbound::Names { link, .. } => ("names", None, Some(*link)),
            Inbound::Resync { link } => ("resync", None, Some(*link)),
            Inbound::Left { player, .. } => ("left", Some(*player), None),
        };
        let left = matches!(event, Inbound::Left { .. });
        let run = guard::caught(|| {
            fail::fail_point!("core-event");
            match event {
                Inbound::Input { player, dir, seq } => self.shard.input(player, dir, seq),
                Inbound::Chat { player, text } => self.shard.chat(player, &text, wall_ms),
                Inbound::Names { link, ids } => {
                    let names = self.shard.names(&ids);
                    self.hub.send(link, ws_frame::binary(&names));
                }
                Inbound::Resync { link } => {
                    if self.shard.refill(link) {
                        self.metrics.webtransport_resyncs.inc();
                    }
                }
                Inbound::Left { player, link } => self.shard.leave(player, link, wall_ms),
            }
        });
        if let Err(panic) = run {
            self.metrics.core_panic(PanicKind::Event);
            tracing::error!(
                event = what,
                player = player.map(|p| p.0),
                panic,
                "the shard core panicked on a player's message; its socket is closed, the shard goes on"
            );
            let close = link.or_else(|| player.filter(|_| !left).and_then(|p| self.shard.link_of(p)));
            if let Some(link) = close {
                self.hub.close_link(link, CloseReason::Internal, None);
            }
        }
    }

    /// Draining: the player behind `link` gets its fresh ticket in a Move,
    /// then its socket closes.
    fn move_out(&mut self, link: LinkId, next: Ticket) {
        self.close_moved(link, next);
        self.players_said();
    }

    /// Sends the socket behind `link` a Move with its fresh ticket `next`,
    /// then closes it (4018 "moved").
    fn close_moved(&mut self, link: LinkId, next: Ticket) {
        let frame = ws_frame::binary(&msg::encode_move(next.as_bytes(), "shard draining"));
        self.hub.close_link(link, CloseReason::Moved, Some(frame));
    }

    /// Refreshes the TTL of `players`' tickets in Redis, in a task (one at a
    /// time: a round that finds the last still running is skipped; each
    /// ticket is refreshed about every third of its TTL).
    ///
    /// When Redis lost this shard's keys (the registry says so), every
    /// player's session and ticket is written again in the next round
    /// instead ([`crate::resume::store::SessionStore::refresh`] writes what
    /// is missing).
    fn refresh(&self, players: Vec<Refresh>) {
        let Some(link) = &self.cluster else { return };
        // Most ticks have no ticket due and nothing lost: nothing to take.
        if players.is_empty() && !link.status.sessions_lost.load(Ordering::Acquire) {
            return;
        }
        if self.refreshing.swap(true, Ordering::AcqRel) {
            return;
        }
        let restore = link.status.sessions_lost.swap(false, Ordering::AcqRel);
        let players = if restore { self.hub.every_refresh() } else { players };
        // What the store writes again when Redis lost it: the name and the
        // session's generation, from the core.
        let kept: Vec<(Refresh, Arc<str>, u64)> = players
            .into_iter()
            .filter_map(|r| {
                let name = self.shard.world().player(r.player)?.name.clone();
                let generation = self.shard.generation(r.player)?;
                Some((r, name, generation))
            })
            .collect();
        if kept.is_empty() {
            self.refreshing.store(false, Ordering::Release);
            return;
        }
        let (store, busy, stop) = (link.store.clone(), self.refreshing.clone(), link.stop.clone());
        self.tracker.spawn(async move {
            let mut restored = 0usize;
            for (r, name, generation) in &kept {
                if stop.is_cancelled() {
                    break;
                }
                let k = Kept {
                    player: r.player,
                    ticket: r.ticket,
                    account: r.account.as_deref(),
                    name,
                    generation: *generation,
                    restore,
                };
                match store.refresh(&k).await {
                    Ok(wrote) => restored += usize::from(wrote),
                    Err(e) => tracing::debug!(error = %e, "ticket refresh failed"),
                }
            }
            if restored > 0 {
                tracing::info!(players = restored, "sessions and tickets Redis had lost written again");
            }
            busy.store(false, Ordering::Release);
        });
    }

    /// Carries out what the core asked for, in order.
    fn carry_out(&mut self) {
        let mut effects = std::mem::take(&mut self.effects);
        effects.extend(self.shard.effects());
        for effect in effects.drain(..) {
            match effect {
                Effect::Tell { link, control: Control::Close(reason) } => self.hub.close_link(link, reason, None),
                Effect::Tell { link, control: Control::Move(next) } => self.reissue(link, next),
                Effect::Tell { link, control: Control::Kick(why) } => self.hub.kick(link, &why),
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
                Effect::DrainOrdered => self.life.drain.cancel(),
                Effect::Dropped(kind, n) => self.metrics.dropped(kind, n),
            }
        }
        self.effects = effects;
    }

    /// Draining: stores the move's fresh ticket in Redis (in a task), then
    /// moves the player out; standalone, at once. While Redis does not take
    /// the ticket the player stays and plays on here, the store asked again
    /// every [`CHECK_RETRY`], until it does or the shard stops (the drain's
    /// timeout, a second SIGTERM): moved with a ticket no shard could find,
    /// the player would rejoin as new; stopped, it is closed as every player
    /// left then is, and resumes elsewhere with the ticket it holds once
    /// Redis answers again (an outside trial: a drain during a Redis outage
    /// "moved" every player in 0.14 s, each then refused and new).
    fn reissue(&mut self, link: LinkId, next: Ticket) {
        let (Some(cluster), Some((player, old))) = (&self.cluster, self.hub.ticket(link)) else {
            self.close_moved(link, next);
            return;
        };
        let (store, moves, stop) = (cluster.store.clone(), self.moves_tx.clone(), cluster.stop.clone());
        self.tracker.spawn(async move {
            let mut failed = false;
            loop {
                match store.reissue(player, old, next).await {
                    Ok(Reissued::Stored) => break,
                    Ok(Reissued::NotOurs) => {
                        // Resumed elsewhere meanwhile: this socket is stale.
                        tracing::info!(%player, "move ticket not stored: another shard owns the session now");
                        break;
                    }
                    // Redis restarted empty: the session is written again
                    // whole by the refresh of lost sessions, then the ticket.
                    Ok(Reissued::NoSession) if !failed => {
                        failed = true;
                        tracing::warn!(%player, "move ticket not stored; the session is not in redis yet (written again once the shard finds it lost): the player stays until it is");
                    }
                    Err(e) if !failed => {
                        failed = true;
                        tracing::warn!(error = %e, %player, "move ticket not stored; the player stays until Redis takes it or the drain times out");
                    }
                    Ok(Reissued::NoSession) | Err(_) => {}
                }
                tokio::select! {
                    () = stop.cancelled() => {
                        tracing::warn!(%player, "move ticket never stored before the stop: the player is closed with the ticket it holds");
                        return;
                    }
                    () = tokio::time::sleep(CHECK_RETRY) => {}
                }
            }
            if failed {
                tracing::info!(%player, "move ticket stored after Redis came back; moving the player");
            }
            let _ = moves.send((link, next)).await;
        });
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

/// Most messages of the sessions' queue taken in one pass of the driver's
/// loop besides the one that woke it (a pass then acts on them once).
const SESSIONS_A_PASS: usize = 256;

/// The next item of `queue`; with no queue (standalone: no cluster events),
/// never.
async fn next<T>(queue: &mut Option<mpsc::Receiver<T>>) -> Option<T> {
    match queue {
        Some(queue) => queue.recv().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests;
