//! Token-bucket rate limits for a player's inputs and chat lines, and for
//! control frames. The budget (rate and burst) is kept once for every socket;
//! each socket keeps only its bucket's level and when it was last topped up
//! (8 bytes).

use crate::clock::{Instant, Stamp};

/// A budget: up to `burst` tokens, refilled at `rate` a second.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    rate: f32,
    burst: f32,
}

impl Budget {
    /// `rate` tokens a second, at most `burst` at once.
    pub fn new(rate: f64, burst: f64) -> Budget {
        Budget { rate: rate as f32, burst: burst as f32 }
    }
}

/// One socket's bucket of a [`Budget`]. Pure: the caller passes `now`.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    tokens: f32,
    last: Stamp,
}

impl TokenBucket {
    /// A full bucket of `budget` at `now`.
    pub fn full(budget: &Budget, now: Instant) -> TokenBucket {
        TokenBucket { tokens: budget.burst, last: Stamp::of(now) }
    }

    /// Takes one token if there is one.
    pub fn try_take(&mut self, budget: &Budget, now: Instant) -> bool {
        let now = Stamp::of(now);
        let elapsed = now.since(self.last).as_secs_f32();
        self.last = self.last.max(now);
        self.tokens = (self.tokens + elapsed * budget.rate).min(budget.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn burst_then_refill_at_rate() {
        let t0 = Instant::now();
        let budget = Budget::new(10.0, 3.0);
        let mut b = TokenBucket::full(&budget, t0);
        assert!(b.try_take(&budget, t0) && b.try_take(&budget, t0) && b.try_take(&budget, t0));
        assert!(!b.try_take(&budget, t0));
        assert!(!b.try_take(&budget, t0 + Duration::from_millis(50)));
        assert!(b.try_take(&budget, t0 + Duration::from_millis(101)));
        // Refill never exceeds the burst.
        let later = t0 + Duration::from_secs(60);
        assert!((0..3).all(|_| b.try_take(&budget, later)));
        assert!(!b.try_take(&budget, later));
    }

    #[test]
    fn sustained_rate_is_allowed() {
        let t0 = Instant::now();
        let budget = Budget::new(30.0, 60.0);
        let mut b = TokenBucket::full(&budget, t0);
        // 30 a second for 10 seconds never runs dry.
        for i in 0..300u64 {
            assert!(b.try_take(&budget, t0 + Duration::from_micros(i * 33_334)), "message {i}");
        }
    }

    #[test]
    fn a_bucket_is_eight_bytes() {
        assert_eq!(std::mem::size_of::<TokenBucket>(), 8);
    }
}
