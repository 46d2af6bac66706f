//! The shard core: the world, admission, what it knows of the other shards, and
//! the frames one tick hands to every socket. I/O-free and clock-free (the
//! caller passes `now_ms` and `dt`); the tokio loop that drives it is
//! [`crate::tick`].
//!
//! Per tick the shard produces one [`TickFrame`]: its snapshot (encoded once),
//! the newest relayed snapshot of each other shard (bytes as published), the
//! chat and presence frames since the last tick (its own and relayed), and a
//! roster when someone joined. Joins are O(1): a join adds the player and
//! stages a presence entry; the roster is rebuilt at most once per tick, and
//! only when someone joined.

use crate::admission::{Admission, Refusal};
use crate::cluster::view::{ClusterView, Relay};
use crate::cluster::Outgoing;
use crate::config::Config;
use crate::ids::PlayerIds;
use crate::resume::Ticket;
use crate::sim::World;
use bytes::Bytes;
use mino_protocol::client::Direction;
use mino_protocol::server::{self as msg, WelcomeInfo};
use mino_protocol::snapshot::{SnapshotEncoder, SnapshotHeader};
use mino_protocol::wire::Bounds;
use mino_protocol::{PlayerId, ShardId, Tick};
use std::sync::Arc;
use std::time::Duration;

/// What every socket of the shard receives for one tick, the same for all:
/// nothing in it is per socket. The shard fills it with
/// message payloads; the tick loop frames each payload once as a websocket
/// frame and the fan-out writes those bytes as they are to every socket.
#[derive(Debug, Default)]
pub struct TickFrame {
    /// The tick these frames belong to.
    pub tick: Tick,
    /// Latest snapshot of each shard: this shard's first, then relayed ones.
    /// A socket that skipped ticks sends only the newest of each shard.
    pub snapshots: Vec<(ShardId, Bytes)>,
    /// Chat and presence frames in order. Never skipped for a healthy socket.
    pub events: Vec<Bytes>,
    /// All present players, when someone joined since the last tick; a new
    /// socket sends the first roster it sees, once.
    pub roster: Option<Bytes>,
}

/// A welcome for an admitted player.
#[derive(Debug)]
pub struct Admitted {
    /// The new player's id.
    pub player: PlayerId,
    /// The encoded Welcome frame.
    pub welcome: Bytes,
    /// The resume ticket carried in the welcome.
    pub ticket: Ticket,
    /// True when the player was already here (a second socket took it over).
    pub replaced: bool,
}

/// Everything one tick produced.
#[derive(Debug)]
pub struct TickOutput {
    /// For every socket.
    pub frame: TickFrame,
    /// This shard's own snapshot, to publish to the other shards.
    pub snapshot: Bytes,
    /// This shard's own chat and presence frames of the tick, to publish.
    pub publish: Vec<Outgoing>,
    /// Age of each relayed snapshot in the frame (now minus its tick's time), ms.
    pub relay_lag_ms: Vec<u64>,
    /// True when the local player list changed (someone joined or left).
    pub membership_changed: bool,
}

/// The shard: owns the world by `&mut`.
pub struct Shard {
    id: ShardId,
    tick_hz: u16,
    world: World,
    admission: Admission,
    encoder: SnapshotEncoder,
    ids: PlayerIds,
    view: ClusterView,
    tick: Tick,
    events: Vec<Bytes>,
    publish: Vec<Outgoing>,
    joined: Vec<(PlayerId, Arc<str>)>,
    left: Vec<PlayerId>,
    presence_seq: u64,
    reserved: usize,
    highest_player: u32,
}

