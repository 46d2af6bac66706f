//! The shard core: everything one shard decides, with no I/O and no clock
//! reads. The driver ([`crate::tick`]) feeds it the sessions' asks, the
//! cluster's [`ClusterEvent`]s and each tick's [`TickAt`]; the core answers
//! with the tick's [`TickFrame`] and the [`Effect`]s the driver carries out
//! (tell a session to close or move, publish, check ownership in Redis,
//! fetch ids). Every rule here is unit-tested with no sockets and no sleeps.
//!
//! What it owns:
//! - the world ([`crate::sim`]), advanced by exactly one fixed step of
//!   1/tick-rate per tick; a skipped tick is skipped, not replayed, and tick
//!   numbers count scheduled ticks, so clients see the gap;
//! - admission ([`crate::admission`]) and the places reserved for resumes;
//! - the links: one per admitted socket ([`LinkId`]);
//! - presence (who joined and left since the last tick) and the roster,
//!   rebuilt at most once a tick and only when someone joined, so joins are
//!   O(1);
//! - the other shards as seen from here ([`ClusterView`]);
//! - standalone, the resume tickets ([`crate::resume::local`]);
//! - clustered, the fence ([`fence`]): after a stall or a Redis outage long
//!   enough to have looked dead, nothing is published until Redis says which
//!   players were resumed elsewhere meanwhile;
//! - the drain ([`drain`]): players told to move, a tick's share of the rate
//!   at a time;
//! - operators' orders ([`crate::order`]): a kick closes a player's socket
//!   with the operator's reason and ends its session; a drain order starts
//!   the drain; players are found by name or id ([`find`]);
//! - what the operator reads at info about the place ([`place_log`]): shards
//!   leaving and joining the view, players resumed here (counted a second at
//!   a time);
//! - the area ([`aoi`]): the grid (one cell for the whole world without area
//!   of interest), every cell's stream of full forms and deltas, own and
//!   relayed, each socket's view and its frames, assembled once a view and
//!   shared by every socket of it;
//! - what the place tells every socket ([`News`]): the whole place's
//!   presence and roster, or with area of interest only a `PlaceStatus`, at
//!   most once a second and only when it changed ([`status`]; rosters would
//!   grow with the square of the place): a client asks for the names of the
//!   players it sees (`NamesRequest`).

pub mod aoi;
mod cluster_view;
mod drain;
mod due;
mod empties;
mod fence;
pub mod find;
pub mod grid;
mod handoff;
mod input;
pub mod interest;
mod lag;
mod links;
mod output;
mod own;
mod place_log;
mod presence;
mod status;
mod streams;
#[cfg(test)]
mod tests;
mod viewers;
mod views;

pub use aoi::Relayed;
pub use cluster_view::ClusterView;
pub use fence::HELD_MAX;
pub use input::{ClusterEvent, TickAt};
pub use links::LinkId;
pub use output::{Admitted, Control, Effect, Outgoing, Recipients, TickFrame, TickOutput, ViewFrames};
pub use viewers::{Carrier, Form};

use crate::admission::{Admission, Refusal};
use crate::clock::Instant;
use crate::close::CloseReason;
use crate::config::Config;
use crate::ids::{PlayerIds, ID_FETCH};
use crate::metrics::{DropKind, RepairKind};
use crate::order::{KickReason, Operator, Order, OrderOutcome};
use crate::resume::local::LocalSessions;
use crate::resume::{AccountGate, Claimed, ResumeError, Ticket};
use crate::sim::World;
use crate::ws_frame;
use aoi::{Aoi, AreaSettings};
use bytes::Bytes;
use drain::Drain;
use fence::{Fence, Gate};
use find::{Found, PlayerQuery};
use grid::GridError;
use links::Links;
use mino_protocol::client::Capabilities;
use mino_protocol::client::Direction;
use mino_protocol::server::{self as msg, AoiInfo, WelcomeInfo};
use mino_protocol::snapshot::{SnapshotEncoder, SnapshotHeader};
use mino_protocol::wire::Bounds;
use mino_protocol::{PlayerId, ShardId, Tick};
use place_log::{ResumeTally, ResumedFrom};
use presence::Presence;
use rand::rngs::StdRng;
use rand::Rng;
use status::StatusGate;
use std::sync::Arc;
use std::time::Duration;

/// Least time between two requests for player ids.
const ID_REQUEST_INTERVAL: Duration = Duration::from_secs(1);

/// Standalone: how often expired resume tickets are forgotten, ms.
const EXPIRE_INTERVAL_MS: u64 = 1000;

/// Anti-entropy, clustered: how often the shard asks Redis whether another
/// shard owns any of its players' sessions now, so a lost takeover notice
/// leaves a player in two places for at most this plus one round trip.
pub const AUDIT_INTERVAL: Duration = Duration::from_secs(5);

