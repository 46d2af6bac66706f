//! Fencing: a clustered shard that may have been taken for dead publishes
//! nothing until Redis has said which of its players were resumed elsewhere
//! meanwhile (and it has dropped them). So a woken shard never brings back a
//! player that lives on another shard.
//!
//! A shard may have been taken for dead when its ticks stalled longer than
//! half the shard TTL (a frozen process, a long pause) or when Redis was out of
//! its reach that long (its heartbeat may have expired). While fenced, what it
//! would publish is held, in order, up to [`HELD_MAX`] frames; the overflow is
//! dropped and counted. Once the check answers, the held frames go out.

use super::output::Outgoing;
use crate::clock::Instant;
use std::time::Duration;

/// Most frames a fenced shard holds back; later ones are dropped (counted).
pub const HELD_MAX: usize = 10_000;

/// The fence state of one shard.
#[derive(Debug)]
pub(crate) struct Fence {
    /// Longest tick gap or Redis outage that cannot have made the shard look
    /// dead (half the shard TTL).
    stall: Duration,
    fenced: bool,
    held: Vec<Outgoing>,
    last_tick: Option<Instant>,
    redis_down_since: Option<Instant>,
}

/// What [`Fence::hold`] did with a frame.
#[derive(Debug, PartialEq)]
pub(crate) enum Gate {
    /// Not fenced: publish it now.
    Pass(Outgoing),
    /// Held until the fence lifts.
    Held,
    /// Fenced and the held queue is full: dropped.
    Dropped,
}

impl Fence {
    pub(crate) fn new(stall: Duration) -> Fence {
        Fence { stall, fenced: false, held: Vec::new(), last_tick: None, redis_down_since: None }
    }

    /// True while publishing is held back.
    pub(crate) fn is_fenced(&self) -> bool {
        self.fenced
    }

    /// Observes a tick starting at `now` with Redis up or not; true when the
    /// shard must fence itself now (it was not fenced and may have looked dead).
    pub(crate) fn on_tick(&mut self, now: Instant, redis_up: bool) -> bool {
        let stalled = self.last_tick.is_some_and(|t| now.saturating_duration_since(t) > self.stall);
        self.last_tick = Some(now);
        let was_cut_off = if redis_up {
            self.redis_down_since.take().is_some_and(|since| now.saturating_duration_since(since) > self.stall)
        } else {
            self.redis_down_since.get_or_insert(now);
            false
        };
        if stalled {
            tracing::warn!("ticks stalled; checking which players are still ours");
        } else if was_cut_off {
            tracing::warn!("redis was out of reach; checking which players are still ours");
        }
        (stalled || was_cut_off) && self.fence()
    }

    /// Fences; true if it was not fenced already.
    pub(crate) fn fence(&mut self) -> bool {
        !std::mem::replace(&mut self.fenced, true)
    }

    /// Passes `frame` through, or holds it while fenced.
    pub(crate) fn hold(&mut self, frame: Outgoing) -> Gate {
        if !self.fenced {
            Gate::Pass(frame)
        } else if self.held.len() < HELD_MAX {
            self.held.push(frame);
            Gate::Held
        } else {
            Gate::Dropped
        }
    }

    /// Lifts the fence; returns the held frames in order.
    pub(crate) fn lift(&mut self) -> Vec<Outgoing> {
        self.fenced = false;
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    const STALL: Duration = Duration::from_millis(1500);
    const TICK: Duration = Duration::from_millis(50);

    fn chat(n: u8) -> Outgoing {
        Outgoing::Chat(Bytes::from(vec![n]))
    }

    #[test]
    fn regular_ticks_never_fence() {
        let mut f = Fence::new(STALL);
        let t0 = Instant::now();
        for i in 0..100 {
            assert!(!f.on_tick(t0 + TICK * i, true));
        }
        assert_eq!(f.hold(chat(1)), Gate::Pass(chat(1)));
    }

    #[test]
    fn a_stall_past_half_the_ttl_fences_once_and_holds_in_order() {
        let mut f = Fence::new(STALL);
        let t0 = Instant::now();
        assert!(!f.on_tick(t0, true));
        assert!(f.on_tick(t0 + STALL + TICK, true), "stalled");
        assert!(!f.on_tick(t0 + (STALL + TICK) * 3, true), "already fenced");
        assert_eq!(f.hold(chat(1)), Gate::Held);
        assert_eq!(f.hold(chat(2)), Gate::Held);
        assert_eq!(f.lift(), [chat(1), chat(2)]);
        assert!(!f.is_fenced());
        assert_eq!(f.hold(chat(3)), Gate::Pass(chat(3)));
    }

    #[test]
    fn redis_out_of_reach_past_half_the_ttl_fences_when_it_comes_back() {
        let mut f = Fence::new(STALL);
        let t0 = Instant::now();
        assert!(!f.on_tick(t0, false));
        assert!(!f.on_tick(t0 + TICK, false), "still down: nothing to check with");
        assert!(!f.on_tick(t0 + STALL / 2, true), "a short outage is harmless");
        assert!(!f.on_tick(t0 + STALL / 2 + TICK, false));
        let mut t = t0 + STALL / 2 + TICK;
        while t < t0 + STALL * 3 {
            t += TICK;
            assert!(!f.on_tick(t, false));
        }
        assert!(f.on_tick(t + TICK, true), "back after a long outage");
    }

    #[test]
    fn the_held_queue_is_bounded() {
        let mut f = Fence::new(STALL);
        assert!(f.fence());
        for i in 0..HELD_MAX {
            assert_eq!(f.hold(chat(i as u8)), Gate::Held);
        }
        assert_eq!(f.hold(chat(0)), Gate::Dropped);
        assert_eq!(f.lift().len(), HELD_MAX);
    }
}
