//! The simulation: every player of this shard, where it stands and which way
//! it walks, advanced one tick at a time by [`World::step`] with the
//! protocol's integer-exact movement rule ([`Motion`]). No I/O and no clock
//! reads, so every rule here is tested deterministically.

use mino_protocol::client::Direction;
use mino_protocol::entry::{self, Entry};
use mino_protocol::motion::Motion;
use mino_protocol::quantize;
use mino_protocol::wire::Bounds;
use mino_protocol::PlayerId;
use std::collections::HashMap;
use std::sync::Arc;

/// One simulated player, on the wire's grid: its state is exactly what its
/// snapshot entry carries ([`Entry`]), so every socket and the delta frames'
/// prediction see the positions the server holds.
#[derive(Clone, Debug)]
pub struct Player {
    /// The player's id.
    pub id: PlayerId,
    /// Display name, shared with every frame that carries it.
    pub name: Arc<str>,
    /// Quantized position, `0..=65535` over the world's bounds.
    pub x: u16,
    /// Quantized position, `0..=65535` over the world's bounds.
    pub y: u16,
    /// Facing, 0..=255 (kept while standing still); a walking player moves
    /// along it ([`Motion::step`]).
    pub heading: u8,
    /// Walking (its wanted direction is not "stand still").
    pub moving: bool,
    /// The low 7 bits of the sequence number of the last input applied
    /// (echoed in the snapshot entry for client-side prediction).
    pub input_seq: u8,
}

impl Player {
    /// The player's snapshot entry.
    pub fn entry(&self) -> Entry {
        let flags = entry::flags(self.moving, self.input_seq);
        Entry { id: self.id, x: self.x, y: self.y, heading: self.heading, flags }
    }
}

/// Every player of one shard, densely stored for a cache-friendly tick.
#[derive(Debug)]
pub struct World {
    bounds: Bounds,
    speed: f32,
    tick_hz: u16,
    motion: Motion,
    players: Vec<Player>,
    /// Where each player is in `players` (u32: 8-byte entries).
    index: HashMap<PlayerId, u32>,
}

impl World {
    /// An empty world spanning `bounds` where players walk at `speed` world
    /// units/s, one step of [`Motion`] a tick at `tick_hz`.
    pub fn new(bounds: Bounds, speed: f32, tick_hz: u16) -> World {
        let motion = Motion::new(&bounds, speed, tick_hz);
        World { bounds, speed, tick_hz, motion, players: Vec::new(), index: HashMap::new() }
    }

    /// The world's bounds, world units.
    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    /// Walking speed, world units per second.
    pub fn speed(&self) -> f32 {
        self.speed
    }

    /// Ticks a second the movement rule was made for.
    pub fn tick_hz(&self) -> u16 {
        self.tick_hz
    }

    /// The movement rule.
    pub fn motion(&self) -> &Motion {
        &self.motion
    }

    /// Number of players.
    pub fn len(&self) -> usize {
        self.players.len()
    }

