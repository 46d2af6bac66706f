//! Drain pacing: a draining shard tells its players to move to another shard
//! a tick's share of `--drain-rate` at a time (at least one a tick), so the
//! shards that take them are not stampeded. Each player is told once.

use mino_protocol::PlayerId;
use std::collections::HashSet;

/// The drain of one shard, once started.
#[derive(Debug)]
pub(crate) struct Drain {
    per_tick: usize,
    moved: HashSet<PlayerId>,
    emptied: bool,
}

impl Drain {
    /// A drain moving `rate` players a second at `tick_hz` ticks a second.
    pub(crate) fn new(rate: u32, tick_hz: u16) -> Drain {
        Drain { per_tick: (rate / u32::from(tick_hz)).max(1) as usize, moved: HashSet::new(), emptied: false }
    }

    /// Of `present` players, the ones to move this tick (marked as moved).
    pub(crate) fn due(&mut self, present: impl Iterator<Item = PlayerId>) -> Vec<PlayerId> {
        let due: Vec<PlayerId> = present.filter(|p| !self.moved.contains(p)).take(self.per_tick).collect();
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
    fn a_slow_rate_still_moves_one_a_tick_and_a_returning_player_is_moved_again() {
        let mut d = Drain::new(1, 20);
        assert_eq!(d.due([PlayerId(1), PlayerId(2)].into_iter()), [PlayerId(1)]);
        d.forget(PlayerId(1));
        assert_eq!(d.due([PlayerId(1)].into_iter()), [PlayerId(1)]);
    }

    #[test]
    fn emptied_is_reported_once() {
        let mut d = Drain::new(10, 20);
        assert!(!d.emptied(3));
        assert!(d.emptied(0));
        assert!(!d.emptied(0));
    }
}
