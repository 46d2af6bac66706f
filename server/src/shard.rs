//! The shard core: the world, admission, and the frames one tick hands to every
//! socket. I/O-free and clock-free (the caller passes `now_ms` and `dt`); the
//! tokio loop that drives it is [`crate::tick`].
//!
//! Per tick the shard produces one [`TickFrame`]: its snapshot (encoded once),
//! the chat and presence frames since the last tick, and a roster when someone
//! joined. Joins are O(1): a join adds the player and stages a presence entry;
//! the roster is rebuilt at most once per tick, and only when someone joined.

use crate::admission::{Admission, Refusal};
use crate::config::Config;
use crate::sim::World;
use bytes::Bytes;
use mino_protocol::client::Direction;
use mino_protocol::server::{self as msg, WelcomeInfo};
use mino_protocol::snapshot::{SnapshotEncoder, SnapshotHeader};
use mino_protocol::wire::Bounds;
use mino_protocol::{PlayerId, ShardId, Tick};
use std::sync::Arc;
use std::time::Duration;

/// Bytes in a resume ticket (128 bits).
pub const TICKET_BYTES: usize = 16;

/// What every socket of the shard receives for one tick. Shared (behind an
/// `Arc`) by all sockets: nothing in it is per socket.
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
    pub ticket: [u8; TICKET_BYTES],
}

/// The shard: owns the world by `&mut`.
pub struct Shard {
    id: ShardId,
    tick_hz: u16,
    world: World,
    admission: Admission,
    encoder: SnapshotEncoder,
    next_player: u32,
    tick: Tick,
    events: Vec<Bytes>,
    joined: Vec<(PlayerId, Arc<str>)>,
    left: Vec<PlayerId>,
}

