//! The hub: every admitted websocket of the shard, owned by the tick driver
//! and driven by readiness, with no task per socket.
//!
//! A socket's handshake runs in a task of its own (`crate::session`) until the
//! player is admitted; then the socket and what was read of it are handed to
//! the hub ([`Handover`]) and the task ends. From then on:
//!
//! - **Reads**: the hub's poller (its own epoll, level-triggered, itself
//!   watched by tokio) says which sockets have bytes; the driver asks
//!   [`Hub::ready`] and hands the answer to [`Hub::on_ready`], which reads
//!   each into one scratch buffer (64 KiB, shared by all), parses the frames
//!   and turns the messages into [`Inbound`]s for the driver to carry to the
//!   shard core.
//! - **Writes**: [`Hub::deliver`] gives every socket the tick's frames with
//!   one non-blocking vectored write; a socket that cannot take them is
//!   watched for room and finished when it has some.
//! - **Timers**: one sweep a period ([`Hub::sweep`]: pings, the peer timeout,
//!   too-slow sockets, which tickets to refresh) and the closing sockets'
//!   deadlines ([`Hub::expire`]), both run from the tick.
//! - **Close**: an error and a close frame, FIN, then a linger that reads and
//!   discards until the peer's close frame or FIN (see
//!   [`crate::websocket::closing`]).
//!
//! The first version spent a tokio task per socket (its future about 2.5 KB),
//! a tungstenite reader with its own buffer, and an outbox shared through a
//! mutex and two `Notify`s: about 6.5 KB a socket in the process. Here an idle
//! socket is one boxed [`Conn`] and a map entry.

pub mod batch;
pub mod conn;
pub mod liveness;
pub mod outbox;
pub mod poller;
pub mod rate_limit;
pub mod remote;

pub use conn::{Handover, Inbound};

use crate::clock::{self, Instant};
use crate::close::CloseReason;
use crate::config::Config;
use crate::metrics::{Metrics, Tally, Transport};
use crate::resume::Ticket;
use crate::shard::{LinkId, TickFrame, ViewFrames};
use crate::websocket::closing::{Linger, ReadEnd, LINGER};
use crate::websocket::frame as ws_frame;
use bytes::Bytes;
use conn::{App, Closing, Conn, Lent, Limits, Outcome, Player};
use liveness::{Check, Liveness};
use mino_protocol::server as msg;
use mino_protocol::PlayerId;
use outbox::{Stuck, Written};
use poller::{Poller, Ready, READ, WRITE};
use remote::{FromSession, Remotes};
use std::collections::{HashMap, HashSet};
use std::io;
use std::num::NonZeroU64;
use std::time::Duration;

/// An admitted player, as the tick driver answers its handshake task and
/// files its socket in the hub ([`Hub::join`]).
#[derive(Debug, Clone, Copy)]
pub struct Joined {
    /// The player's id.
    pub player: PlayerId,
    /// The link its socket is filed under.
    pub link: LinkId,
    /// The resume ticket carried in the welcome.
    pub ticket: Ticket,
    /// Where the player stands as it is welcomed, world units.
    pub position: (f32, f32),
}

/// What a join hands the hub: a websocket's socket, or a session whose I/O
/// runs in a task of its own (WebTransport).
#[derive(Debug)]
pub enum Handed {
    /// A websocket and what its handshake read of it.
    Socket(Box<Handover>),
    /// A session's queue.
    Session(remote::Handover),
}

/// When a joined player's welcome is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Welcome {
    /// At once, as the socket joins.
    Now,
    /// When [`Hub::welcome`] releases it (clustered: once the session is
    /// stored in Redis), or after [`HELD_MAX`]; the tick's frames gather
    /// meanwhile.
    Held,
}

/// Size of the one read buffer every socket is read into, bytes.
pub const SCRATCH_BYTES: usize = 64 * 1024;

