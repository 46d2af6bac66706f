//! Drain pacing: a draining shard tells its players to move to another shard
//! at `--drain-rate` a second, a tick's share at a time (the fractions carried
//! from tick to tick: 1 a second at 20 Hz is one every 20th tick, 30 a second
//! one and two in turn), so the shards that take them are not stampeded. The
//! first is told at once. Each player is told once.

use mino_protocol::PlayerId;
use std::collections::HashSet;

/// The drain of one shard, once started.
#[derive(Debug)]
pub(crate) struct Drain {
    /// Moves a tick, in 1/`tick_hz` of a move: `rate`.
    rate: u64,
    tick_hz: u64,
    /// Moves earned and not made, in 1/`tick_hz` of a move (a tick's share
    /// of the rate each tick; the first tick's share is at least a whole one).
    credit: u64,
    moved: HashSet<PlayerId>,
    emptied: bool,
}

impl Drain {
    /// A drain moving `rate` players a second at `tick_hz` ticks a second.
    pub(crate) fn new(rate: u32, tick_hz: u16) -> Drain {
        let tick_hz = u64::from(tick_hz.max(1));
        let rate = u64::from(rate);
        Drain { rate, tick_hz, credit: rate.max(tick_hz), moved: HashSet::new(), emptied: false }
    }

    /// Of `present` players, the ones to move this tick (marked as moved).
    pub(crate) fn due(&mut self, present: impl Iterator<Item = PlayerId>) -> Vec<PlayerId> {
        // The first tick's share is in `credit` already; later ticks earn
        // their share (the credit is capped at a tick's share, or one move,
        // and the fraction of one more: a drain with nobody left to move
        // banks no burst).
        let whole = usize::try_from(self.credit / self.tick_hz).unwrap_or(usize::MAX);
        let due: Vec<PlayerId> = present.filter(|p| !self.moved.contains(p)).take(whole).collect();
        self.credit -= due.len() as u64 * self.tick_hz;
        self.credit = (self.credit + self.rate).min(self.rate.max(self.tick_hz) + self.tick_hz - 1);
        self.moved.extend(due.iter().copied());
        due
    }

    /// `player` is gone or came back (a resume into this shard): it may be
    /// moved again.
    pub(crate) fn forget(&mut self, player: PlayerId) {
        self.moved.remove(&player);
    }

    /// True the first time it is called with `players == 0`.
    pub(crate) fn emptied(&mut self, players: usize) -> bool {
        players == 0 && !std::mem::replace(&mut self.emptied, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_a_ticks_share_of_the_rate_and_each_player_once() {
        let mut d = Drain::new(200, 20);
        let present: Vec<PlayerId> = (1..=25).map(PlayerId).collect();
        let first = d.due(present.iter().copied());
        assert_eq!(first.len(), 10, "200/s at 20 Hz");
        let second = d.due(present.iter().copied());
        assert_eq!(second.len(), 10);
        assert!(second.iter().all(|p| !first.contains(p)));
        assert_eq!(d.due(present.iter().copied()).len(), 5);
        assert!(d.due(present.iter().copied()).is_empty());
    }

    #[test]
    fn a_rate_below_the_tick_rate_is_kept_and_a_returning_player_is_moved_again() {
        // 1 a second at 20 Hz: the first at once, the next 20 ticks later.
        let mut d = Drain::new(1, 20);
        let present = || (1..=3).map(PlayerId);
        let moved: Vec<usize> = (0..41).map(|_| d.due(present()).len()).collect();
        let at: Vec<usize> = moved.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, _)| i).collect();
        assert_eq!(at, [0, 20, 40], "{moved:?}");
        let mut d = Drain::new(1, 20);
        assert_eq!(d.due([PlayerId(1), PlayerId(2)].into_iter()), [PlayerId(1)]);
        d.forget(PlayerId(1));
        for _ in 0..19 {
            assert!(d.due([PlayerId(1)].into_iter()).is_empty());
        }
        assert_eq!(d.due([PlayerId(1)].into_iter()), [PlayerId(1)]);
    }

    #[test]
    fn fractions_of_a_move_a_tick_are_carried() {
        // 30 a second at 20 Hz: 1.5 a tick, 30 in the first second.
        let mut d = Drain::new(30, 20);
        let present: Vec<PlayerId> = (1..=100).map(PlayerId).collect();
        let in_a_second: usize = (0..20).map(|_| d.due(present.iter().copied()).len()).sum();
        assert!((29..=31).contains(&in_a_second), "{in_a_second}");
        // Nobody left for a while banks no burst: at most a tick's share.
        let mut d = Drain::new(30, 20);
        for _ in 0..100 {
            d.due(std::iter::empty());
        }
        assert_eq!(d.due(present.iter().copied()).len(), 2, "30 a second: 1.5 a tick, rounded up");
        let mut d = Drain::new(200, 20);
        for _ in 0..100 {
            d.due(std::iter::empty());
        }
        assert_eq!(d.due(present.iter().copied()).len(), 10, "200 a second: 10 a tick, not 201");
    }

    #[test]
    fn emptied_is_reported_once() {
        let mut d = Drain::new(10, 20);
        assert!(!d.emptied(3));
        assert!(d.emptied(0));
        assert!(!d.emptied(0));
    }
}