impl Shard {
    /// An empty shard as configured.
    pub fn new(config: &Config) -> Shard {
        let s = config.world_size;
        Shard {
            id: config.shard_id,
            tick_hz: config.tick_hz,
            world: World::new(Bounds::new(0.0, 0.0, s, s), config.speed),
            admission: Admission::new(config.max_players, config.busy_lateness),
            encoder: SnapshotEncoder::new(),
            next_player: 1,
            tick: Tick(0),
            events: Vec::new(),
            joined: Vec::new(),
            left: Vec::new(),
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

    /// Stops admitting anyone (shutdown, drain).
    pub fn set_draining(&mut self) {
        self.admission.set_draining();
    }

    /// Admits a player named `name` at `spawn` (world units) if admission allows.
    /// `ticket` is the fresh secret for its welcome.
    ///
    /// Errors: the [`Refusal`] when full, overloaded or draining.
    pub fn join(
        &mut self,
        name: &str,
        spawn: (f32, f32),
        ticket: [u8; TICKET_BYTES],
        now_ms: u64,
    ) -> Result<Admitted, Refusal> {
        self.admission.check(self.world.len())?;
        let player = PlayerId(self.next_player);
        self.next_player = self.next_player.wrapping_add(1).max(1);
        let name: Arc<str> = name.into();
        self.world.add(player, name.clone(), spawn.0, spawn.1);
        let p = self.world.player(player).map_or(spawn, |p| (p.x, p.y));
        let welcome = msg::encode_welcome(&WelcomeInfo {
            player_id: player,
            shard_id: self.id,
            tick_hz: self.tick_hz,
            bounds: *self.world.bounds(),
            speed: self.world.speed(),
            resume_ticket: &ticket,
            server_time_ms: now_ms,
            name: &name,
            position: p,
            resumed: false,
        });
        self.joined.push((player, name));
        Ok(Admitted {
            player,
            welcome,
            ticket,
        })
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
            self.events
                .push(msg::encode_chat(player, &p.name, text, self.id, now_ms));
        }
    }

    /// Runs one tick: records its start `lateness`, moves everyone by `dt`, and
    /// returns the frame for every socket.
    pub fn tick(&mut self, dt: Duration, lateness: Duration, now_ms: u64) -> TickFrame {
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
        let snapshot = self
            .encoder
            .encode(&header, self.world.players().iter().map(|p| p.entry()));
        let roster = (!self.joined.is_empty())
            .then(|| msg::encode_roster(self.world.players().iter().map(|p| (p.id, &*p.name))));
        if !self.joined.is_empty() || !self.left.is_empty() {
            let presence = msg::encode_presence(
                self.id,
                self.joined.iter().map(|(id, name)| (*id, &**name)),
                self.left.iter().copied(),
            );
            self.events.push(presence);
            self.joined.clear();
            self.left.clear();
        }
        TickFrame {
            tick: self.tick,
            snapshots: vec![(self.id, snapshot)],
            events: std::mem::take(&mut self.events),
            roster,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::server::{decode, player_id, ServerMsg};

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
        let a = s.join("Ada", (10.0, 20.0), [3; 16], 5).expect("admitted");
        let Ok(ServerMsg::Welcome(w)) = decode(&a.welcome) else {
            panic!("welcome")
        };
        assert_eq!(
            (w.player_id(), w.shard_id(), w.tick_hz()),
            (a.player.0, 7, 20)
        );
        assert_eq!((w.x(), w.y()), (10.0, 20.0));
        assert_eq!(
            w.resume_ticket().map(|t| t.bytes().to_vec()),
            Some(vec![3; 16])
        );
    }

    #[test]
    fn tick_frame_has_snapshot_presence_and_roster_once() {
        let mut s = Shard::new(&config(10));
        let a = s.join("Ada", (0.0, 0.0), [0; 16], 0).expect("admitted");
        let f = s.tick(TICK, Duration::ZERO, 0);
        assert_eq!(f.tick, Tick(1));
        assert_eq!(f.snapshots.len(), 1);
        assert!(f.roster.is_some());
        assert_eq!(f.events.len(), 1, "one presence for the join");
        let Ok(ServerMsg::Presence(p)) = decode(&f.events[0]) else {
            panic!("presence")
        };
        assert_eq!(p.joined().map(|j| j.get(0).id()), Some(a.player.0));
        let f = s.tick(TICK, Duration::ZERO, 0);
        assert!(f.roster.is_none() && f.events.is_empty());
    }

    #[test]
    fn snapshot_moves_player_by_speed_times_dt() {
        let mut s = Shard::new(&config(10));
        let a = s.join("Ada", (100.0, 100.0), [0; 16], 0).expect("admitted");
        s.input(a.player, Direction::new(1.0, 0.0).expect("dir"));
        let f = s.tick(TICK, Duration::ZERO, 0);
        let Ok(ServerMsg::Snapshot(snap)) = decode(&f.snapshots[0].1) else {
            panic!("snapshot")
        };
        let p = snap.players().expect("players").get(0);
        assert_eq!(player_id(p), a.player);
        let b = snap.bounds().copied().expect("bounds");
        let (x, _) = mino_protocol::quantize::world_position(&b, p.x(), p.y());
        assert!((x - (100.0 + 120.0 * 0.05)).abs() < 0.05, "x = {x}");
    }

    #[test]
    fn leave_stages_presence_left_and_join_then_leave_is_silent() {
        let mut s = Shard::new(&config(10));
        let a = s.join("Ada", (0.0, 0.0), [0; 16], 0).expect("admitted");
        s.tick(TICK, Duration::ZERO, 0);
        s.leave(a.player);
        let f = s.tick(TICK, Duration::ZERO, 0);
        let Ok(ServerMsg::Presence(p)) = decode(&f.events[0]) else {
            panic!("presence")
        };
        assert_eq!(p.left().map(|l| l.get(0)), Some(a.player.0));
        let b = s.join("Bob", (0.0, 0.0), [0; 16], 0).expect("admitted");
        s.leave(b.player);
        let f = s.tick(TICK, Duration::ZERO, 0);
        assert!(f.events.is_empty(), "join+leave in one tick emits nothing");
    }

    #[test]
    fn cap_refuses_and_lateness_makes_busy() {
        let mut s = Shard::new(&config(1));
        s.join("a", (0.0, 0.0), [0; 16], 0).expect("first");
        assert_eq!(
            s.join("b", (0.0, 0.0), [0; 16], 0).err(),
            Some(Refusal::Full)
        );
        let mut s = Shard::new(&config(100));
        for _ in 0..crate::admission::WINDOW_TICKS {
            s.tick(TICK, Duration::from_millis(40), 0);
        }
        assert_eq!(
            s.join("c", (0.0, 0.0), [0; 16], 0).err(),
            Some(Refusal::Overloaded)
        );
    }

    #[test]
    fn chat_is_staged_in_order_with_sender_name() {
        let mut s = Shard::new(&config(10));
        let a = s.join("Ada", (0.0, 0.0), [0; 16], 0).expect("admitted");
        s.tick(TICK, Duration::ZERO, 0);
        s.chat(a.player, "one", 1);
        s.chat(a.player, "two", 2);
        s.chat(PlayerId(999), "ghost", 3);
        let f = s.tick(TICK, Duration::ZERO, 0);
        let texts: Vec<String> = f
            .events
            .iter()
            .filter_map(|b| match decode(b) {
                Ok(ServerMsg::Chat(c)) => Some(format!(
                    "{}:{}",
                    c.name().unwrap_or(""),
                    c.text().unwrap_or("")
                )),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["Ada:one", "Ada:two"]);
    }
}