    /// True when nobody is here.
    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }

    /// Where `p` stands, world units.
    pub fn position(&self, p: &Player) -> (f32, f32) {
        quantize::world_position(&self.bounds, p.x, p.y)
    }

    /// Adds a player standing still at `(x, y)` world units (clamped into
    /// bounds, onto the grid). Returns false, changing nothing, if the id is
    /// already present.
    pub fn add(&mut self, id: PlayerId, name: Arc<str>, x: f32, y: f32) -> bool {
        if self.index.contains_key(&id) {
            return false;
        }
        let (x, y) = quantize::position(&self.bounds, x, y);
        self.index.insert(id, self.players.len() as u32);
        self.players.push(Player { id, name, x, y, heading: 0, moving: false, input_seq: 0 });
        true
    }

    /// Removes a player; returns it if it was present. O(1) (swap-remove).
    pub fn remove(&mut self, id: PlayerId) -> Option<Player> {
        let i = self.index.remove(&id)? as usize;
        let p = self.players.swap_remove(i);
        if let Some(moved) = self.players.get(i) {
            self.index.insert(moved.id, i as u32);
        }
        Some(p)
    }

    /// Sets the direction a player wants to walk in, from its input number
    /// `seq`: it faces the direction's heading and walks, or stands (facing
    /// as before); unknown ids are ignored.
    pub fn set_direction(&mut self, id: PlayerId, dir: Direction, seq: u32) {
        if let Some(&i) = self.index.get(&id) {
            let p = &mut self.players[i as usize];
            p.moving = !dir.is_still();
            p.input_seq = (seq & 0x7f) as u8;
            if p.moving {
                p.heading = quantize::heading(dir.x(), dir.y());
            }
        }
    }

    /// Stops a player where it stands (its facing and last input kept).
    pub fn stop(&mut self, id: PlayerId) {
        if let Some(&i) = self.index.get(&id) {
            self.players[i as usize].moving = false;
        }
    }

    /// A player by id.
    pub fn player(&self, id: PlayerId) -> Option<&Player> {
        self.index.get(&id).map(|&i| &self.players[i as usize])
    }

    /// Every player, in storage order.
    pub fn players(&self) -> &[Player] {
        &self.players
    }

    /// Steps as many ticks as `secs` seconds take at the tick rate the
    /// world was made with (tests).
    #[cfg(test)]
    pub fn walk_for(&mut self, secs: f32) {
        for _ in 0..(secs * f32::from(self.tick_hz())).round() as u32 {
            self.step();
        }
    }

    /// Advances every walking player by one tick: its heading's step, each
    /// axis clamped to the world (sliding along walls).
    pub fn step(&mut self) {
        let motion = &self.motion;
        for p in &mut self.players {
            if p.moving {
                (p.x, p.y) = motion.advance((p.x, p.y), p.heading, true, 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 × 50 units, 10 units/s at 10 Hz: one unit a tick.
    fn world() -> World {
        World::new(Bounds::new(0.0, 0.0, 100.0, 50.0), 10.0, 10)
    }

    fn dir(x: f32, y: f32) -> Direction {
        Direction::new(x, y).expect("finite")
    }

    fn at(w: &World, id: u32) -> (f32, f32) {
        let p = w.player(PlayerId(id)).expect("present");
        w.position(p)
    }

    #[test]
    fn player_walks_its_headings_step_a_tick() {
        let mut w = world();
        w.add(PlayerId(1), "a".into(), 10.0, 10.0);
        w.set_direction(PlayerId(1), dir(3.0, 4.0), 0);
        let start = w.player(PlayerId(1)).map(|p| (p.x, p.y)).expect("present");
        for _ in 0..5 {
            w.step();
        }
        let p = w.player(PlayerId(1)).expect("present");
        let step = w.motion().step(p.heading);
        assert_eq!(
            (i32::from(p.x), i32::from(p.y)),
            (i32::from(start.0) + 5 * step.0, i32::from(start.1) + 5 * step.1)
        );
        let (x, y) = at(&w, 1);
        assert!((x - 13.0).abs() < 0.05 && (y - 14.0).abs() < 0.05, "five units along (3, 4): {x} {y}");
    }

    #[test]
    fn still_player_does_not_move_and_keeps_heading() {
        let mut w = world();
        w.add(PlayerId(1), "a".into(), 10.0, 10.0);
        w.set_direction(PlayerId(1), dir(0.0, 1.0), 0);
        w.set_direction(PlayerId(1), Direction::STILL, 0);
        let before = w.player(PlayerId(1)).map(|p| (p.x, p.y)).expect("present");
        w.step();
        let p = w.player(PlayerId(1)).expect("present");
        assert_eq!(((p.x, p.y), p.heading), (before, 64));
        assert!(!p.entry().moving());
    }

    #[test]
    fn bounds_stop_and_slide() {
        let mut w = world();
        w.add(PlayerId(1), "a".into(), 99.0, 25.0);
        w.set_direction(PlayerId(1), dir(1.0, 1.0), 0);
        for _ in 0..10 {
            w.step();
        }
        let (x, y) = at(&w, 1);
        assert_eq!(x, 100.0);
        assert!((y - (25.0 + 10.0 * std::f32::consts::FRAC_1_SQRT_2)).abs() < 0.05, "{y}");
        for _ in 0..1000 {
            w.step();
        }
        assert_eq!(at(&w, 1), (100.0, 50.0));
    }

    #[test]
    fn spawn_outside_bounds_is_clamped() {
        let mut w = world();
        w.add(PlayerId(1), "a".into(), -5.0, f32::NAN);
        assert_eq!(at(&w, 1), (0.0, 0.0));
    }

    #[test]
    fn remove_keeps_index_consistent() {
        let mut w = world();
        for i in 1..=5 {
            w.add(PlayerId(i), "p".into(), i as f32, 0.0);
        }
        assert!(!w.add(PlayerId(3), "dup".into(), 0.0, 0.0));
        assert_eq!(w.remove(PlayerId(2)).map(|p| p.id), Some(PlayerId(2)));
        assert!(w.remove(PlayerId(2)).is_none());
        for i in [1, 3, 4, 5] {
            assert!((at(&w, i).0 - i as f32).abs() < 0.01);
        }
        assert_eq!(w.len(), 4);
        w.set_direction(PlayerId(5), dir(1.0, 0.0), 0);
        for _ in 0..10 {
            w.step();
        }
        assert!((at(&w, 5).0 - 15.0).abs() < 0.01);
    }

    #[test]
    fn unknown_player_direction_is_ignored() {
        let mut w = world();
        w.set_direction(PlayerId(9), dir(1.0, 0.0), 0);
        assert!(w.is_empty());
    }
}
