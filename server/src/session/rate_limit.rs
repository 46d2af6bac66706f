//! Token-bucket rate limits for a player's inputs and chat lines.

use crate::clock::Instant;

/// A token bucket: holds up to `burst` tokens, refilled at `rate` a second.
/// Pure: the caller passes `now`.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    burst: f64,
    rate: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket of `burst` tokens refilled at `rate` tokens per second.
    pub fn new(rate: f64, burst: f64, now: Instant) -> TokenBucket {
        TokenBucket { burst, rate, tokens: burst, last: now }
    }

    /// Takes one token if there is one.
    pub fn try_take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
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
        let mut b = TokenBucket::new(10.0, 3.0, t0);
        assert!(b.try_take(t0) && b.try_take(t0) && b.try_take(t0));
        assert!(!b.try_take(t0));
        assert!(!b.try_take(t0 + Duration::from_millis(50)));
        assert!(b.try_take(t0 + Duration::from_millis(101)));
        // Refill never exceeds the burst.
        let later = t0 + Duration::from_secs(60);
        assert!((0..3).all(|_| b.try_take(later)));
        assert!(!b.try_take(later));
    }

    #[test]
    fn sustained_rate_is_allowed() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(30.0, 60.0, t0);
        // 30 a second for 10 seconds never runs dry.
        for i in 0..300u64 {
            assert!(b.try_take(t0 + Duration::from_micros(i * 33_334)), "message {i}");
        }
    }
}