/// What every socket is told of the place besides its view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum News {
    /// The whole place (no area of interest): presence and rosters of every
    /// player, as the seed sent them.
    Place,
    /// With area of interest: a `PlaceStatus` when it changed, at most once
    /// a second; names on
    /// request (`NamesRequest`), since rosters would grow with the square of
    /// the place.
    Nearby,
}

/// What an admitted socket was granted, as its Welcome says.
#[derive(Clone, Copy, Debug)]
struct Granted {
    /// The Hello's capabilities this server knows.
    capabilities: Capabilities,
    /// The form its frames take (its cells' expiry).
    form: Form,
}

/// A refusal with the retry-after the Busy message carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Busy {
    /// Why.
    pub refusal: Refusal,
    /// Suggested wait, ms: the configured base plus a random 0 to 50 %.
    pub retry_after_ms: u32,
}

/// The shard core. Owns the world by `&mut`; see the module docs.
pub struct Shard {
    id: ShardId,
    tick_hz: u16,
    clustered: bool,
    busy_retry_ms: u32,
    drain_rate: u32,
    world: World,
    admission: Admission,
    encoder: SnapshotEncoder,
    ids: PlayerIds,
    view: ClusterView,
    presence: Presence,
    links: Links,
    local: Option<LocalSessions>,
    fence: Fence,
    drain: Option<Drain>,
    /// Draining: the players there were when the drain began.
    drain_from: Option<usize>,
    rng: StdRng,
    tick: Tick,
    /// Chat and presence frames for sockets since the last tick.
    events: Vec<Bytes>,
    /// Own chat frames of this tick to publish (clustered).
    chat_out: Vec<Outgoing>,
    effects: Vec<Effect>,
    reserved: usize,
    highest_player: u32,
    id_requested: Option<Instant>,
    expired_at_ms: u64,
    /// The area: cells, streams, views (one cell without area of interest).
    area: Aoi,
    /// What every socket is told of the place.
    news: News,
    /// With area of interest: when the place's status goes out.
    status: StatusGate,
    /// Players resumed here, until their line is due.
    resumes: ResumeTally,
    /// The start of the presence numbering (µs at the start).
    presence_epoch: u64,
    /// When the last ownership audit was asked for (clustered).
    audited: Option<Instant>,
}

impl Shard {
    /// An empty shard as configured; `rng` draws spawn points and resume
    /// tickets (seed it in tests), and presence numbers start above
    /// `presence_epoch` (the start time in µs, so a restarted shard's
    /// numbers keep increasing). Clustered (a Redis URL is set), player ids
    /// come in blocks ([`ClusterEvent::Ids`]); standalone, resume tickets are
    /// kept here.
    ///
    /// Errors: [`GridError`] when the area of interest's grid cannot be made
    /// (the configuration checks this first).
    pub fn new(config: &Config, rng: StdRng, presence_epoch: u64) -> Result<Shard, GridError> {
        let clustered = config.redis.is_some();
        let ids = if clustered { PlayerIds::Blocks(Default::default()) } else { PlayerIds::Local { next: 1 } };
        let s = config.world_size;
        let bounds = Bounds::new(0.0, 0.0, s, s);
        let (settings, news) = match config.aoi {
            Some(a) => (
                AreaSettings {
                    cell_size: a.cell_size,
                    view_radius: a.view_radius,
                    hysteresis_ticks: a.hysteresis_ticks,
                    budget_bytes: a.budget_bytes,
                    implied_cells: true,
                },
                News::Nearby,
            ),
            None => (AreaSettings::whole(&bounds), News::Place),
        };
        let area = Aoi::new(settings, &bounds, config.shard_id)?;
        Ok(Shard {
            id: config.shard_id,
            tick_hz: config.tick_hz,
            clustered,
            busy_retry_ms: config.busy_retry.as_millis() as u32,
            drain_rate: config.drain_rate,
            world: World::new(bounds, config.speed, config.tick_hz),
            admission: Admission::new(config.max_players, config.busy_lateness),
            encoder: SnapshotEncoder::new(),
            ids,
            view: ClusterView::default(),
            presence: Presence::with_epoch(presence_epoch),
            links: Links::new(),
            local: (!clustered).then(|| LocalSessions::new(config.ticket_ttl.as_millis() as u64)),
            fence: Fence::new(config.shard_ttl / 2),
            drain: None,
            drain_from: None,
            rng,
            tick: Tick(0),
            events: Vec::new(),
            chat_out: Vec::new(),
            effects: Vec::new(),
            reserved: 0,
            highest_player: 0,
            id_requested: None,
            expired_at_ms: 0,
            area,
            news,
            status: StatusGate::default(),
            resumes: ResumeTally::default(),
            presence_epoch,
            audited: None,
        })
    }

