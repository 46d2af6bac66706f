//! When to tell the operator that Redis cannot be reached: at the first
//! failed heartbeat (at start as after a loss: a shard started against a
//! wrong or down Redis said nothing and stayed unready), again once a
//! [`REPEAT`] while it stays unreachable, and once when it is back, with how
//! long it was gone. A heartbeat fails every interval while Redis is down;
//! a line each would flood the log.

use std::time::Duration;

/// Least time between two "still unreachable" lines.
pub const REPEAT: Duration = Duration::from_secs(60);

/// What a failed heartbeat should say, if anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Say {
    /// Nothing now (said less than [`REPEAT`] ago).
    Nothing,
    /// Unreachable before it was ever reached: the shard takes no players
    /// until it registers.
    NeverReached,
    /// Unreachable after it was reached: local play continues.
    Lost,
    /// Still unreachable: for this long, over this many failed heartbeats.
    Still {
        /// Since the first failure.
        down_for: Duration,
        /// Failed heartbeats so far.
        failures: u64,
    },
}

/// Redis's reachability as the heartbeats found it; times are offsets on
/// any monotonic clock the caller keeps (I/O-free: tested with made-up times).
#[derive(Clone, Debug, Default)]
pub struct Outage {
    ever_up: bool,
    /// (first failure, last line said, failures) while unreachable.
    down: Option<(Duration, Duration, u64)>,
}

impl Outage {
    /// A heartbeat failed at `now`.
    pub fn failed(&mut self, now: Duration) -> Say {
        match &mut self.down {
            None => {
                self.down = Some((now, now, 1));
                if self.ever_up {
                    Say::Lost
                } else {
                    Say::NeverReached
                }
            }
            Some((since, said, failures)) => {
                *failures += 1;
                if now.saturating_sub(*said) < REPEAT {
                    return Say::Nothing;
                }
                *said = now;
                Say::Still { down_for: now.saturating_sub(*since), failures: *failures }
            }
        }
    }

    /// A heartbeat succeeded at `now`: how long Redis was unreachable before
    /// (None: it was not).
    pub fn reached(&mut self, now: Duration) -> Option<Duration> {
        self.ever_up = true;
        self.down.take().map(|(since, _, _)| now.saturating_sub(since))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn the_first_failure_is_said_then_once_a_minute_then_the_return() {
        let mut o = Outage::default();
        assert_eq!(o.failed(S), Say::NeverReached, "a shard that never reached redis says so at once");
        assert_eq!(o.failed(2 * S), Say::Nothing);
        assert_eq!(o.failed(60 * S), Say::Nothing);
        assert_eq!(o.failed(61 * S), Say::Still { down_for: 60 * S, failures: 4 });
        assert_eq!(o.failed(62 * S), Say::Nothing);
        assert_eq!(o.reached(70 * S), Some(69 * S));
        assert_eq!(o.reached(71 * S), None);
        assert_eq!(o.failed(80 * S), Say::Lost, "after it was reached, a loss");
        assert_eq!(o.reached(81 * S), Some(S));
    }
}