/// Longest the server spends writing its close frames to a peer that does
/// not read them.
pub const CLOSE_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// Longest a joined socket waits for its welcome (clustered, the session is
/// stored in Redis first; the store's own timeouts are shorter, so this is
/// only a backstop).
pub const HELD_MAX: Duration = Duration::from_secs(10);

/// Where the players' resume tickets live, which decides whether the sweep
/// refreshes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tickets {
    /// In this process (standalone): nothing to refresh.
    Local,
    /// In Redis, with a TTL: each refreshed about every third of it.
    Redis,
}

/// A player whose ticket's TTL is due for a refresh in Redis.
#[derive(Debug)]
pub struct Refresh {
    /// Who.
    pub player: PlayerId,
    /// Its current ticket.
    pub ticket: Ticket,
    /// Its account, if any.
    pub account: Option<Box<str>>,
}

/// A joined socket not yet welcomed.
struct Held {
    welcome: Bytes,
    until: Instant,
}

/// Every socket of the shard past its handshake.
pub struct Hub {
    /// What the sockets' messages are for: the game, or an echo.
    app: App,
    poller: Poller,
    conns: Vec<Option<Box<Conn>>>,
    free: Vec<u32>,
    by_link: HashMap<LinkId, u32>,
    held: HashMap<u32, Held>,
    closing: HashSet<u32>,
    scratch: Box<[u8]>,
    limits: Limits,
    liveness: Liveness,
    /// Sweeps between two refreshes of a ticket (`None`: no refresh,
    /// standalone).
    refresh_every: Option<NonZeroU64>,
    sweeps: u64,
    inbound: Vec<Inbound>,
    tally: Tally,
    metrics: Metrics,
    /// Sessions whose I/O runs in a task of their own (WebTransport).
    remotes: Remotes,
    /// Slots whose outbox may need the next tick even when it brings them
    /// nothing ([`Outbox::needs_tick`]): a quiet tick visits only these and
    /// its recipients. May hold duplicates and freed slots.
    attention: Vec<u32>,
}

impl Hub {
    /// An empty hub with `config`'s limits, counting into `metrics`;
    /// `tickets` says whether their TTL needs refreshing.
    ///
    /// Errors: the epoll instance could not be made or registered with tokio
    /// (must be called within a tokio runtime).
    pub fn new(config: &Config, metrics: Metrics, tickets: Tickets) -> io::Result<Hub> {
        let poller = Poller::new()?;
        let period = config.socket.sweep_period();
        let now = clock::now();
        let refresh_every = match tickets {
            Tickets::Redis => {
                let sweeps = (config.ticket_ttl / 3).as_millis().div_ceil(period.as_millis().max(1));
                NonZeroU64::new(u64::try_from(sweeps).unwrap_or(u64::MAX).max(1))
            }
            Tickets::Local => None,
        };
        Ok(Hub {
            app: App::Game,
            poller,
            conns: Vec::new(),
            free: Vec::new(),
            by_link: HashMap::new(),
            held: HashMap::new(),
            closing: HashSet::new(),
            scratch: vec![0; SCRATCH_BYTES].into_boxed_slice(),
            limits: Limits::of(&config.socket),
            liveness: Liveness::new(config.socket.ping_interval, config.socket.peer_timeout, period, now),
            refresh_every,
            sweeps: 0,
            inbound: Vec::new(),
            tally: Tally::default(),
            metrics,
            remotes: Remotes::default(),
            attention: Vec::new(),
        })
    }

    /// An empty hub that echoes every message of its sockets instead of
    /// carrying them to the game ([`App::Echo`], for a websocket conformance
    /// suite): the same reads, frames, limits, closes and lingers, with
    /// `config`'s limits. Its sockets come in through [`Hub::adopt`].
    ///
    /// Errors: as [`Hub::new`].
    pub fn echo(config: &Config, metrics: Metrics) -> io::Result<Hub> {
        let mut hub = Hub::new(config, metrics, Tickets::Local)?;
        hub.app = App::Echo;
        Ok(hub)
    }

