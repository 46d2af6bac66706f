//! The latest server-reported position of every bot of a run, in one shared
//! table: each bot publishes its own (from the own-shard cell that
//! lists it), and observers read them all to know who is within their view
//! radius. One slot a bot, written by that bot only, of atomics: no lock, and
//! a read never waits. A read may pair one tick's position with the next
//! tick's stamp (the fields are stored one after the other); observers
//! tolerate a tick of error anyway.

use mino_protocol::PlayerId;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use tokio::time::Instant;

/// One bot's latest report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    /// The bot's player (its current session's).
    pub player: PlayerId,
    /// Position, world units.
    pub x: f32,
    /// Position, world units.
    pub y: f32,
    /// Server wall clock of the frame that gave it, the low 32 bits of the ms.
    pub time_ms: u32,
    /// When the bot received that frame.
    pub at: Instant,
}

#[derive(Default)]
struct Slot {
    /// x and y as f32 bits, x high.
    position: AtomicU64,
    /// The player id (high) and the frame's time_ms (low).
    stamp: AtomicU64,
    /// µs since the table's epoch, plus 1; 0: no report.
    at_us: AtomicU64,
}

/// Every bot's latest position.
pub struct Positions {
    epoch: Instant,
    slots: Box<[Slot]>,
}

impl std::fmt::Debug for Positions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Positions").field("slots", &self.slots.len()).finish()
    }
}

impl Positions {
    /// A table for bots `0..capacity`.
    pub fn new(capacity: usize) -> Positions {
        Positions { epoch: Instant::now(), slots: (0..capacity).map(|_| Slot::default()).collect() }
    }

    /// Slots (the capacity).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when the table has no slot.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Bot `index` publishes its report (ignored past the capacity).
    pub fn publish(&self, index: usize, r: &Report) {
        let Some(slot) = self.slots.get(index) else { return };
        slot.position.store(u64::from(r.x.to_bits()) << 32 | u64::from(r.y.to_bits()), Relaxed);
        slot.stamp.store(u64::from(r.player.0) << 32 | u64::from(r.time_ms), Relaxed);
        let us = u64::try_from(r.at.saturating_duration_since(self.epoch).as_micros()).unwrap_or(u64::MAX - 1);
        slot.at_us.store(us + 1, Relaxed);
    }

    /// Bot `index` has no session any more: its slot reads as empty.
    pub fn withdraw(&self, index: usize) {
        if let Some(slot) = self.slots.get(index) {
            slot.at_us.store(0, Relaxed);
        }
    }

    /// The latest report of bot `index`, if it has one.
    pub fn read(&self, index: usize) -> Option<Report> {
        let slot = self.slots.get(index)?;
        let at_us = slot.at_us.load(Relaxed);
        if at_us == 0 {
            return None;
        }
        let position = slot.position.load(Relaxed);
        let stamp = slot.stamp.load(Relaxed);
        Some(Report {
            player: PlayerId((stamp >> 32) as u32),
            x: f32::from_bits((position >> 32) as u32),
            y: f32::from_bits(position as u32),
            time_ms: stamp as u32,
            at: self.epoch + std::time::Duration::from_micros(at_us - 1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_report_reads_back_until_withdrawn() {
        let t = Positions::new(3);
        assert_eq!((t.len(), t.read(1)), (3, None));
        let at = Instant::now() + Duration::from_millis(7);
        let r = Report { player: PlayerId(70_001), x: 123.25, y: -4.5, time_ms: u32::MAX - 2, at };
        t.publish(1, &r);
        let back = t.read(1).expect("published");
        assert_eq!((back.player, back.x, back.y, back.time_ms), (r.player, r.x, r.y, r.time_ms));
        assert!(
            back.at.duration_since(at) < Duration::from_micros(2)
                && at.duration_since(back.at) < Duration::from_micros(2)
        );
        t.withdraw(1);
        assert_eq!(t.read(1), None);
        t.publish(9, &r);
        assert_eq!(t.read(9), None, "past the capacity: ignored");
    }
}
