//! The shard's one clock. Every module reads time here, so tests can pause it.
//!
//! - Monotonic time is tokio's ([`Instant`], [`now`]): under
//!   `#[tokio::test(start_paused = true)]` it stands still until the test
//!   advances it, and every timeout, interval and rate limit follows.
//! - Wall time ([`wall_ms`]) is milliseconds since the Unix epoch. It is only
//!   ever written into frames and Redis for people and peers to read (server
//!   time in a snapshot, a ticket's issue time); no decision of this process
//!   compares two wall times taken on different machines.
//!
//! The tick's own periodic timer ([`crate::tick`]) uses the kernel's
//! monotonic clock (a `timerfd`) on Linux for precision; it reports its
//! instants in this module's [`Instant`].

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A monotonic instant (tokio's, so paused-time tests control it).
pub type Instant = tokio::time::Instant;

/// Now, monotonic.
pub fn now() -> Instant {
    Instant::now()
}

/// Sleeps until `at`, or forever when it is `None` (a `select!` branch for
/// a deadline that may not be set).
pub async fn sleep_until_or_never(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Now, wall clock: milliseconds since the Unix epoch (0 if the system clock
/// reads before 1970).
pub fn wall_ms() -> u64 {
    since_epoch().as_millis() as u64
}

/// Now, wall clock: the time since the Unix epoch, to the nanosecond the
/// system gives (zero if the system clock reads before 1970).
pub fn since_epoch() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO)
}

/// An instant to the millisecond in four bytes, for state kept per socket:
/// milliseconds since this process's clock epoch (an hour before its first
/// stamp, so instants taken a little earlier stamp apart), wrapping after
/// about 49.7 days. Two stamps compare correctly when they are less
/// than about 24.8 days apart ([`Stamp::since`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp(u32);

static EPOCH: OnceLock<Instant> = OnceLock::new();

impl Stamp {
    /// The stamp of `at` (an instant before the epoch stamps as the epoch).
    pub fn of(at: Instant) -> Stamp {
        let epoch = *EPOCH.get_or_init(|| at.checked_sub(Duration::from_secs(3600)).unwrap_or(at));
        Stamp(at.saturating_duration_since(epoch).as_millis() as u32)
    }

    /// Time from `earlier` to this stamp; zero if `earlier` is in fact later.
    pub fn since(self, earlier: Stamp) -> Duration {
        let d = self.0.wrapping_sub(earlier.0);
        if d > u32::MAX / 2 {
            Duration::ZERO
        } else {
            Duration::from_millis(u64::from(d))
        }
    }

    /// This stamp moved `d` later (to the millisecond).
    pub fn after(self, d: Duration) -> Stamp {
        Stamp(self.0.wrapping_add(d.as_millis() as u32))
    }

    /// This stamp moved `d` earlier (to the millisecond).
    pub fn before(self, d: Duration) -> Stamp {
        Stamp(self.0.wrapping_sub(d.as_millis() as u32))
    }

    /// The later of the two.
    pub fn max(self, other: Stamp) -> Stamp {
        if other.since(self) > Duration::ZERO {
            other
        } else {
            self
        }
    }

    /// The earlier of the two.
    pub fn min(self, other: Stamp) -> Stamp {
        if other.since(self) > Duration::ZERO {
            self
        } else {
            other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn monotonic_time_is_tokios_and_can_be_paused() {
        let start = now();
        tokio::time::advance(Duration::from_secs(3)).await;
        assert_eq!(now() - start, Duration::from_secs(3));
    }

    #[test]
    fn stamps_measure_to_the_millisecond_and_survive_the_wrap() {
        let t0 = now();
        let a = Stamp::of(t0 + Duration::from_millis(1500));
        let b = Stamp::of(t0 + Duration::from_millis(4250));
        assert_eq!(b.since(a), Duration::from_millis(2750));
        assert_eq!(a.since(b), Duration::ZERO, "never negative");
        assert_eq!(a.max(b), b);
        assert_eq!((a.min(b), b.min(a)), (a, a));
        let near_wrap = Stamp(u32::MAX - 10);
        assert_eq!(near_wrap.after(Duration::from_millis(30)).since(near_wrap), Duration::from_millis(30));
    }

    #[test]
    fn wall_time_is_after_2020() {
        assert!(wall_ms() > 1_577_836_800_000);
    }
}