impl Shard {
    /// An empty shard as configured. Clustered (a Redis URL is set), player ids
    /// come from blocks handed in with [`Shard::add_id_block`].
    pub fn new(config: &Config) -> Shard {
        let ids = match config.redis {
            Some(_) => PlayerIds::Blocks(Default::default()),
            None => PlayerIds::Local { next: 1 },
        };
        let s = config.world_size;
        Shard {
            id: config.shard_id,
            tick_hz: config.tick_hz,
            world: World::new(Bounds::new(0.0, 0.0, s, s), config.speed),
            admission: Admission::new(config.max_players, config.busy_lateness),
            encoder: SnapshotEncoder::new(),
            ids,
            view: ClusterView::default(),
            tick: Tick(0),
            events: Vec::new(),
            publish: Vec::new(),
            joined: Vec::new(),
            left: Vec::new(),
            presence_seq: 0,
            reserved: 0,
            highest_player: 0,
        }
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

    /// The highest player id this shard has admitted.
    pub fn highest_player(&self) -> u32 {
        self.highest_player
    }

    /// Ids left before the shard needs another block.
    pub fn ids_remaining(&self) -> u64 {
        self.ids.remaining()
    }

    /// Starts this process's presence sequence at `epoch` (the tick loop passes
    /// the start time in µs, so a restarted shard's numbers keep increasing).
    pub fn set_presence_epoch(&mut self, epoch: u64) {
        self.presence_seq = self.presence_seq.max(epoch);
    }

    /// Adds a block of cluster-unique player ids.
    pub fn add_id_block(&mut self, start: u32, len: u32) {
        self.ids.add_block(start, len);
    }

    /// A relayed snapshot of another shard, kept until the next tick (newest
    /// wins). Returns false if dropped (the shard is not known to be alive).
    pub fn relay_snapshot(&mut self, shard: ShardId, bytes: Bytes, server_time_ms: u64) -> Relay {
        if shard == self.id {
            return Relay::Dropped;
        }
        self.view.snapshot(shard, bytes, server_time_ms)
    }

    /// A relayed chat frame: forwarded to sockets unchanged.
    pub fn relay_chat(&mut self, bytes: Bytes) {
        self.events.push(bytes);
    }

    /// A relayed presence frame with its parsed delta: forwarded unchanged if
    /// the shard is alive here (else its next full roster will tell).
    pub fn relay_presence(
        &mut self,
        shard: ShardId,
        seq: u64,
        bytes: Bytes,
        joined: &[(PlayerId, Arc<str>)],
        left: &[PlayerId],
    ) {
        if shard != self.id && self.view.presence(shard, seq, joined, left) {
            self.events.push(bytes);
        }
    }

    /// The registry's list of other live shards; the players of shards that
    /// died leave everyone's view.
    pub fn set_live_shards(&mut self, live: &[ShardId]) {
        let others: Vec<ShardId> = live.iter().copied().filter(|s| *s != self.id).collect();
        let frames = self.view.set_live(&others);
        self.events.extend(frames);
    }

    /// The full roster of another shard (it appeared or came back).
    pub fn remote_roster(&mut self, shard: ShardId, seq: u64, players: Vec<(PlayerId, Arc<str>)>) {
        if let Some(frame) = self.view.roster(shard, seq, players) {
            self.events.push(frame);
        }
    }

    /// Stops admitting anyone (shutdown, drain).
    pub fn set_draining(&mut self) {
        self.admission.set_draining();
    }

    /// Holds a place for a player who is about to resume (its ticket is being
    /// checked), so concurrent joins cannot take it.
    ///
    /// Errors: the [`Refusal`] when full, overloaded or draining.
    pub fn reserve(&mut self) -> Result<(), Refusal> {
        self.admission.check(self.world.len() + self.reserved)?;
        self.reserved += 1;
        Ok(())
    }

    /// Gives back a place held by [`Shard::reserve`].
    pub fn unreserve(&mut self) {
        self.reserved = self.reserved.saturating_sub(1);
    }

    /// Admits a new player named `name` at `spawn` (world units) if admission
    /// allows. `ticket` is the fresh secret for its welcome.
    ///
    /// Errors: the [`Refusal`] when full, overloaded, draining or out of ids.
    pub fn join(&mut self, name: &str, spawn: (f32, f32), ticket: Ticket, now_ms: u64) -> Result<Admitted, Refusal> {
        self.admission.check(self.world.len() + self.reserved)?;
        let player = self.ids.take().ok_or(Refusal::Unavailable)?;
        self.highest_player = self.highest_player.max(player.0);
        let name: Arc<str> = name.into();
        self.world.add(player, name.clone(), spawn.0, spawn.1);
        self.joined.push((player, name.clone()));
        Ok(self.admitted(player, &name, ticket, now_ms, false, false))
    }

    /// Admits a resumed player with its own id and name, at `position` (or
    /// `spawn` if unknown), into a place held by [`Shard::reserve`]. A player
    /// that is still here keeps its entity where it stands (`replaced`).
    pub fn rejoin(
        &mut self,
        player: PlayerId,
        name: &str,
        position: Option<(f32, f32)>,
        spawn: (f32, f32),
        ticket: Ticket,
        now_ms: u64,
    ) -> Admitted {
        self.unreserve();
        self.highest_player = self.highest_player.max(player.0);
        let replaced = self.world.player(player).is_some();
        if !replaced {
            let (x, y) = position.unwrap_or(spawn);
            let name: Arc<str> = name.into();
            self.world.add(player, name.clone(), x, y);
            if let Some(i) = self.left.iter().position(|id| *id == player) {
                // Left and came back within one tick: nobody needs to know.
                self.left.swap_remove(i);
            } else {
                self.joined.push((player, name));
            }
        }
        self.admitted(player, name, ticket, now_ms, true, replaced)
    }

    fn admitted(
        &self,
        player: PlayerId,
        name: &str,
        ticket: Ticket,
        now_ms: u64,
        resumed: bool,
        replaced: bool,
    ) -> Admitted {
        let p = self.world.player(player).map_or((0.0, 0.0), |p| (p.x, p.y));
        let welcome = msg::encode_welcome(&WelcomeInfo {
            player_id: player,
            shard_id: self.id,
            tick_hz: self.tick_hz,
            bounds: *self.world.bounds(),
            speed: self.world.speed(),
            resume_ticket: ticket.as_bytes(),
            server_time_ms: now_ms,
            name,
            position: p,
            resumed,
        });
        Admitted { player, welcome, ticket, replaced }
    }

    /// Removes a player (socket closed). Unknown ids are ignored.
    pub fn leave(&mut self, player: PlayerId) {
        if self.world.remove(player).is_some() {
            // A player who joins and leaves within one tick never shows up.
            if let Some(i) = self.joined.iter().position(|(id, _)| *id == player) {
                self.joined.swap_remove(i);
            } else {
                self.left.push(player);
            }
        }
    }

    /// Sets a player's wanted direction.
    pub fn input(&mut self, player: PlayerId, dir: Direction) {
        self.world.set_direction(player, dir);
    }

    /// Stages a chat line from `player` (ignored if it is not here).
    pub fn chat(&mut self, player: PlayerId, text: &str, now_ms: u64) {
        if let Some(p) = self.world.player(player) {
            let frame = msg::encode_chat(player, &p.name, text, self.id, now_ms);
            self.events.push(frame.clone());
            self.publish.push(Outgoing::Chat(frame));
        }
    }

    /// Runs one tick: records its start `lateness`, moves everyone by `dt`, and
    /// returns the frame for every socket and what to publish.
    pub fn tick(&mut self, dt: Duration, lateness: Duration, now_ms: u64) -> TickOutput {
        self.admission.record_lateness(lateness);
        self.tick = Tick(self.tick.0 + 1);
        self.world.step(dt.as_secs_f32());
        let header = SnapshotHeader {
            shard_id: self.id,
            tick: self.tick,
            server_time_ms: now_ms,
            tick_hz: self.tick_hz,
            bounds: *self.world.bounds(),
            cell: 0,
        };
        let snapshot = self.encoder.encode(&header, self.world.players().iter().map(|p| p.entry()));
        let roster = (!self.joined.is_empty()).then(|| {
            let local = self.world.players().iter().map(|p| (p.id, &*p.name));
            msg::encode_roster(local.chain(self.view.players()))
        });
        let membership_changed = !self.joined.is_empty() || !self.left.is_empty();
        if membership_changed {
            self.presence_seq += 1;
            let presence = msg::encode_presence(
                self.id,
                self.presence_seq,
                self.joined.iter().map(|(id, name)| (*id, &**name)),
                self.left.iter().copied(),
            );
            self.events.push(presence.clone());
            self.publish.push(Outgoing::Presence {
                bytes: presence,
                seq: self.presence_seq,
                joined: std::mem::take(&mut self.joined),
                left: std::mem::take(&mut self.left),
            });
        }
        let relayed = self.view.take_snapshots();
        let relay_lag_ms = relayed.iter().map(|r| now_ms.saturating_sub(r.server_time_ms)).collect();
        let mut snapshots = Vec::with_capacity(1 + relayed.len());
        snapshots.push((self.id, snapshot.clone()));
        snapshots.extend(relayed.into_iter().map(|r| (r.shard, r.bytes)));
        TickOutput {
            frame: TickFrame { tick: self.tick, snapshots, events: std::mem::take(&mut self.events), roster },
            snapshot,
            publish: std::mem::take(&mut self.publish),
            relay_lag_ms,
            membership_changed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::server::{decode, player_id, ServerMsg};

    fn tk(now: u64) -> Ticket {
        use rand::SeedableRng;
        Ticket::issue(now, &mut rand::rngs::StdRng::seed_from_u64(now))
    }

    fn config(max: u32) -> Config {
        Config {
            max_players: max,
            shard_id: ShardId(7),
            busy_lateness: Some(Duration::from_millis(10)),
            ..Config::default()
        }
    }

    const TICK: Duration = Duration::from_millis(50);

    #[test]
    fn join_welcomes_with_id_ticket_and_position() {
        let mut s = Shard::new(&config(10));
        let a = s.join("Ada", (10.0, 20.0), tk(5), 5).expect("admitted");
        let Ok(ServerMsg::Welcome(w)) = decode(&a.welcome) else { panic!("welcome") };
        assert_eq!((w.player_id(), w.shard_id(), w.tick_hz()), (a.player.0, 7, 20));
        assert_eq!((w.x(), w.y()), (10.0, 20.0));
        assert_eq!(w.resume_ticket().map(|t| t.bytes().to_vec()), Some(tk(5).as_bytes().to_vec()));
        assert!(!w.resumed());
    }

    #[test]
    fn tick_frame_has_snapshot_presence_and_roster_once() {
        let mut s = Shard::new(&config(10));
        let a = s.join("Ada", (0.0, 0.0), tk(0), 0).expect("admitted");
        let f = s.tick(TICK, Duration::ZERO, 0).frame;
        assert_eq!(f.tick, Tick(1));
        assert_eq!(f.snapshots.len(), 1);
        assert!(f.roster.is_some());
        assert_eq!(f.events.len(), 1, "one presence for the join");
        let Ok(ServerMsg::Presence(p)) = decode(&f.events[0]) else { panic!("presence") };
        assert_eq!(p.joined().map(|j| j.get(0).id()), Some(a.player.0));
        let f = s.tick(TICK, Duration::ZERO, 0).frame;
        assert!(f.roster.is_none() && f.events.is_empty());
    }

    #[test]
    fn snapshot_moves_player_by_speed_times_dt() {
        let mut s = Shard::new(&config(10));
        let a = s.join("Ada", (100.0, 100.0), tk(0), 0).expect("admitted");
        s.input(a.player, Direction::new(1.0, 0.0).expect("dir"));
        let f = s.tick(TICK, Duration::ZERO, 0).frame;
        let Ok(ServerMsg::Snapshot(snap)) = decode(&f.snapshots[0].1) else { panic!("snapshot") };
        let p = snap.players().expect("players").get(0);
        assert_eq!(player_id(p), a.player);
        let b = snap.bounds().copied().expect("bounds");
        let (x, _) = mino_protocol::quantize::world_position(&b, p.x(), p.y());
        assert!((x - (100.0 + 120.0 * 0.05)).abs() < 0.05, "x = {x}");
    }

    #[test]
    fn leave_stages_presence_left_and_join_then_leave_is_silent() {
        let mut s = Shard::new(&config(10));
        let a = s.join("Ada", (0.0, 0.0), tk(0), 0).expect("admitted");
        s.tick(TICK, Duration::ZERO, 0);
        s.leave(a.player);
        let f = s.tick(TICK, Duration::ZERO, 0).frame;
        let Ok(ServerMsg::Presence(p)) = decode(&f.events[0]) else { panic!("presence") };
        assert_eq!(p.left().map(|l| l.get(0)), Some(a.player.0));
        let b = s.join("Bob", (0.0, 0.0), tk(0), 0).expect("admitted");
        s.leave(b.player);
        let f = s.tick(TICK, Duration::ZERO, 0).frame;
        assert!(f.events.is_empty(), "join+leave in one tick emits nothing");
    }

    #[test]
    fn cap_refuses_and_lateness_makes_busy() {
        let mut s = Shard::new(&config(1));
        s.join("a", (0.0, 0.0), tk(0), 0).expect("first");
        assert_eq!(s.join("b", (0.0, 0.0), tk(0), 0).err(), Some(Refusal::Full));
        let mut s = Shard::new(&config(100));
        for _ in 0..crate::admission::WINDOW_TICKS {
            s.tick(TICK, Duration::from_millis(40), 0);
        }
        assert_eq!(s.join("c", (0.0, 0.0), tk(0), 0).err(), Some(Refusal::Overloaded));
    }

    #[test]
    fn relayed_frames_reach_sockets_unchanged_but_are_not_republished() {
        let mut cfg = config(10);
        cfg.redis = Some("redis://127.0.0.1:1".into());
        let mut s = Shard::new(&cfg);
        assert_eq!(s.join("a", (0.0, 0.0), tk(0), 0).err(), Some(Refusal::Unavailable), "no ids yet");
        s.add_id_block(1000, 10);
        let a = s.join("Ada", (0.0, 0.0), tk(0), 0).expect("admitted");
        assert_eq!(a.player, PlayerId(1000));
        s.set_live_shards(&[ShardId(7), ShardId(8)]);
        let theirs = Bytes::from_static(b"snapshot of shard 8");
        assert_eq!(s.relay_snapshot(ShardId(8), theirs.clone(), 0), Relay::Kept);
        assert_eq!(s.relay_snapshot(ShardId(9), theirs.clone(), 0), Relay::Dropped, "unknown shard dropped");
        let chat = Bytes::from_static(b"chat from 8");
        s.relay_chat(chat.clone());
        let out = s.tick(TICK, Duration::ZERO, 30);
        assert_eq!(out.frame.snapshots.len(), 2);
        assert_eq!(out.frame.snapshots[1], (ShardId(8), theirs));
        assert!(out.frame.events.contains(&chat));
        assert!(
            !out.publish.iter().any(|o| matches!(o, Outgoing::Chat(b) if b == &chat)),
            "relayed frames are not published again"
        );
        assert_eq!(out.relay_lag_ms, [30]);
        assert!(out.membership_changed);
    }

    #[test]
    fn roster_covers_players_of_other_shards() {
        let mut s = Shard::new(&config(10));
        s.set_live_shards(&[ShardId(8)]);
        s.remote_roster(ShardId(8), 1, vec![(PlayerId(500), "Far".into())]);
        s.join("Ada", (0.0, 0.0), tk(0), 0).expect("admitted");
        let f = s.tick(TICK, Duration::ZERO, 0).frame;
        let Ok(ServerMsg::Roster(r)) = decode(f.roster.as_ref().expect("roster")) else { panic!() };
        let mut names: Vec<_> =
            r.players().expect("players").iter().map(|p| p.name().unwrap_or("").to_owned()).collect();
        names.sort();
        assert_eq!(names, ["Ada", "Far"]);
    }

    #[test]
    fn chat_is_staged_in_order_with_sender_name() {
        let mut s = Shard::new(&config(10));
        let a = s.join("Ada", (0.0, 0.0), tk(0), 0).expect("admitted");
        s.tick(TICK, Duration::ZERO, 0);
        s.chat(a.player, "one", 1);
        s.chat(a.player, "two", 2);
        s.chat(PlayerId(999), "ghost", 3);
        let f = s.tick(TICK, Duration::ZERO, 0).frame;
        let texts: Vec<String> = f
            .events
            .iter()
            .filter_map(|b| match decode(b) {
                Ok(ServerMsg::Chat(c)) => Some(format!("{}:{}", c.name().unwrap_or(""), c.text().unwrap_or(""))),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["Ada:one", "Ada:two"]);
    }

    #[test]
    fn rejoin_keeps_id_and_position_and_reservations_count_against_the_cap() {
        let mut s = Shard::new(&config(2));
        let a = s.join("Ada", (10.0, 10.0), tk(0), 0).expect("admitted");
        s.reserve().expect("room for one more");
        assert_eq!(s.join("Bob", (0.0, 0.0), tk(0), 0).err(), Some(Refusal::Full), "the reserved place is taken");
        s.tick(TICK, Duration::ZERO, 0);
        s.leave(a.player);
        let back = s.rejoin(a.player, "Ada", Some((10.0, 10.0)), (0.0, 0.0), tk(1), 1);
        assert_eq!(back.player, a.player);
        assert!(!back.replaced);
        let Ok(ServerMsg::Welcome(w)) = decode(&back.welcome) else { panic!("welcome") };
        assert!(w.resumed());
        assert_eq!((w.x(), w.y()), (10.0, 10.0));
        let f = s.tick(TICK, Duration::ZERO, 0).frame;
        assert!(f.events.is_empty(), "left and back within one tick: no presence");
        s.reserve().expect("room");
        let again = s.rejoin(a.player, "Ada", None, (500.0, 500.0), tk(2), 2);
        assert!(again.replaced, "still here: the entity is kept");
        assert_eq!(s.world().player(a.player).map(|p| (p.x, p.y)), Some((10.0, 10.0)));
    }
}