    /// This shard's id.
    pub fn id(&self) -> ShardId {
        self.id
    }

    /// Players present.
    pub fn players(&self) -> usize {
        self.world.len()
    }

    /// The world (read-only).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The admission state (read-only).
    pub fn admission(&self) -> &Admission {
        &self.admission
    }

    /// The other shards as seen from here (read-only).
    pub fn view(&self) -> &ClusterView {
        &self.view
    }

    /// The highest player id this shard has admitted or may still hand out
    /// (the end of the id blocks it holds): the heartbeat keeps the place's
    /// id counter above it.
    pub fn highest_player(&self) -> u32 {
        self.highest_player.max(self.ids.highest_reserved())
    }

    /// The generation of `player`'s session this shard holds it at.
    pub fn generation(&self, player: PlayerId) -> Option<u64> {
        self.links.generation(player)
    }

    /// The start of this shard's presence numbering, as given to
    /// [`Shard::new`] (its heartbeat carries it: another value for the same
    /// shard id is a restart).
    pub fn presence_epoch(&self) -> u64 {
        self.presence_epoch
    }

    /// True while publishing is held back (see [`fence`]).
    pub fn is_fenced(&self) -> bool {
        self.fence.is_fenced()
    }

    /// The socket of `player`, if the player is here and linked.
    pub fn link_of(&self, player: PlayerId) -> Option<LinkId> {
        self.links.link(player)
    }

    /// The view of the socket behind `link` in the last tick's frame: an
    /// index into [`TickFrame::views`] (`usize::MAX`: none yet).
    pub fn view_of(&self, link: LinkId) -> usize {
        self.area.view_of(link).unwrap_or(usize::MAX)
    }

    /// True with area of interest (the place's news are then only a status).
    pub fn has_aoi(&self) -> bool {
        self.news == News::Nearby
    }

    /// The socket behind `link` lost view frames (blocked too long): it is
    /// sent its view anew from the next tick.
    pub fn resync(&mut self, link: LinkId) {
        self.area.resync(link);
    }

    /// The client behind `link` asked for its view whole again (`Resync`: it
    /// takes deltas over datagrams and missed a change): every cell of it
    /// is sent whole at its next due step, nothing dropped first. Asked by
    /// any other client, or again before the next tick, it does nothing;
    /// asked again after it, the resync starts over. True when taken (the
    /// client takes datagram deltas).
    pub fn refill(&mut self, link: LinkId) -> bool {
        self.area.refill(link)
    }

    /// The Names message answering a NamesRequest for `ids`: those of them
    /// present here or on a live shard (unknown ids are left out).
    pub fn names(&self, ids: &[u32]) -> Bytes {
        let names = ids.iter().filter_map(|&id| {
            let id = PlayerId(id);
            match self.world.player(id) {
                Some(p) => Some((id, &*p.name)),
                None => self.view.name(id).map(|n| (id, n)),
            }
        });
        msg::encode_names(names)
    }

    /// Draining: the players there were when the drain began.
    pub fn drain_from(&self) -> Option<usize> {
        self.drain_from
    }

    /// The players here that `query` matches, at most `limit`, by id.
    pub fn find(&self, query: &PlayerQuery, limit: usize) -> Vec<Found> {
        let mut found: Vec<Found> = self
            .world
            .players()
            .iter()
            .filter(|p| query.matches(p.id, &p.name))
            .map(|p| Found { player: p.id, name: p.name.clone(), position: self.world.position(p) })
            .collect();
        found.sort_unstable_by_key(|f| f.player);
        found.truncate(limit);
        found
    }

    /// Carries out an operator's `order` if it concerns this shard: kicks
    /// the player if it is here, starts the drain if this shard is named
    /// (the driver is told with [`Effect::DrainOrdered`]). Logged with who
    /// asked.
    pub fn order(&mut self, order: &Order) -> OrderOutcome {
        match order {
            Order::Kick { player, by, reason } => self.kick(*player, by, reason),
            Order::Drain { shard, by } if *shard == self.id => {
                if self.drain.is_some() {
                    return OrderOutcome::AlreadyDraining;
                }
                let players = self.world.len();
                // What the drain does with them (moved, or closed with 1012
                // when standalone) is said when it starts.
                tracing::info!(operator = %by, players, "drain ordered by {by} ({players} players here)");
                self.effects.push(Effect::DrainOrdered);
                OrderOutcome::Draining { players }
            }
            Order::Drain { .. } => OrderOutcome::NotHere,
        }
    }

