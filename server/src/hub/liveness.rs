//! When to ping a peer and when its silence ends the session, decided from
//! instants the caller passes (no clock read, no I/O).
//!
//! A peer is silent when nothing (not even a pong) was heard from it for the
//! peer timeout, counting only the time this process was awake to hear it. A
//! process that was stalled (SIGSTOP, a long pause of the machine, a VM
//! migration) heard nothing and pinged nobody meanwhile, so its idle players
//! had no reason to speak: the stall is not their silence. The periodic
//! sweep over every peer notices a stall as a sweep that comes much later
//! than its period; the stalled time is then not counted, every peer is
//! pinged at once and given at least the peer timeout divided by
//! [`ANSWER_SHARE`] (a half) to answer.
//!
//! The settings and the sweep's clock are kept once ([`Liveness`]); each peer
//! keeps only two millisecond stamps ([`Heard`], 8 bytes).

use crate::clock::{Instant, Stamp};
use std::time::Duration;

/// A sweep this much later than its period means the process was stalled;
/// shorter delays are ordinary scheduling.
pub const STALL_MIN: Duration = Duration::from_millis(200);

/// After a stall, the peer has at least the peer timeout divided by this
/// (2: a half of it) to answer the ping sent at once.
pub const ANSWER_SHARE: u32 = 2;

/// What a periodic check asks of the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Nothing to do.
    Fine,
    /// Send a ping (with the next tick's write).
    Ping,
    /// The peer was silent for the peer timeout: close it.
    Silent,
}

/// The settings and the clock of the sweeps, one for every peer.
#[derive(Clone, Debug)]
pub struct Liveness {
    ping_interval: Duration,
    peer_timeout: Duration,
    /// The period of the sweeps.
    period: Duration,
    last_sweep: Instant,
}

/// One sweep: when it runs and how long the process was stalled before it.
#[derive(Clone, Copy, Debug)]
pub struct Sweep {
    now: Instant,
    stalled: Option<Duration>,
}

impl Sweep {
    /// How long the process was stalled before this sweep, if it was.
    pub fn stalled(&self) -> Option<Duration> {
        self.stalled
    }
}

/// What one peer keeps: when it was last heard from and last pinged.
#[derive(Clone, Copy, Debug)]
pub struct Heard {
    last_heard: Stamp,
    last_ping: Stamp,
}

impl Heard {
    /// A peer heard from at `now`.
    pub fn new(now: Instant) -> Heard {
        let now = Stamp::of(now);
        Heard { last_heard: now, last_ping: now }
    }

    /// Something (a message, a control frame) arrived from the peer at `now`.
    pub fn heard(&mut self, now: Instant) {
        self.last_heard = self.last_heard.max(Stamp::of(now));
    }
}

impl Liveness {
    /// Settings: a ping every `ping_interval`, silence ends a peer after
    /// `peer_timeout`; the caller sweeps every `period`, the first time one
    /// period after `now`.
    pub fn new(ping_interval: Duration, peer_timeout: Duration, period: Duration, now: Instant) -> Liveness {
        Liveness { ping_interval, peer_timeout, period, last_sweep: now }
    }