    /// Takes a socket straight after its upgrade (an echo hub's): opens its
    /// outbox and reads what its reader already holds.
    pub fn adopt(&mut self, handed: Handover) {
        let now = clock::now();
        let Some(slot) = self.insert(Conn::new(handed, None, now)) else { return };
        let written = match self.conns[slot as usize].as_mut() {
            Some(c) => c.outbox.open(None, now, &mut self.tally),
            None => return,
        };
        self.after_write(slot, written, now);
        self.kept(slot, now);
        self.count();
    }

    /// Goes on with the frames `slot`'s reader kept from before the hub
    /// took the socket.
    fn kept(&mut self, slot: u32, now: Instant) {
        let outcome = match self.conns[slot as usize].as_mut() {
            Some(c) => guarded(slot, || {
                c.kept_frames(Lent {
                    app: self.app,
                    scratch: &mut [],
                    limits: &self.limits,
                    now,
                    out: &mut self.inbound,
                    tally: &mut self.tally,
                })
            }),
            None => Outcome::Open,
        };
        self.settle(slot, outcome, now);
    }

    /// Takes an admitted session whose I/O runs in a task of its own
    /// (WebTransport): it gets every tick's messages through its queue,
    /// gathered until `message` (the encoded Welcome) goes out, when
    /// `welcome` says.
    pub fn join_remote(
        &mut self,
        handed: remote::Handover,
        joined: &Joined,
        account: Option<Box<str>>,
        message: &[u8],
        welcome: Welcome,
    ) {
        let now = clock::now();
        let player = Player::new(joined.player, joined.link, joined.ticket, account, &self.limits, now);
        self.remotes.join(handed, player, message, welcome, now);
    }

    /// Refuses a session whose I/O runs in a task of its own: it is told
    /// to write `first` (a Busy) and the Error, and to close.
    pub fn refuse_remote(&mut self, handed: remote::Handover, reason: CloseReason, first: Option<Bytes>) {
        remote::refuse(handed, reason, first.as_ref(), &self.metrics);
    }

    /// The queue capacity of a session whose I/O runs in a task of its own.
    pub fn remote_queue(&self) -> usize {
        remote::queue_capacity(&self.limits)
    }

    /// What a session task said: a message of its peer (read as a
    /// websocket player's), or its close. What the players sent is then in
    /// [`Hub::take_inbound`].
    pub fn on_session(&mut self, said: FromSession) {
        let now = clock::now();
        match said {
            FromSession::Message(link, data) => {
                let (limits, metrics) = (&self.limits, &self.metrics);
                let remotes = &mut self.remotes;
                let inbound = &mut self.inbound;
                let read = crate::guard::caught(|| remotes.on_message(link, &data, limits, now, metrics, inbound));
                if let Err(panic) = read {
                    tracing::error!(
                        link = link.0,
                        panic,
                        "a panic while handling a session's message; closing it (1011)"
                    );
                    self.remotes.close(link, CloseReason::Internal, None, &self.metrics, &mut self.inbound);
                }
            }
            FromSession::Closed(link, reason) => {
                self.remotes.close(link, reason, None, &self.metrics, &mut self.inbound);
            }
        }
    }

    /// Sockets in the hub, closing ones included.
    pub fn len(&self) -> usize {
        self.conns.len() - self.free.len()
    }

