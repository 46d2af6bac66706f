//! A warning that repeats (an accept failing every 50 ms while descriptors
//! run out) logged as one line a window, with the count of failures it
//! stands for. Pure: the caller passes `now`.

use crate::clock::Instant;
use std::time::Duration;

/// Window of the accept-failure warnings: at most one line in it.
pub const WINDOW: Duration = Duration::from_secs(10);

/// Counts failures and says when a line is due.
#[derive(Clone, Debug)]
pub struct LogThrottle {
    window: Duration,
    /// When the next line may be written; `None` while nothing fails.
    next: Option<Instant>,
    /// Failures since the last line.
    unlogged: u64,
}

impl LogThrottle {
    /// At most one line every `window`.
    pub fn new(window: Duration) -> LogThrottle {
        LogThrottle { window, next: None, unlogged: 0 }
    }

    /// A failure at `now`. Returns the number of failures the line written
    /// now stands for (this one included), or `None` when no line is due:
    /// the first failure is logged at once, the rest once a window.
    pub fn failed(&mut self, now: Instant) -> Option<u64> {
        self.unlogged += 1;
        match self.next {
            Some(next) if now < next => None,
            _ => {
                self.next = Some(now + self.window);
                Some(std::mem::take(&mut self.unlogged))
            }
        }
    }

    /// When failures wait to be logged: the end of the window they fell in
    /// (a burst's later failures are said then, not at the next failure,
    /// which may never come); `None` when none wait.
    pub fn pending_until(&self) -> Option<Instant> {
        self.next.filter(|_| self.unlogged > 0)
    }

    /// At or after [`LogThrottle::pending_until`]: the failures not yet
    /// logged, for a line now (the next window starts now); `None` before,
    /// or when none wait.
    pub fn flush(&mut self, now: Instant) -> Option<u64> {
        let due = self.pending_until()?;
        if now < due {
            return None;
        }
        self.next = Some(now + self.window);
        Some(std::mem::take(&mut self.unlogged))
    }

    /// A success after failures: returns the failures not yet logged (for
    /// one last line) when the failures just ended, `None` otherwise.
    pub fn recovered(&mut self) -> Option<u64> {
        self.next.take()?;
        Some(std::mem::take(&mut self.unlogged))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_every_50_ms_is_one_line_a_window_with_its_count() {
        let t0 = Instant::now();
        let mut t = LogThrottle::new(WINDOW);
        let lines: Vec<(u64, u64)> =
            (0..=400u64).filter_map(|k| t.failed(t0 + Duration::from_millis(k * 50)).map(|n| (k * 50, n))).collect();
        // 20 s of failures: at 0, at 10 s (199 failures since), at 20 s (200).
        assert_eq!(lines, [(0, 1), (10_000, 200), (20_000, 200)]);
    }

    #[test]
    fn a_bursts_later_failures_are_said_at_the_end_of_its_window() {
        // 130 refusals in a burst, then none: the first is said at once,
        // the other 129 when the window ends, not at the next refusal.
        let t0 = Instant::now();
        let mut t = LogThrottle::new(WINDOW);
        assert_eq!(t.pending_until(), None);
        assert_eq!(t.failed(t0), Some(1));
        assert_eq!(t.pending_until(), None, "nothing waits");
        for k in 1..130 {
            assert_eq!(t.failed(t0 + Duration::from_millis(k)), None);
        }
        assert_eq!(t.pending_until(), Some(t0 + WINDOW));
        assert_eq!(t.flush(t0 + WINDOW - Duration::from_millis(1)), None, "not yet");
        assert_eq!(t.flush(t0 + WINDOW), Some(129));
        assert_eq!((t.pending_until(), t.flush(t0 + WINDOW * 3)), (None, None), "said once");
        // A failure within the new window waits for its end.
        assert_eq!(t.failed(t0 + WINDOW + Duration::from_secs(1)), None);
        assert_eq!(t.flush(t0 + WINDOW * 2), Some(1));
    }

    #[test]
    fn recovering_reports_the_unlogged_failures_once() {
        let t0 = Instant::now();
        let mut t = LogThrottle::new(WINDOW);
        assert_eq!(t.recovered(), None, "nothing failed");
        assert_eq!(t.failed(t0), Some(1));
        assert_eq!(t.failed(t0 + Duration::from_millis(50)), None);
        assert_eq!(t.failed(t0 + Duration::from_millis(100)), None);
        assert_eq!(t.recovered(), Some(2));
        assert_eq!(t.recovered(), None);
        assert_eq!(t.failed(t0 + Duration::from_millis(150)), Some(1), "a new episode logs at once");
    }
}
