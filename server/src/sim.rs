//! The simulation: every player of this shard, their wanted directions and
//! positions, advanced by [`World::step`]. No I/O and no clock reads: the caller
//! passes `dt`, so every rule here is tested deterministically.

use mino_protocol::client::Direction;
use mino_protocol::quantize;
use mino_protocol::snapshot::PlayerEntry;
use mino_protocol::wire::Bounds;
use mino_protocol::PlayerId;
use std::collections::HashMap;
use std::sync::Arc;

/// One simulated player.
#[derive(Clone, Debug)]
pub struct Player {
    /// The player's id.
    pub id: PlayerId,
    /// Display name, shared with every frame that carries it.
    pub name: Arc<str>,
    /// Position, world units.
    pub x: f32,
    /// Position, world units.
    pub y: f32,
    /// Wanted direction (unit vector or still).
    pub dir: Direction,
    /// Last facing, 0..=255 (kept while standing still).
    pub heading: u8,
    /// The low 7 bits of the sequence number of the last input applied
    /// (echoed in the snapshot entry for client-side prediction).
    pub input_seq: u8,
}

impl Player {
    /// The player's snapshot entry.
    pub fn entry(&self) -> PlayerEntry {
        PlayerEntry {
            id: self.id,
            x: self.x,
            y: self.y,
            heading: self.heading,
            moving: !self.dir.is_still(),
            input_seq: self.input_seq,
        }
    }
}

/// Every player of one shard, densely stored for a cache-friendly tick.
#[derive(Debug)]
pub struct World {
    bounds: Bounds,
    speed: f32,
    players: Vec<Player>,
    /// Where each player is in `players` (u32: 8-byte entries).
    index: HashMap<PlayerId, u32>,
}

impl World {
    /// An empty world spanning `bounds` where players walk at `speed` world units/s.
    pub fn new(bounds: Bounds, speed: f32) -> World {
        World { bounds, speed, players: Vec::new(), index: HashMap::new() }
    }

    /// The world's bounds, world units.
    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    /// Walking speed, world units per second.
    pub fn speed(&self) -> f32 {
        self.speed
    }

    /// Number of players.
    pub fn len(&self) -> usize {
        self.players.len()
    }

    /// True when nobody is here.
    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }

    /// Adds a player standing still at `(x, y)` (clamped into bounds). Returns
    /// false, changing nothing, if the id is already present.
    pub fn add(&mut self, id: PlayerId, name: Arc<str>, x: f32, y: f32) -> bool {
        if self.index.contains_key(&id) {
            return false;
        }
        let (x, y) = self.clamp(x, y);
        self.index.insert(id, self.players.len() as u32);
        self.players.push(Player { id, name, x, y, dir: Direction::STILL, heading: 0, input_seq: 0 });
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
    /// `seq`; unknown ids are ignored.
    pub fn set_direction(&mut self, id: PlayerId, dir: Direction, seq: u32) {
        if let Some(&i) = self.index.get(&id) {
            let p = &mut self.players[i as usize];
            p.dir = dir;
            p.input_seq = (seq & 0x7f) as u8;
            if !dir.is_still() {
                p.heading = quantize::heading(dir.x(), dir.y());
            }
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

    /// Advances every player by `dt_secs` seconds at the world's speed in its
    /// wanted direction, stopping at the bounds (sliding along walls).
    pub fn step(&mut self, dt_secs: f32) {
        let d = self.speed * dt_secs.max(0.0);
        let b = self.bounds;
        for p in &mut self.players {
            if p.dir.is_still() {
                continue;
            }
            p.x = (p.x + p.dir.x() * d).clamp(b.min_x(), b.max_x());
            p.y = (p.y + p.dir.y() * d).clamp(b.min_y(), b.max_y());
        }
    }

    fn clamp(&self, x: f32, y: f32) -> (f32, f32) {
        let b = &self.bounds;
        let x = if x.is_finite() { x.clamp(b.min_x(), b.max_x()) } else { b.min_x() };
        let y = if y.is_finite() { y.clamp(b.min_y(), b.max_y()) } else { b.min_y() };
        (x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> World {
        World::new(Bounds::new(0.0, 0.0, 100.0, 50.0), 10.0)
    }

    fn dir(x: f32, y: f32) -> Direction {
        Direction::new(x, y).expect("finite")
    }

    #[test]
    fn player_walks_at_speed_in_its_direction() {
        let mut w = world();
        w.add(PlayerId(1), "a".into(), 10.0, 10.0);
        w.set_direction(PlayerId(1), dir(3.0, 4.0), 0);
        w.step(0.5);
        let p = w.player(PlayerId(1)).expect("present");
        assert!((p.x - 13.0).abs() < 1e-4 && (p.y - 14.0).abs() < 1e-4, "{p:?}");
    }

    #[test]
    fn still_player_does_not_move_and_keeps_heading() {
        let mut w = world();
        w.add(PlayerId(1), "a".into(), 10.0, 10.0);
        w.set_direction(PlayerId(1), dir(0.0, 1.0), 0);
        w.set_direction(PlayerId(1), Direction::STILL, 0);
        w.step(1.0);
        let p = w.player(PlayerId(1)).expect("present");
        assert_eq!((p.x, p.y, p.heading), (10.0, 10.0, 64));
        assert!(!p.entry().moving);
    }

    #[test]
    fn bounds_stop_and_slide() {
        let mut w = world();
        w.add(PlayerId(1), "a".into(), 99.0, 25.0);
        w.set_direction(PlayerId(1), dir(1.0, 1.0), 0);
        w.step(1.0);
        let p = w.player(PlayerId(1)).expect("present");
        assert_eq!(p.x, 100.0);
        assert!((p.y - (25.0 + 10.0 * std::f32::consts::FRAC_1_SQRT_2)).abs() < 1e-4);
        w.step(100.0);
        let p = w.player(PlayerId(1)).expect("present");
        assert_eq!((p.x, p.y), (100.0, 50.0));
    }

    #[test]
    fn spawn_outside_bounds_is_clamped() {
        let mut w = world();
        w.add(PlayerId(1), "a".into(), -5.0, f32::NAN);
        let p = w.player(PlayerId(1)).expect("present");
        assert_eq!((p.x, p.y), (0.0, 0.0));
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
            assert_eq!(w.player(PlayerId(i)).map(|p| p.x), Some(i as f32));
        }
        assert_eq!(w.len(), 4);
        w.set_direction(PlayerId(5), dir(1.0, 0.0), 0);
        w.step(1.0);
        assert_eq!(w.player(PlayerId(5)).map(|p| p.x), Some(15.0));
    }

    #[test]
    fn unknown_player_direction_is_ignored() {
        let mut w = world();
        w.set_direction(PlayerId(9), dir(1.0, 0.0), 0);
        assert!(w.is_empty());
    }
}