    /// True when no socket is left.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes an admitted player's socket: from now on it gets every tick's
    /// frames, gathered until `message` (the encoded Welcome) goes out, when
    /// `welcome` says. Messages the reader kept from the handshake are
    /// handled at once.
    pub fn join(
        &mut self,
        handed: Handover,
        joined: &Joined,
        account: Option<Box<str>>,
        message: &[u8],
        welcome: Welcome,
    ) {
        let now = clock::now();
        let link = joined.link;
        let p = Player::new(joined.player, link, joined.ticket, account, &self.limits, now);
        let message = ws_frame::binary(message);
        let Some(slot) = self.insert(Conn::new(handed, Some(p), now)) else {
            // The poller refused the socket (closed by `insert`): the player
            // admitted for it leaves at once, as after any close.
            self.inbound.push(Inbound::Left { player: joined.player, link });
            return;
        };
        self.by_link.insert(link, slot);
        match welcome {
            Welcome::Held => {
                self.held.insert(slot, Held { welcome: message, until: now + HELD_MAX });
            }
            Welcome::Now => self.open(slot, message, now),
        }
        self.kept(slot, now);
        self.count();
    }

    /// Takes a socket refused before admission, to close: writes `first`
    /// (a Busy, say) if given, then the error and close frames of `reason`,
    /// and lingers.
    pub fn refuse(&mut self, handed: Handover, reason: CloseReason, first: Option<Bytes>) {
        let now = clock::now();
        let Some(slot) = self.insert(Conn::new(handed, None, now)) else { return };
        self.close(slot, reason, first, now);
        self.count();
    }

    /// Writes the welcome of a socket held at [`Hub::join`].
    pub fn welcome(&mut self, link: LinkId) {
        if self.remotes.has(link) {
            self.remotes.welcome(link, &self.metrics, &mut self.inbound);
            return;
        }
        let Some(&slot) = self.by_link.get(&link) else { return };
        if let Some(held) = self.held.remove(&slot) {
            self.open(slot, held.welcome, clock::now());
            self.count();
        }
    }

    /// The player behind `link` and its current ticket.
    pub fn ticket(&self, link: LinkId) -> Option<(PlayerId, Ticket)> {
        if let Some(found) = self.remotes.ticket(link) {
            return Some(found);
        }
        let slot = *self.by_link.get(&link)?;
        let player = self.conns.get(slot as usize)?.as_ref()?.player.as_ref()?;
        Some((player.id, player.ticket))
    }

    /// Writes `frame` to `link`'s socket after what waits there.
    pub fn send(&mut self, link: LinkId, frame: Bytes) {
        if self.remotes.has(link) {
            self.remotes.send(link, &frame, &self.metrics, &mut self.inbound);
            return;
        }
        let Some(&slot) = self.by_link.get(&link) else { return };
        let now = clock::now();
        let written = match self.conns[slot as usize].as_mut() {
            Some(c) => c.outbox.send(&[frame], now, &mut self.tally),
            None => return,
        };
        self.after_write(slot, written, now);
        self.count();
    }

    /// Closes `link`'s socket for `reason`, after `first` (a Move, say).
    pub fn close_link(&mut self, link: LinkId, reason: CloseReason, first: Option<Bytes>) {
        if self.remotes.has(link) {
            self.remotes.close(link, reason, first.as_ref(), &self.metrics, &mut self.inbound);
            return;
        }
        if let Some(&slot) = self.by_link.get(&link) {
            self.close(slot, reason, first, clock::now());
            self.count();
        }
    }

    /// Closes `link`'s socket because an operator removed its player
    /// ([`CloseReason::Kicked`], 4040): the Error message and the close frame
    /// say `why` (the operator's reason) after the reason's own text; the
    /// close frame keeps what fits of it (123 bytes).
    pub fn kick(&mut self, link: LinkId, why: &str) {
        let reason = CloseReason::Kicked;
        let text = format!("{}: {why}", reason.message());
        if self.remotes.has(link) {
            self.remotes.close_saying(link, reason, None, &text, &self.metrics, &mut self.inbound);
            return;
        }
        if let Some(&slot) = self.by_link.get(&link) {
            self.close_saying(slot, reason, None, &text, clock::now());
            self.count();
        }
    }

