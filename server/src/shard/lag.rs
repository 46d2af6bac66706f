//! The relay's lag: another shard's bundles taken a tick after they came,
//! when its steps run even with this shard's, so that its outer tiers and
//! this shard's come due on different ticks.
//!
//! **Why.** A delta view sends each shard's cells at the steps of that
//! shard's own counter: the mid tier on its even steps, the prefetch ring
//! on every 4th ([`super::interest`]). Two shards' counters differ by
//! whatever their start times made them, and a bundle reaches the other
//! shard in the tick it was made or the next, so for one of any two shards
//! the other's steps run even with its own (the relay takes one of them a
//! tick longer than the other), and every view of that shard then sends
//! both shards' outer tiers on the same ticks: its heaviest tick, the one
//! its sockets' next frame waits on, carries twice the work. Measured with
//! `target/release/delta_cost --frames deltas --ticks 400 --warmup 100`
//! (two shards of 500 walkers, section 15's walk; each shard's tick by its
//! number mod 4, ms): the shard that heard the other's steps a tick behind
//! its own took 4.99 / 4.34 / 3.50 / 3.53, the one that heard them even
//! 6.89 / 2.15 / 4.67 / 2.37 (`--step-offset 1` swapped the two).
//!
//! **What.** A shard whose newest step heard has run even with this shard's
//! step for [`SWITCH_AFTER`] ticks running (at once for the first step
//! heard) is *late*: its bundles are taken at the start of the tick after
//! the one they would have been, so its steps then run odd with this
//! shard's. Nothing else changes: its streams see each step one tick later
//! (a step late or several at once were already a relay's everyday
//! ([`super::streams`]), and its views hold and send as ever. One whose
//! steps run odd is taken as it comes. A place whose grid is at most two
//! cells a side (no area of interest: one cell) never lags: no cell of it
//! is two cells from another, where the stencil's slower tiers begin. The
//! cost: that shard's players reach this shard's sockets one tick later
//! (50 ms at the default 20 Hz); the two shards' players then reach each
//! other's sockets a tick after their step, where one way it was the same
//! tick. Its held bundles count that tick in the relay lag, and a log line
//! says when a shard is taken late or on time.

use super::aoi::Relayed;
use mino_protocol::ShardId;
use std::collections::HashMap;

/// Ticks running that a shard's steps must keep the other parity before
/// it is taken late or on time again (1 s at the default 20 Hz: bundles
/// arriving bunched, a tick ahead then behind, do not flip it).
pub(crate) const SWITCH_AFTER: u16 = 20;

/// Whether one shard is taken late, and how long its steps have asked
/// for the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Lag {
    /// Its bundles are taken a tick late.
    late: bool,
    /// Ticks running its steps asked for the other.
    against: u16,
    /// Set by a first step.
    set: bool,
}

impl Lag {
    /// Its bundles are taken a tick late.
    pub(crate) fn is_late(&self) -> bool {
        self.late
    }

    /// This tick's steps: `own` this shard's, `theirs` the newest heard
    /// from the shard. Returns true when it changed (its first step sets it
    /// with no change).
    pub(crate) fn observe(&mut self, own: u64, theirs: u64) -> bool {
        let wanted = (own ^ theirs) & 1 == 0;
        if !self.set {
            *self = Lag { late: wanted, against: 0, set: true };
            return false;
        }
        if wanted == self.late {
            self.against = 0;
            return false;
        }
        self.against += 1;
        if self.against < SWITCH_AFTER {
            return false;
        }
        *self = Lag { late: wanted, against: 0, set: true };
        true
    }
}

/// Every other shard's lag, and the bundles held back.
#[derive(Debug, Default)]
pub(crate) struct RelayLag {
    lags: HashMap<ShardId, Lag>,
    /// Late shards' bundles that came since the last tick.
    waiting: Vec<Relayed>,
    /// Late shards' bundles that came before the last tick: taken at the
    /// start of the next one.
    ready: Vec<Relayed>,
}

impl RelayLag {
    /// Holds `bundle` when its shard is late (it is released at the start
    /// of the tick after next, [`RelayLag::tick`]) and returns `None`;
    /// else returns it, to be taken now.
    pub(crate) fn hold(&mut self, bundle: Relayed) -> Option<Relayed> {
        if self.lags.get(&bundle.stamp.shard).is_some_and(Lag::is_late) {
            self.waiting.push(bundle);
            return None;
        }
        Some(bundle)
    }

    /// The start of a tick whose step is `own`, `heard` the newest step
    /// heard from each other shard: each shard's lag takes it, and the
    /// bundles to take now come into `out` in the order they came (those
    /// that waited a tick, and every one held of a shard now on time).
    pub(crate) fn tick(&mut self, own: u64, heard: impl Iterator<Item = (ShardId, u64)>, out: &mut Vec<Relayed>) {
        let mut on_time = Vec::new();
        for (shard, step) in heard {
            let lag = self.lags.entry(shard).or_default();
            let first = !lag.set;
            if lag.observe(own, step) || first && lag.is_late() {
                let late = lag.is_late();
                tracing::info!(
                    shard = %shard,
                    late,
                    "shard {shard}'s bundles are taken {} (its steps now run {} with ours)",
                    if late { "a tick late" } else { "as they come" },
                    if late { "even" } else { "odd" }
                );
                if !late {
                    on_time.push(shard);
                }
            }
        }
        out.clear();
        out.append(&mut self.ready);
        if on_time.is_empty() {
            self.ready.append(&mut self.waiting);
        } else {
            for b in self.waiting.drain(..) {
                if on_time.contains(&b.stamp.shard) {
                    out.push(b);
                } else {
                    self.ready.push(b);
                }
            }
        }
    }

