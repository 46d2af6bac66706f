//! The busy rule: whether this process may admit another player.
//!
//! Each tick reports how late it started (scheduled instant to actual start).
//! Lateness comes from the process's own work: the previous tick ran long, or
//! socket tasks kept the runtime's threads busy. While the mean lateness over the
//! last [`WINDOW_TICKS`] ticks is above the threshold the shard is busy; it stops
//! being busy when the mean falls below half the threshold (hysteresis, so it does
//! not flap). The player cap is a separate, hard rule. Pure: no clock reads.

use std::collections::VecDeque;
use std::time::Duration;

/// Ticks in the lateness window: one second at 20 Hz.
pub const WINDOW_TICKS: usize = 20;

/// Why a hello is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The player cap is reached.
    Full,
    /// Ticks start late: admitting more would make every tick slip.
    Overloaded,
    /// The shard is shutting down or draining.
    Draining,
    /// Clustered and no player id is available (Redis unreachable since start).
    Unavailable,
}

impl Refusal {
    /// Every refusal, for documentation tests.
    pub const ALL: [Refusal; 4] = [Refusal::Full, Refusal::Overloaded, Refusal::Draining, Refusal::Unavailable];

    /// The reason text sent in Busy and the `reason` label of
    /// `mino_busy_refusals_total`.
    pub fn label(self) -> &'static str {
        match self {
            Refusal::Full => "full",
            Refusal::Overloaded => "overloaded",
            Refusal::Draining => "draining",
            Refusal::Unavailable => "unavailable",
        }
    }
}

/// The admission state of one shard.
#[derive(Debug)]
pub struct Admission {
    max_players: u32,
    threshold: Option<Duration>,
    window: VecDeque<Duration>,
    sum: Duration,
    overloaded: bool,
    draining: bool,
}

impl Admission {
    /// `max_players` is the hard cap; `threshold` the mean lateness that makes the
    /// shard busy (`None`: only the cap applies).
    pub fn new(max_players: u32, threshold: Option<Duration>) -> Admission {
        Admission {
            max_players,
            threshold,
            window: VecDeque::with_capacity(WINDOW_TICKS),
            sum: Duration::ZERO,
            overloaded: false,
            draining: false,
        }
    }

    /// Records one tick's start lateness.
    pub fn record_lateness(&mut self, lateness: Duration) {
        if self.window.len() == WINDOW_TICKS {
            if let Some(old) = self.window.pop_front() {
                self.sum -= old;
            }
        }
        self.window.push_back(lateness);
        self.sum += lateness;
        let Some(threshold) = self.threshold else {
            return;
        };
        let mean = self.mean_lateness();
        if mean > threshold {
            self.overloaded = true;
        } else if mean < threshold / 2 {
            self.overloaded = false;
        }
    }

    /// Mean lateness over the window (zero before any tick).
    pub fn mean_lateness(&self) -> Duration {
        match self.window.len() {
            0 => Duration::ZERO,
            n => self.sum / n as u32,
        }
    }

    /// Stops all admissions from now on (shutdown or drain).
    pub fn set_draining(&mut self) {
        self.draining = true;
    }

    /// True once [`Admission::set_draining`] was called.
    pub fn is_draining(&self) -> bool {
        self.draining
    }

    /// True while the lateness rule refuses players.
    pub fn is_overloaded(&self) -> bool {
        self.overloaded
    }

    /// May one more player join, given `players` present now?
    pub fn check(&self, players: usize) -> Result<(), Refusal> {
        if self.draining {
            Err(Refusal::Draining)
        } else if players >= self.max_players as usize {
            Err(Refusal::Full)
        } else if self.overloaded {
            Err(Refusal::Overloaded)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn cap_is_hard() {
        let a = Admission::new(2, None);
        assert_eq!(a.check(1), Ok(()));
        assert_eq!(a.check(2), Err(Refusal::Full));
    }

    #[test]
    fn sustained_lateness_makes_busy_and_recovery_needs_half() {
        let mut a = Admission::new(100, Some(10 * MS));
        for _ in 0..WINDOW_TICKS {
            a.record_lateness(2 * MS);
        }
        assert_eq!(a.check(0), Ok(()));
        for _ in 0..WINDOW_TICKS {
            a.record_lateness(30 * MS);
        }
        assert_eq!(a.check(0), Err(Refusal::Overloaded));
        // Mean of 7 ms is under the threshold but above half of it: still busy.
        for _ in 0..WINDOW_TICKS {
            a.record_lateness(7 * MS);
        }
        assert!(a.is_overloaded());
        for _ in 0..WINDOW_TICKS {
            a.record_lateness(MS);
        }
        assert_eq!(a.check(0), Ok(()));
    }

    #[test]
    fn one_late_tick_in_a_window_does_not_make_busy() {
        let mut a = Admission::new(100, Some(10 * MS));
        for _ in 0..WINDOW_TICKS - 1 {
            a.record_lateness(MS);
        }
        a.record_lateness(100 * MS);
        assert_eq!(a.mean_lateness(), (19 + 100) * MS / 20);
        assert_eq!(a.check(0), Ok(()));
    }

    #[test]
    fn window_slides() {
        let mut a = Admission::new(100, Some(10 * MS));
        for _ in 0..WINDOW_TICKS {
            a.record_lateness(50 * MS);
        }
        for _ in 0..WINDOW_TICKS {
            a.record_lateness(Duration::ZERO);
        }
        assert_eq!(a.mean_lateness(), Duration::ZERO);
        assert!(!a.is_overloaded());
    }

    #[test]
    fn rule_off_ignores_lateness() {
        let mut a = Admission::new(100, None);
        for _ in 0..WINDOW_TICKS {
            a.record_lateness(500 * MS);
        }
        assert_eq!(a.check(0), Ok(()));
    }

    #[test]
    fn draining_refuses_everyone() {
        let mut a = Admission::new(100, None);
        a.set_draining();
        assert_eq!(a.check(0), Err(Refusal::Draining));
    }
}