    /// Closes every admitted socket for `reason` (shutdown).
    pub fn close_all(&mut self, reason: CloseReason) {
        self.remotes.close_all(reason, &self.metrics, &mut self.inbound);
        let now = clock::now();
        let slots: Vec<u32> = self.by_link.values().copied().collect();
        for slot in slots {
            self.close(slot, reason, None, now);
        }
        self.count();
    }

    /// The sockets that are ready, once there are some. Cancel-safe:
    /// nothing is taken from the poller until it returns.
    pub async fn ready(&self) -> Ready {
        self.poller.ready().await
    }

    /// Handles the sockets `ready` names: reads them, finishes writes they
    /// have room for. What the players sent is then in
    /// [`Hub::take_inbound`].
    pub fn on_ready(&mut self, ready: &Ready) {
        let now = clock::now();
        for event in ready.iter() {
            let slot = event.slot;
            if event.writable() {
                let written = match self.conns.get_mut(slot as usize).and_then(Option::as_mut) {
                    Some(c) => c.outbox.on_writable(now, &mut self.tally),
                    None => continue,
                };
                self.after_write(slot, written, now);
            }
            if event.readable() {
                let outcome = match self.conns.get_mut(slot as usize).and_then(Option::as_mut) {
                    Some(c) => guarded(slot, || {
                        c.read(Lent {
                            app: self.app,
                            scratch: &mut self.scratch,
                            limits: &self.limits,
                            now,
                            out: &mut self.inbound,
                            tally: &mut self.tally,
                        })
                    }),
                    None => continue,
                };
                self.settle(slot, outcome, now);
            }
        }
        self.count();
    }

    /// What the players sent since the last call, in order, swapped with
    /// `spare` (an empty vector, to keep the allocations).
    pub fn take_inbound(&mut self, spare: Vec<Inbound>) -> Vec<Inbound> {
        std::mem::replace(&mut self.inbound, spare)
    }

    /// Writes `frame` to every admitted socket (the frames for all, and
    /// those of its view if it is among the frame's recipients); closes the
    /// ones that failed or fell too far behind. A quiet tick (no event, no
    /// roster) visits only its recipients and the sockets with something of
    /// their own to write: a standing crowd's sockets are not touched.
    pub fn deliver(&mut self, frame: &TickFrame, resync: &mut Vec<LinkId>) {
        let now = clock::now();
        let mut stuck = Vec::new();
        if frame.is_quiet() {
            let mut visit = std::mem::take(&mut self.attention);
            visit.extend(frame.recipients.iter().filter_map(|(link, _)| self.by_link.get(&link).copied()));
            visit.sort_unstable();
            visit.dedup();
            for slot in visit {
                self.deliver_to(slot, frame, now, &mut stuck, resync);
            }
        } else {
            self.attention.clear();
            for slot in 0..self.conns.len() as u32 {
                self.deliver_to(slot, frame, now, &mut stuck, resync);
            }
        }
        for (slot, why) in stuck {
            self.stuck(slot, why, now);
        }
        self.remotes.deliver(frame, &self.metrics, &mut self.inbound);
        self.count();
    }

    /// [`Hub::deliver`] to one slot (none, or no player yet: nothing).
    fn deliver_to(
        &mut self,
        slot: u32,
        frame: &TickFrame,
        now: Instant,
        stuck: &mut Vec<(u32, Stuck)>,
        resync: &mut Vec<LinkId>,
    ) {
        let Some(conn) = self.conns.get_mut(slot as usize).and_then(Option::as_mut) else { return };
        let Some(link) = conn.player.as_ref().map(|p| p.link) else { return };
        let none = ViewFrames::default();
        let view = frame.view(link).unwrap_or(&none);
        match conn.outbox.deliver(frame, view, now, self.limits.slow, &mut self.tally) {
            Written::Done => unwatch(&self.poller, conn, slot),
            Written::Blocked => watch(&self.poller, conn, slot),
            Written::Stuck(why) => stuck.push((slot, why)),
        }
        if conn.outbox.take_resync() {
            resync.push(link);
        }
        if conn.outbox.needs_tick() {
            self.attention.push(slot);
        }
    }