    /// True when a sweep is due at `now`.
    pub fn due(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.last_sweep) >= self.period
    }

    /// Starts the sweep at `now` (the instant it runs, not the one it was due
    /// at: a stall shows as a sweep far later than its period).
    pub fn sweep(&mut self, now: Instant) -> Sweep {
        let gap = now.saturating_duration_since(self.last_sweep);
        self.last_sweep = self.last_sweep.max(now);
        let stalled = gap.saturating_sub(self.period);
        Sweep { now, stalled: (stalled >= STALL_MIN).then_some(stalled) }
    }

    /// One peer's verdict in `sweep`: after a stall, the stalled time is not
    /// silence and the peer is pinged at once; otherwise a silent peer ends,
    /// and a ping is due every `ping_interval`.
    pub fn check(&self, sweep: &Sweep, peer: &mut Heard) -> Check {
        let now = Stamp::of(sweep.now);
        if let Some(stalled) = sweep.stalled {
            // Not silent for the stalled time, and at least half the timeout
            // left to answer the ping sent now.
            let shifted = peer.last_heard.after(stalled);
            let heard = shifted.min(now);
            let floor_ago = self.peer_timeout - self.peer_timeout / ANSWER_SHARE;
            let silent_for = now.since(heard).min(floor_ago);
            peer.last_heard = now.before(silent_for);
            peer.last_ping = now;
            return Check::Ping;
        }
        if now.since(peer.last_heard) > self.peer_timeout {
            return Check::Silent;
        }
        if now.since(peer.last_ping) >= self.ping_interval {
            peer.last_ping = now;
            return Check::Ping;
        }
        Check::Fine
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PING: Duration = Duration::from_millis(200);
    const TIMEOUT: Duration = Duration::from_millis(1000);
    const PERIOD: Duration = Duration::from_millis(200);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// One peer and the sweeps' clock, as the hub keeps them.
    struct One {
        l: Liveness,
        peer: Heard,
    }

    impl One {
        fn new(ping: Duration, t0: Instant) -> One {
            One { l: Liveness::new(ping, TIMEOUT, PERIOD, t0), peer: Heard::new(t0) }
        }

        fn check(&mut self, now: Instant) -> Check {
            let sweep = self.l.sweep(now);
            self.l.check(&sweep, &mut self.peer)
        }

        fn heard(&mut self, now: Instant) {
            self.peer.heard(now);
        }
    }

    /// Checks every period from `from` (exclusive) to `to` (inclusive); the
    /// verdicts in order.
    fn run(l: &mut One, t0: Instant, from: u64, to: u64) -> Vec<Check> {
        (from / 200 + 1..=to / 200).map(|k| l.check(t0 + ms(k * 200))).collect()
    }

    #[test]
    fn a_peer_that_answers_is_pinged_every_interval_and_stays() {
        let t0 = Instant::now();
        let mut l = One::new(PING, t0);
        for k in 1..=50u64 {
            let now = t0 + ms(k * 200);
            assert_eq!(l.check(now), Check::Ping, "check {k}");
            l.heard(now + ms(5)); // the pong
        }
    }

    #[test]
    fn a_silent_peer_ends_after_the_timeout_not_before() {
        let t0 = Instant::now();
        let mut l = One::new(PING, t0);
        let verdicts = run(&mut l, t0, 0, 1200);
        assert_eq!(verdicts, [Check::Ping; 5].into_iter().chain([Check::Silent]).collect::<Vec<_>>());
    }

    #[test]
    fn a_stall_is_not_silence_and_the_peer_is_pinged_at_once() {
        let t0 = Instant::now();
        let mut l = One::new(PING, t0);
        l.check(t0 + ms(200));
        l.heard(t0 + ms(210));
        // Stopped for 5 s: the next check comes 5.2 s after the last one.
        let woke = t0 + ms(5400);
        assert_eq!(l.check(woke), Check::Ping, "pinged first");
        // It answers every ping within 20 ms, and is never silent.
        for k in 1..=15u64 {
            let now = woke + ms(k * 200);
            let verdict = l.check(now);
            assert_ne!(verdict, Check::Silent, "check {k} after the stall");
            if verdict == Check::Ping {
                l.heard(now + ms(20));
            }
        }
    }

    #[test]
    fn a_peer_heard_just_before_a_stall_is_not_dropped_right_after_it() {
        let t0 = Instant::now();
        let mut l = One::new(Duration::from_secs(5), t0);
        run(&mut l, t0, 0, 800);
        l.heard(t0 + ms(800));
        // Stopped 10 s; the pong to the ping sent on waking takes 450 ms.
        let woke = t0 + ms(11_000);
        assert_eq!(l.check(woke), Check::Ping);
        assert_eq!(l.check(woke + ms(200)), Check::Fine);
        assert_eq!(l.check(woke + ms(400)), Check::Fine);
        l.heard(woke + ms(450));
        assert!((3..=7).all(|k| l.check(woke + ms(k * 200)) == Check::Fine));
    }

    #[test]
    fn a_peer_still_silent_after_a_stall_ends_once_given_its_time() {
        let t0 = Instant::now();
        let mut l = One::new(PING, t0);
        // Silent for 900 ms of awake time, then stalled 3 s.
        run(&mut l, t0, 0, 800);
        let woke = t0 + ms(4000);
        assert_eq!(l.check(woke), Check::Ping);
        let after: Vec<Check> = (1..=5).map(|k| l.check(woke + ms(k * 200))).collect();
        let silent_at = after.iter().position(|c| *c == Check::Silent).expect("ends");
        let waited = ms((silent_at as u64 + 1) * 200);
        assert!(waited > TIMEOUT / ANSWER_SHARE, "given half the timeout to answer: {waited:?}");
    }

    #[test]
    fn ordinary_lateness_is_not_a_stall() {
        let t0 = Instant::now();
        let mut l = One::new(Duration::from_secs(60), t0);
        // Every check 150 ms late: silence still counts.
        let verdicts: Vec<Check> = (1..=4).map(|k| l.check(t0 + ms(k * 350))).collect();
        assert_eq!(verdicts.last(), Some(&Check::Silent), "{verdicts:?}");
    }
}