    /// `shard` left (or restarted): its lag and held bundles are dropped;
    /// returns how many bundles were.
    pub(crate) fn forget(&mut self, shard: ShardId) -> u64 {
        self.lags.remove(&shard);
        let held = self.waiting.len() + self.ready.len();
        self.waiting.retain(|b| b.stamp.shard != shard);
        self.ready.retain(|b| b.stamp.shard != shard);
        (held - self.waiting.len() - self.ready.len()) as u64
    }

    /// Whether `shard` is taken late (tests).
    #[cfg(test)]
    pub(crate) fn is_late(&self, shard: ShardId) -> bool {
        self.lags.get(&shard).is_some_and(Lag::is_late)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use mino_protocol::view::FrameStamp;
    use mino_protocol::Tick;

    fn bundle(shard: u32, step: u64) -> Relayed {
        let stamp = FrameStamp { shard: ShardId(shard), tick: Tick(step), server_time_ms: 0 };
        Relayed { stamp, step, items: Bytes::new(), cells: Vec::new() }
    }

    #[test]
    fn steps_even_with_ours_are_late_and_the_lag_changes_after_a_second_of_the_other_parity() {
        let mut lag = Lag::default();
        assert!(!lag.observe(100, 100), "the first step sets it, with nothing to tell");
        assert!(lag.is_late());
        let mut odd = Lag::default();
        odd.observe(100, 57);
        assert!(!odd.is_late(), "steps a tick apart fall between ours already");
        // Bunched bundles: a tick ahead, then even again.
        for own in 101..200 {
            let theirs = if own % 3 == 0 { own + 1 } else { own };
            assert!(!lag.observe(own, theirs), "step {own}");
        }
        // Their steps now run odd with ours: it changes once.
        let changes: Vec<u64> = (200..300).filter(|&own| lag.observe(own, own - 1)).collect();
        assert_eq!(changes, [200 + u64::from(SWITCH_AFTER) - 1]);
        assert!(!lag.is_late());
    }

    #[test]
    fn a_late_shards_bundles_are_taken_a_tick_later_in_order_and_all_at_once_when_it_is_on_time() {
        let mut relay = RelayLag::default();
        let mut out = Vec::new();
        let steps = |out: &Vec<Relayed>| out.iter().map(|b| (b.stamp.shard.0, b.step)).collect::<Vec<_>>();
        // Shard 2 runs even with us (its step t heard before our step t),
        // shard 3 odd.
        relay.tick(10, [(ShardId(2), 10), (ShardId(3), 9)].into_iter(), &mut out);
        assert!(relay.is_late(ShardId(2)) && !relay.is_late(ShardId(3)));
        for own in 11..=13 {
            assert!(relay.hold(bundle(2, own)).is_none(), "shard 2's bundle waits");
            assert!(relay.hold(bundle(3, own - 1)).is_some(), "shard 3's is taken now");
            relay.tick(own, [(ShardId(2), own), (ShardId(3), own - 1)].into_iter(), &mut out);
            // At step 11 nothing had waited a tick yet; then each came a tick late.
            let want: Vec<(u32, u64)> = if own == 11 { vec![] } else { vec![(2, own - 1)] };
            assert_eq!(steps(&out), want, "step {own}");
            assert!(relay.is_late(ShardId(2)), "step {own}");
        }
        // Shard 2's relay gets a tick slower: nothing from it before our step
        // 14, then its step t - 1 before our t, odd with ours. After
        // SWITCH_AFTER ticks of that it is on time, what it held comes at
        // once, and each of its steps was taken once, in order.
        let end = 14 + u64::from(SWITCH_AFTER) + 2;
        let (mut taken, mut switched) = (Vec::new(), None);
        for own in 14..end {
            if own > 14 {
                if let Some(b) = relay.hold(bundle(2, own - 1)) {
                    taken.push(b.step);
                }
            }
            relay.tick(own, [(ShardId(2), 13.max(own - 1)), (ShardId(3), own - 1)].into_iter(), &mut out);
            taken.extend(out.iter().map(|b| b.step));
            if switched.is_none() && !relay.is_late(ShardId(2)) {
                switched = Some(own);
            }
        }
        assert_eq!(switched, Some(14 + u64::from(SWITCH_AFTER) - 1), "after SWITCH_AFTER ticks running");
        assert_eq!(taken, (13..end - 1).collect::<Vec<u64>>(), "each step once, in order, none left behind");
    }

    #[test]
    fn a_shard_that_leaves_drops_what_was_held_of_it() {
        let mut relay = RelayLag::default();
        let mut out = Vec::new();
        relay.tick(10, [(ShardId(2), 10)].into_iter(), &mut out);
        assert!(relay.hold(bundle(2, 11)).is_none());
        relay.tick(11, [(ShardId(2), 11)].into_iter(), &mut out);
        assert!(relay.hold(bundle(2, 12)).is_none());
        assert_eq!(relay.forget(ShardId(2)), 2, "one ready, one waiting");
        relay.tick(12, std::iter::empty(), &mut out);
        assert!(out.is_empty() && !relay.is_late(ShardId(2)));
        // Heard again (a restart): its first step sets its lag anew.
        assert!(relay.hold(bundle(2, 1)).is_some(), "taken as it comes until its lag is set");
    }
}