    /// `slot`'s outbox may need the next tick whatever it brings.
    fn notice(&mut self, slot: u32) {
        if self.conns.get(slot as usize).and_then(Option::as_ref).is_some_and(|c| c.outbox.needs_tick()) {
            self.attention.push(slot);
        }
    }

    /// Every player here, for a refresh of them all at once (Redis lost
    /// their sessions).
    pub fn every_refresh(&self) -> Vec<Refresh> {
        let local = self.conns.iter().flatten().filter_map(|c| c.player.as_ref());
        let mut all: Vec<Refresh> =
            local.map(|p| Refresh { player: p.id, ticket: p.ticket, account: p.account.clone() }).collect();
        all.extend(self.remotes.players().map(|p| Refresh {
            player: p.id,
            ticket: p.ticket,
            account: p.account.clone(),
        }));
        all
    }

    /// The periodic sweep, when due at `now`: pings, closes silent and
    /// too-slow sockets, welcomes sockets held past [`HELD_MAX`]; returns the
    /// players whose tickets are due for a refresh (each about every third of
    /// the ticket's TTL, spread over the sweeps).
    pub fn sweep(&mut self, now: Instant) -> Vec<Refresh> {
        let mut refresh = Vec::new();
        if !self.liveness.due(now) {
            return refresh;
        }
        let sweep = self.liveness.sweep(now);
        if let Some(stalled) = sweep.stalled() {
            tracing::info!(?stalled, "the process was stalled; pinging every peer before counting silence");
        }
        self.sweeps += 1;
        let mut close = Vec::new();
        for (slot, conn) in self.conns.iter_mut().enumerate() {
            let Some(conn) = conn else { continue };
            let Some(player) = &conn.player else { continue };
            match self.liveness.check(&sweep, &mut conn.heard) {
                Check::Silent => close.push((slot as u32, CloseReason::PeerTimeout)),
                Check::Ping => {
                    conn.outbox.ping_next_tick();
                    self.attention.push(slot as u32);
                }
                Check::Fine => {}
            }
            if conn.outbox.too_slow(now, self.limits.slow) {
                close.push((slot as u32, CloseReason::TooSlow));
            }
            let due = self.refresh_every.is_some_and(|every| (slot as u64) % every == self.sweeps % every);
            if due {
                refresh.push(Refresh { player: player.id, ticket: player.ticket, account: player.account.clone() });
            }
        }
        for (slot, reason) in close {
            self.close(slot, reason, None, now);
        }
        if let Some(every) = self.refresh_every {
            let due = self.remotes.players().filter(|p| p.link.0 % every.get() == self.sweeps % every.get());
            refresh.extend(due.map(|p| Refresh { player: p.id, ticket: p.ticket, account: p.account.clone() }));
        }
        self.remotes.overdue(now, &self.metrics, &mut self.inbound);
        let overdue: Vec<u32> = self.held.iter().filter(|(_, h)| now >= h.until).map(|(s, _)| *s).collect();
        for slot in overdue {
            if let Some(held) = self.held.remove(&slot) {
                tracing::warn!(slot, "welcome held too long; sending it");
                self.open(slot, held.welcome, now);
            }
        }
        self.count();
        refresh
    }

    /// Drops closing sockets whose close frames did not go out in time or
    /// whose linger is over.
    pub fn expire(&mut self, now: Instant) {
        let over: Vec<u32> = self
            .closing
            .iter()
            .copied()
            .filter(|s| {
                let c = self.conns[*s as usize].as_ref().and_then(|c| c.closing.as_ref());
                c.is_none_or(|c| now >= c.until)
            })
            .collect();
        for slot in over {
            self.remove(slot);
        }
    }