    /// Closes `player`'s socket with 4040 and `reason`, and ends its session
    /// (standalone here; clustered, the admin API ends it in Redis).
    fn kick(&mut self, player: PlayerId, by: &Operator, reason: &KickReason) -> OrderOutcome {
        let Some(name) = self.world.player(player).map(|p| p.name.clone()) else { return OrderOutcome::NotHere };
        tracing::info!(operator = %by, player = player.0, %name, reason = reason.as_str(), "player {} ({name}) kicked by {by}: {}", player.0, reason.as_str());
        if let Some(local) = self.local.as_mut() {
            local.end(player);
        }
        self.unlink(player, Control::Kick(reason.text()));
        OrderOutcome::Kicked { name }
    }

    /// The effects asked for since the last call, in order.
    pub fn effects(&mut self) -> std::vec::Drain<'_, Effect> {
        self.effects.drain(..)
    }

    // ------------------------------------------------------------ sessions

    /// Holds a place for a player who is about to resume (its ticket is being
    /// checked), so concurrent joins cannot take it.
    ///
    /// Errors: [`Busy`] when full, overloaded or draining.
    pub fn reserve(&mut self) -> Result<(), Busy> {
        self.admission.check(self.world.len() + self.reserved).map_err(|r| self.busy(r))?;
        self.reserved += 1;
        Ok(())
    }

    /// Gives back a place held by [`Shard::reserve`].
    pub fn unreserve(&mut self) {
        self.reserved = self.reserved.saturating_sub(1);
    }

    /// Standalone: claims the session a resume ticket names, as `gate`
    /// allows.
    ///
    /// Errors: [`ResumeError`]; `Unavailable` when clustered (sessions live
    /// in Redis there).
    pub fn claim_local(&mut self, ticket: &[u8], wall_ms: u64, gate: AccountGate<'_>) -> Result<Claimed, ResumeError> {
        let next = Ticket::issue(wall_ms, &mut self.rng);
        match self.local.as_mut() {
            Some(local) => local.claim(ticket, next, wall_ms, gate),
            None => Err(ResumeError::Unavailable),
        }
    }

    /// Standalone: an account signs in, into a place held by
    /// [`Shard::reserve`]: its session is taken over, or a new player is made
    /// for it (fresh).
    ///
    /// Errors: [`Busy`] when no player id is left (never standalone).
    pub fn login_local(&mut self, account: &str, name: &str, wall_ms: u64) -> Result<Claimed, Busy> {
        let next = Ticket::issue(wall_ms, &mut self.rng);
        if let Some(c) = self.local.as_mut().and_then(|l| l.login(account, name, next, wall_ms)) {
            return Ok(c);
        }
        Ok(Claimed::fresh_account(self.new_id()?, name, next, account))
    }

    /// A player id for a new account's player (clustered: its session is
    /// then made in Redis under it).
    ///
    /// Errors: [`Busy`] (unavailable) when no id is left.
    pub fn new_id(&mut self) -> Result<PlayerId, Busy> {
        self.ids.take().ok_or_else(|| self.busy(Refusal::Unavailable))
    }

    /// Admits a player named `name` (validated): new when `resume` is `None`,
    /// else the claimed session, with its own id and name, in place, into a
    /// place held by [`Shard::reserve`]. A second socket of a player still
    /// here takes it over: the older one is told to close
    /// ([`CloseReason::SessionReplaced`]). Its frames take the [`Form`] of
    /// its Hello's `capabilities` and its socket's `carrier`.
    ///
    /// Errors: [`Busy`] for a new player when full, overloaded, draining or
    /// out of ids.
    pub fn join(
        &mut self,
        name: &str,
        resume: Option<Claimed>,
        wall_ms: u64,
        capabilities: Capabilities,
        carrier: Carrier,
    ) -> Result<Admitted, Busy> {
        let b = *self.world.bounds();
        let spawn = (self.rng.random_range(b.min_x()..=b.max_x()), self.rng.random_range(b.min_y()..=b.max_y()));
        let account = resume.as_ref().and_then(|c| c.account.clone());
        let (player, name, ticket, generation, resumed) = match resume {
            None => {
                self.admission.check(self.world.len() + self.reserved).map_err(|r| self.busy(r))?;
                let player = self.ids.take().ok_or_else(|| self.busy(Refusal::Unavailable))?;
                let name: Arc<str> = name.into();
                self.world.add(player, name.clone(), spawn.0, spawn.1);
                self.presence.joined(player, name.clone());
                (player, name, Ticket::issue(wall_ms, &mut self.rng), 0, false)
            }
            Some(c) => {
                self.unreserve();
                if !c.fresh {
                    let from = c.previous_owner.map_or(ResumedFrom::Here, ResumedFrom::Shard);
                    self.resumes.record(from, wall_ms);
                }
                let name: Arc<str> = c.name.as_str().into();
                if self.world.player(c.player).is_none() {
                    let (x, y) = c.position.unwrap_or(spawn);
                    self.world.add(c.player, name.clone(), x, y);
                    self.presence.returned(c.player, name.clone());
                }
                (c.player, name, c.ticket, c.generation, !c.fresh)
            }
        };
        // Every session starts standing still with no input applied, as its
        // Welcome says, whatever the path: a new player or one resumed here
        // from elsewhere is added still, and one taken over while still here
        // (a half-open socket resumed, a second sign-in) is stopped, or it
        // would walk on with the old socket's last direction and no key held.
        self.world.set_direction(player, Direction::STILL, 0);
        self.highest_player = self.highest_player.max(player.0);
        if let Some(local) = self.local.as_mut() {
            local.issue(player, &name, ticket, generation, wall_ms, account.as_deref());
        }
        if let Some(drain) = self.drain.as_mut() {
            drain.forget(player);
        }
        let (link, replaced) = self.links.admit(player, generation);
        if let Some(old) = replaced {
            self.effects.push(Effect::Tell { link: old, control: Control::Close(CloseReason::SessionReplaced) });
        }
        if let Some(old) = replaced {
            self.area.remove_viewer(old);
        }
        let (form, granted) = Form::of(capabilities.known(), carrier);
        self.area.add_viewer(link, player, form);
        self.status.admitted();
        let welcome = self.welcome(player, &name, ticket, wall_ms, resumed, Granted { capabilities: granted, form });
        let position = self.world.player(player).map_or((0.0, 0.0), |p| self.world.position(p));
        Ok(Admitted { player, welcome, ticket, link, position })
    }

    /// The session behind `link` ended. A replaced link's goodbye changes
    /// nothing; otherwise the player leaves, and its position is kept for a
    /// resume (standalone here, clustered in its Redis session).
    pub fn leave(&mut self, player: PlayerId, link: LinkId, wall_ms: u64) {
        let generation = self.links.generation(player).unwrap_or(0);
        if !self.links.end(player, link) {
            return;
        }
        self.area.remove_viewer(link);
        if let Some(drain) = self.drain.as_mut() {
            drain.forget(player);
        }
        if let (Some(local), Some(p)) = (self.local.as_mut(), self.world.player(player)) {
            local.park(player, self.world.position(p), wall_ms);
        }
        self.park(player, generation);
        self.remove(player);
    }

    /// Sets a player's wanted direction from its input number `seq`
    /// (unknown ids are ignored).
    pub fn input(&mut self, player: PlayerId, dir: Direction, seq: u32) {
        self.world.set_direction(player, dir, seq);
    }

    /// Stages a chat line from `player` (ignored if it is not here).
    pub fn chat(&mut self, player: PlayerId, text: &str, wall_ms: u64) {
        if let Some(p) = self.world.player(player) {
            let frame = msg::encode_chat(player, &p.name, text, self.id, wall_ms);
            self.events.push(ws_frame::binary(&frame));
            if self.clustered {
                self.chat_out.push(Outgoing::Chat(frame));
            }
        }
    }

    /// Starts the drain: nobody is admitted any more. Clustered, from the
    /// next tick on the players are told to move to other shards (see
    /// [`drain`]). Standalone there is no other shard to move them to, so
    /// every socket is told at once to close with [`CloseReason::Restart`]
    /// (1012, "service restart": come back soon). Either way
    /// [`Effect::Drained`] follows once the shard is empty. Returns the
    /// sockets told to close (0 clustered, and on a second call).
    pub fn start_drain(&mut self) -> usize {
        self.admission.set_draining();
        if self.drain.is_some() {
            return 0;
        }
        self.drain = Some(Drain::new(self.drain_rate, self.tick_hz));
        self.drain_from = Some(self.world.len());
        if self.clustered {
            return 0;
        }
        let links: Vec<LinkId> = self.links.players().filter_map(|p| self.links.link(p)).collect();
        for &link in &links {
            self.effects.push(Effect::Tell { link, control: Control::Close(CloseReason::Restart) });
        }
        links.len()
    }

    /// Stops admitting anyone (shutdown).
    pub fn stop_admitting(&mut self) {
        self.admission.set_draining();
    }

    // ------------------------------------------------------------- cluster

    /// Applies what the cluster tasks (and the driver's ownership check) report.
    pub fn cluster_event(&mut self, event: ClusterEvent) {
        match event {
            ClusterEvent::Chat { bytes } => self.events.push(ws_frame::binary(&bytes)),
            ClusterEvent::Bundle(bundle) => {
                // What came of it (taken, held a tick, dropped) is read
                // from the area at the tick.
                let shard = bundle.stamp.shard;
                if shard != self.id && self.view.is_live(shard) {
                    self.area.relay(bundle);
                } else {
                    self.effects.push(Effect::Dropped(DropKind::RelaySnapshot, 1));
                }
            }
            ClusterEvent::Presence { shard, seq, bytes, joined, left } => {
                if shard != self.id && self.view.presence(shard, seq, &joined, &left) && self.news == News::Place {
                    self.events.push(ws_frame::binary(&bytes));
                }
            }
            ClusterEvent::Live(shards) => {
                let others: Vec<ShardId> = shards.into_iter().filter(|s| *s != self.id).collect();
                let change = place_log::view_change(&self.view.shards(), &others);
                for &(shard, players) in &change.left {
                    tracing::info!(shard = %shard, players, "shard {shard} left this place's view ({players} players were on it)");
                }
                for shard in change.joined {
                    tracing::info!(shard = %shard, "shard {shard} joined this place's view");
                }
                for (shard, _) in &change.left {
                    self.area.shard_left(*shard);
                }
                let frames = self.view.set_live(&others);
                if self.news == News::Place {
                    self.events.extend(frames.iter().map(|f| ws_frame::binary(f)));
                }
            }
            ClusterEvent::Roster { shard, epoch, seq, players } => {
                let (diff, repaired) = self.view.roster(shard, epoch, seq, players);
                if repaired {
                    tracing::warn!(shard = %shard, "another shard's players were out of date here; repaired from Redis");
                    self.effects.push(Effect::Repaired(RepairKind::Roster, 1));
                }
                if let Some(frame) = diff.filter(|_| self.news == News::Place) {
                    self.events.push(ws_frame::binary(&frame));
                }
            }
            ClusterEvent::Ids { start, len } => {
                self.ids.add_block(start, len);
                self.id_requested = None;
            }
            ClusterEvent::Takeover { player, generation } => {
                if self.links.generation(player).is_some_and(|g| g < generation) {
                    self.drop_player(player, CloseReason::SessionReplaced);
                }
            }
            ClusterEvent::Order(order) => {
                self.order(&order);
            }
            // The driver drains the shard; nothing for the core.
            ClusterEvent::Superseded => {}
            ClusterEvent::Verified { lost } => {
                if !lost.is_empty() {
                    tracing::warn!(players = lost.len(), "dropping players resumed on other shards meanwhile");
                }
                for player in lost {
                    self.drop_player(player, CloseReason::SessionReplaced);
                }
                self.effects.push(Effect::Unfence);
                let held = self.fence.lift();
                self.effects.extend(held.into_iter().map(Effect::Publish));
            }
            ClusterEvent::Audited { lost } => {
                let lost: Vec<PlayerId> =
                    lost.into_iter().filter(|(p, g)| self.links.generation(*p) == Some(*g)).map(|(p, _)| p).collect();
                if !lost.is_empty() {
                    tracing::warn!(
                        players = lost.len(),
                        "players resumed on other shards without notice here; dropping them"
                    );
                    self.effects.push(Effect::Repaired(RepairKind::Ownership, lost.len() as u64));
                }
                for player in lost {
                    self.drop_player(player, CloseReason::SessionReplaced);
                }
            }
        }
    }

    // ---------------------------------------------------------------- tick

    /// Runs one tick: moves everyone one fixed step, and returns the frame
    /// for every socket and what to publish; the effects of the tick (fence,
    /// publish, moves, ids) are queued.
    pub fn tick(&mut self, at: TickAt) -> TickOutput {
        self.admission.record_lateness(at.lateness);
        let skipped = if self.tick.0 == 0 { 0 } else { at.tick.0.saturating_sub(self.tick.0 + 1) };
        self.tick = Tick(at.tick.0.max(self.tick.0 + 1));
        if self.clustered && self.fence.on_tick(at.now, at.redis_up) {
            self.effects.push(Effect::Fence { players: self.links.generations() });
        }
        self.world.step();
        let place = self.news == News::Place;
        // Clustered, the whole-shard snapshot goes to Redis, where a resume
        // elsewhere reads positions from it.
        let snapshot = self.clustered.then(|| self.encode_snapshot(at.wall_ms));
        let roster = (place && self.presence.anyone_joined()).then(|| self.encode_roster());
        // With area of interest, the place's status, checked once a second.
        if !place && self.tick.0.is_multiple_of(u64::from(self.tick_hz)) {
            let players = (self.world.len() + self.view.player_count()) as u32;
            let shards = 1 + self.view.live_shards() as u32;
            if self.status.due(players, shards) {
                self.events.push(ws_frame::binary(&msg::encode_place_status(players, shards)));
            }
        }
        if let Some(delta) = self.presence.take(self.id) {
            if place {
                self.events.push(ws_frame::binary(&delta.bytes));
            }
            if self.clustered {
                let presence =
                    Outgoing::Presence { bytes: delta.bytes, seq: delta.seq, joined: delta.joined, left: delta.left };
                self.chat_out.push(presence);
            }
        }
        let links = &self.links;
        self.area.tick(&self.world, self.tick, self.clustered, |p| links.link(p));
        let (taken, dropped) = self.area.relayed();
        let relay_lag_ms = taken.map(|t| at.wall_ms.saturating_sub(t)).collect();
        if dropped > 0 {
            self.effects.push(Effect::Dropped(DropKind::RelaySnapshot, dropped));
        }
        let vacated = self.area.vacated();
        if vacated > 0 {
            tracing::warn!(
                cells = vacated,
                "other shards' cells not heard for 3.6 s are shown empty (their bundles were lost; their players may have left)"
            );
            self.effects.push(Effect::Repaired(RepairKind::RelayedCell, vacated));
        }
        // Only assembled views have frames: a standing place lists none.
        let views = if self.area.assembled() == 0 {
            Vec::new()
        } else {
            (0..self.area.views_len()).map(|v| ViewFrames { frames: self.area.frames_of(v).to_vec() }).collect()
        };
        let publish_cells = if self.clustered { self.area.bundles() } else { Vec::new() };
        let recipients = self.area.recipients();
        let frame = TickFrame { tick: self.tick, events: std::mem::take(&mut self.events), roster, views, recipients };
        let publish = self.clustered && !self.fence.is_fenced();
        if publish {
            if let Some(regions) = self.area.regions(self.tick.0) {
                self.effects.push(Effect::Regions(regions));
            }
        }
        for out in std::mem::take(&mut self.chat_out) {
            self.gate(out);
        }
        if self.clustered {
            self.request_ids(at.now);
            self.audit(at.now);
        } else {
            self.expire_tickets(at.wall_ms);
        }
        self.drain_step(at.wall_ms);
        if let Some(line) = self.resumes.due(at.wall_ms) {
            tracing::info!(
                resumed = line.total,
                "players resumed here: {} in the last {} ms, counted a second at a time, not how long each took ({line})",
                line.total,
                line.over_ms
            );
        }
        let publish_cells = if publish { publish_cells } else { Vec::new() };
        TickOutput {
            frame,
            publish_snapshot: snapshot.filter(|_| publish),
            publish_cells,
            step: self.area.step(),
            skipped,
            relay_lag_ms,
            views_assembled: self.area.assembled(),
        }
    }

    // ------------------------------------------------------------- helpers

    fn busy(&mut self, refusal: Refusal) -> Busy {
        let base = self.busy_retry_ms;
        Busy { refusal, retry_after_ms: base + self.rng.random_range(0..=base / 2) }
    }

    fn welcome(
        &self,
        player: PlayerId,
        name: &str,
        ticket: Ticket,
        wall_ms: u64,
        resumed: bool,
        granted: Granted,
    ) -> Bytes {
        // Protocol 4 holds cells until they are forgotten: no grace.
        let aoi = (self.news == News::Nearby).then(|| AoiInfo {
            cell_size: self.area.settings().cell_size,
            grid_columns: self.area.grid().columns(),
            view_radius: self.area.settings().view_radius,
            view_grace_ms: 0,
        });
        let p = self.world.player(player).map_or((0.0, 0.0), |p| self.world.position(p));
        msg::encode_welcome(&WelcomeInfo {
            player_id: player,
            shard_id: self.id,
            tick_hz: self.tick_hz,
            bounds: *self.world.bounds(),
            speed: self.world.speed(),
            resume_ticket: ticket.as_bytes(),
            server_time_ms: wall_ms,
            name,
            position: p,
            resumed,
            aoi,
            capabilities: granted.capabilities,
            cell_expiry_ms: granted.form.cell_expiry_ms(self.tick_hz),
        })
    }

    /// The Roster for sockets that joined this tick: every player here, on
    /// this shard, and every player of the other live shards, on the shard
    /// that lists it. A player here that another shard still lists (it moved
    /// here; that shard's "left" or death is not known yet) is listed once,
    /// here, so a client's "left" from the old shard cannot remove it.
    fn encode_roster(&self) -> Bytes {
        let here = self.id;
        let local = self.world.players().iter().map(|p| (p.id, &*p.name, here));
        let remote = self.view.players().filter(|(id, _, _)| self.world.player(*id).is_none());
        ws_frame::binary(&msg::encode_roster(local.chain(remote)))
    }

    fn encode_snapshot(&mut self, wall_ms: u64) -> Bytes {
        let header = SnapshotHeader {
            shard_id: self.id,
            tick: self.tick,
            server_time_ms: wall_ms,
            tick_hz: self.tick_hz,
            bounds: *self.world.bounds(),
            cell: 0,
        };
        self.encoder.encode_entries(&header, self.world.players().iter().map(|p| p.entry()))
    }

    /// Publishes `out` now, or holds it while fenced (clustered only).
    fn gate(&mut self, out: Outgoing) {
        match self.fence.hold(out) {
            Gate::Pass(out) => self.effects.push(Effect::Publish(out)),
            Gate::Held => {}
            Gate::Dropped => self.effects.push(Effect::Dropped(DropKind::PublishEvent, 1)),
        }
    }

    /// Clustered: records where `player` stands in its session in Redis,
    /// while the session is still this shard's at `generation`.
    fn park(&mut self, player: PlayerId, generation: u64) {
        if !self.clustered {
            return;
        }
        if let Some(p) = self.world.player(player) {
            let (x, y) = self.world.position(p);
            let park = Outgoing::Park { player, x, y, generation };
            self.gate(park);
        }
    }

    /// Takes `player` out of the world (and reports it gone).
    fn remove(&mut self, player: PlayerId) {
        if self.world.remove(player).is_some() {
            self.presence.left(player);
        }
    }

    /// Drops a player whose session lives elsewhere now; its socket is told why.
    fn drop_player(&mut self, player: PlayerId, reason: CloseReason) {
        self.unlink(player, Control::Close(reason));
    }

    /// Takes `player` out of this shard while its socket is still open: the
    /// link, its viewer and its drain entry go, the socket is told `control`
    /// (its later goodbye then changes nothing here), and the player leaves
    /// the world.
    fn unlink(&mut self, player: PlayerId, control: Control) {
        if let Some(link) = self.links.remove(player) {
            self.area.remove_viewer(link);
            self.effects.push(Effect::Tell { link, control });
        }
        if let Some(drain) = self.drain.as_mut() {
            drain.forget(player);
        }
        self.remove(player);
    }

    /// Asks for ids when running low, at most once per [`ID_REQUEST_INTERVAL`].
    fn request_ids(&mut self, now: Instant) {
        let low = self.ids.remaining() < u64::from(ID_FETCH / 2);
        let due = self.id_requested.is_none_or(|t| now.saturating_duration_since(t) >= ID_REQUEST_INTERVAL);
        if low && due {
            self.effects.push(Effect::NeedIds);
            self.id_requested = Some(now);
        }
    }

    /// Clustered and not fenced: asks for an ownership audit every
    /// [`AUDIT_INTERVAL`] (see [`Effect::Audit`]).
    fn audit(&mut self, now: Instant) {
        let due = self.audited.is_none_or(|t| now.saturating_duration_since(t) >= AUDIT_INTERVAL);
        if !due || self.fence.is_fenced() {
            return;
        }
        self.audited = Some(now);
        let players = self.links.generations();
        if !players.is_empty() {
            self.effects.push(Effect::Audit { players });
        }
    }

    /// Standalone: forgets expired resume tickets about once a second.
    fn expire_tickets(&mut self, wall_ms: u64) {
        if let Some(local) = self.local.as_mut() {
            if wall_ms.saturating_sub(self.expired_at_ms) >= EXPIRE_INTERVAL_MS {
                local.expire(wall_ms);
                self.expired_at_ms = wall_ms;
            }
        }
    }

    /// Draining: clustered, tells a tick's share of the players to move,
    /// each with a fresh ticket; standalone they were all told to close when
    /// the drain started. Reports when the shard is empty.
    fn drain_step(&mut self, wall_ms: u64) {
        let Some(drain) = self.drain.as_mut() else { return };
        let due = if self.clustered { drain.due(self.links.players()) } else { Vec::new() };
        for player in due {
            let ticket = Ticket::issue(wall_ms, &mut self.rng);
            if let (Some(local), Some(p)) = (self.local.as_mut(), self.world.player(player)) {
                let account = local.account_of(player).map(str::to_owned);
                let generation = self.links.generation(player).unwrap_or(0);
                local.issue(player, &p.name, ticket, generation, wall_ms, account.as_deref());
            }
            if let Some(link) = self.links.link(player) {
                self.effects.push(Effect::Tell { link, control: Control::Move(ticket) });
            }
            let generation = self.links.generation(player).unwrap_or(0);
            self.park(player, generation);
        }
        let players = self.world.len();
        if self.drain.as_mut().is_some_and(|d| d.emptied(players)) {
            self.effects.push(Effect::Drained);
        }
    }
}
