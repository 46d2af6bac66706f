//! The longest freeze a bot sees: the longest gap between its own shard's
//! snapshots within each [`FREEZE_SPAN`] it is welcomed, one sample a span
//! ([`crate::stats::Metric::LongestFreeze`]). A snapshot gap's p99 says how
//! often frames are late; this says how long the worst wait of each player
//! was, which is what a player sees as others freezing and then jumping
//! (one lost TCP segment holds every later frame for a retransmission;
//! a lost datagram costs one tick).
//!
//! A span that a session's end cuts short is not recorded: its longest gap
//! would be over a shorter time than the others'.

use std::time::Duration;
use tokio::time::Instant;

/// The span each sample covers: 10 s.
pub const FREEZE_SPAN: Duration = Duration::from_secs(10);

/// One session's current span.
#[derive(Clone, Copy, Debug)]
pub struct Freeze {
    since: Instant,
    longest: Duration,
}

impl Freeze {
    /// A span starting at `now` (the Welcome).
    pub fn new(now: Instant) -> Freeze {
        Freeze { since: now, longest: Duration::ZERO }
    }

    /// A gap of `gap` ended at `now`. Returns the span's longest gap when
    /// this gap ends a span (the next one starts at `now`).
    pub fn gap(&mut self, gap: Duration, now: Instant) -> Option<Duration> {
        self.longest = self.longest.max(gap);
        if now.saturating_duration_since(self.since) < FREEZE_SPAN {
            return None;
        }
        let longest = self.longest;
        *self = Freeze::new(now);
        Some(longest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_a_span_its_longest_gap() {
        let t0 = Instant::now();
        let mut f = Freeze::new(t0);
        let ms = Duration::from_millis;
        let mut samples = Vec::new();
        // 50 ms gaps for 25 s, with one of 400 ms at 3 s and one of 250 ms at 12 s.
        let mut at = ms(0);
        while at < ms(25_000) {
            let gap = match at.as_millis() {
                3_000 => ms(400),
                12_000 => ms(250),
                _ => ms(50),
            };
            at += gap;
            samples.extend(f.gap(gap, t0 + at));
        }
        assert_eq!(samples, vec![ms(400), ms(250)], "two whole spans; the third is cut short");
    }
}