    /// Stores `conn` and registers its socket with the poller; `None` (and the
    /// socket closed) if the poller refuses it.
    fn insert(&mut self, conn: Conn) -> Option<u32> {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.conns.push(None);
                (self.conns.len() - 1) as u32
            }
        };
        let mut conn = Box::new(conn);
        conn.interest = READ;
        if let Err(e) = self.poller.add(conn.outbox.socket(), slot, READ) {
            tracing::warn!(error = %e, "socket not registered with the hub's poller; dropped");
            self.free.push(slot);
            self.metrics.connections.dec();
            return None;
        }
        self.conns[slot as usize] = Some(conn);
        self.attention.push(slot);
        Some(slot)
    }

    /// Drops a socket: out of the poller, closed, its slot free.
    fn remove(&mut self, slot: u32) {
        let Some(conn) = self.conns.get_mut(slot as usize).and_then(Option::take) else { return };
        self.poller.delete(conn.outbox.socket());
        if let Some(player) = &conn.player {
            self.by_link.remove(&player.link);
        }
        self.held.remove(&slot);
        self.closing.remove(&slot);
        self.free.push(slot);
        self.metrics.connections.dec();
        let discarded = conn.closing.as_ref().map_or(0, |c| c.discarded);
        tracing::trace!(slot, discarded, "socket dropped");
    }

    /// Writes the welcome, then what was gathered meanwhile.
    fn open(&mut self, slot: u32, welcome: Bytes, now: Instant) {
        let written = match self.conns[slot as usize].as_mut() {
            Some(c) => c.outbox.open(Some(welcome), now, &mut self.tally),
            None => return,
        };
        self.after_write(slot, written, now);
    }

    /// Acts on what a write left: watch for room, close a stuck socket, or
    /// finish a close.
    fn after_write(&mut self, slot: u32, written: Written, now: Instant) {
        let Some(conn) = self.conns[slot as usize].as_mut() else { return };
        match written {
            Written::Blocked => watch(&self.poller, conn, slot),
            Written::Stuck(why) => self.stuck(slot, why, now),
            Written::Done => {
                unwatch(&self.poller, conn, slot);
                if let Some(c) = conn.closing.as_mut() {
                    if !c.flushed {
                        c.flushed = true;
                        c.until = now + LINGER;
                    }
                    if c.is_done() {
                        self.remove(slot);
                    } else if c.read_done {
                        set_interest(&self.poller, conn, slot, 0);
                    }
                }
            }
        }
        self.notice(slot);
    }

    /// A socket whose writes failed or fell too far behind.
    fn stuck(&mut self, slot: u32, why: Stuck, now: Instant) {
        let Some(conn) = self.conns[slot as usize].as_mut() else { return };
        if conn.closing.is_some() {
            // Its close frames cannot go: nothing more to do.
            self.remove(slot);
            return;
        }
        if why == Stuck::Failed {
            conn.end = ReadEnd::Gone;
        }
        self.close(slot, why.close_reason(), None, now);
    }

    /// Acts on what a read came to.
    fn settle(&mut self, slot: u32, outcome: Outcome, now: Instant) {
        match outcome {
            Outcome::Open => {
                // A read may have queued a write (a pong, names).
                let Some(conn) = self.conns[slot as usize].as_mut() else { return };
                if conn.outbox.is_blocked() {
                    watch(&self.poller, conn, slot);
                }
                if conn.closing.as_ref().is_some_and(|c| c.read_done) {
                    // Done reading (a socket at its end stays readable).
                    let interest = conn.interest & WRITE;
                    set_interest(&self.poller, conn, slot, interest);
                }
                if let Some(why) = conn.outbox.stuck() {
                    self.stuck(slot, why, now);
                }
                self.notice(slot);
            }
            Outcome::Close(reason) => self.close(slot, reason, None, now),
            Outcome::Finished => self.remove(slot),
        }
    }

    /// Begins the close of a socket: its player leaves (an [`Inbound::Left`]),
    /// `first` then the error (if the reason tells the peer) and close frames
    /// are written, the write side shut, and the socket lingers as
    /// [`Linger::after`] says.
    fn close(&mut self, slot: u32, reason: CloseReason, first: Option<Bytes>, now: Instant) {
        self.close_saying(slot, reason, first, reason.message(), now);
    }

    /// [`Hub::close`] with `text` in the error and close frames instead of
    /// the reason's own message.
    fn close_saying(&mut self, slot: u32, reason: CloseReason, first: Option<Bytes>, text: &str, now: Instant) {
        let Some(conn) = self.conns.get_mut(slot as usize).and_then(Option::as_mut) else { return };
        if conn.closing.is_some() {
            return;
        }
        if let Some(player) = conn.player.take() {
            self.by_link.remove(&player.link);
            self.inbound.push(Inbound::Left { player: player.id, link: player.link });
            tracing::debug!(player = %player.id, reason = reason.label(), "session closed");
        }
        self.held.remove(&slot);
        self.metrics.closed(Transport::Websocket, reason);
        let code = reason.code();
        let mut frames = Vec::with_capacity(3);
        frames.extend(first);
        if reason.tells_peer() && self.app == App::Game {
            frames.push(ws_frame::binary(&msg::encode_error(code, text)));
        }
        frames.push(ws_frame::close(code.0, text));
        let linger = Linger::after(conn.end, reason);
        conn.closing = Some(Box::new(Closing {
            linger,
            read_done: linger == Linger::No,
            flushed: false,
            until: now + CLOSE_WRITE_TIMEOUT,
            discarded: 0,
        }));
        self.closing.insert(slot);
        if linger == Linger::No {
            let interest = conn.interest & WRITE;
            set_interest(&self.poller, conn, slot, interest);
        }
        let written = conn.outbox.close(&frames, now, &mut self.tally);
        self.after_write(slot, written, now);
    }

    /// Counts the writes since the last call into the metrics.
    fn count(&mut self) {
        if self.tally != Tally::default() {
            self.metrics.count_writes(std::mem::take(&mut self.tally));
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        let open = self.len() as i64;
        self.metrics.connections.dec_by(open);
    }
}

