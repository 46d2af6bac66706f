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

use std::time::{SystemTime, UNIX_EPOCH};

/// A monotonic instant (tokio's, so paused-time tests control it).
pub type Instant = tokio::time::Instant;

/// Now, monotonic.
pub fn now() -> Instant {
    Instant::now()
}

/// Now, wall clock: milliseconds since the Unix epoch (0 if the system clock
/// reads before 1970).
pub fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
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
    fn wall_time_is_after_2020() {
        assert!(wall_ms() > 1_577_836_800_000);
    }
}