/// Watches `conn`'s socket for room to write.
fn watch(poller: &Poller, conn: &mut Conn, slot: u32) {
    if conn.interest & WRITE == 0 {
        set_interest(poller, conn, slot, conn.interest | WRITE);
    }
}

/// Stops watching `conn`'s socket for room to write.
fn unwatch(poller: &Poller, conn: &mut Conn, slot: u32) {
    if conn.interest & WRITE != 0 {
        set_interest(poller, conn, slot, conn.interest & !WRITE);
    }
}

/// Sets what the poller watches `conn`'s socket for.
fn set_interest(poller: &Poller, conn: &mut Conn, slot: u32, interest: u32) {
    if conn.interest == interest {
        return;
    }
    match poller.modify(conn.outbox.socket(), slot, interest) {
        Ok(()) => conn.interest = interest,
        Err(e) => tracing::warn!(error = %e, "epoll_ctl failed"),
    }
}

/// Runs `read`, the handling of one socket's bytes; a panic there (a bug)
/// closes that socket with [`CloseReason::Internal`] (1011) instead of
/// taking the tick driver, and every other socket, down with it.
fn guarded(slot: u32, read: impl FnOnce() -> Outcome) -> Outcome {
    crate::guard::caught(read).unwrap_or_else(|panic| {
        tracing::error!(slot, panic, "a panic while handling a socket's bytes; closing that socket (1011)");
        Outcome::Close(CloseReason::Internal)
    })
}

#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod guard_tests {
    use super::*;

    #[test]
    fn a_panic_reading_one_socket_closes_that_socket_only() {
        assert!(matches!(guarded(3, || Outcome::Open), Outcome::Open));
        let outcome = guarded(3, || panic!("a bug in a frame handler"));
        assert!(matches!(outcome, Outcome::Close(CloseReason::Internal)));
    }
}
