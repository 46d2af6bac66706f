//! A session whose shard died without closing it: noticed by its silence.
//!
//! Over a websocket the dead process's kernel resets the TCP connection at
//! once. Over WebTransport nothing comes: a killed shard's UDP port just
//! stops answering, and QUIC notices only at its idle timeout (the bot's is
//! its join timeout, 10 s by default). That was long enough for the shard's
//! last snapshot in Redis, which a resume reads the player's position from,
//! to expire (twice the shard TTL): WebTransport bots resumed where they
//! were last welcomed rather than where they stood (`mino-loadgen failover
//! --transport webtransport`: all 20 bots of the killed shard misplaced,
//! their sockets closed 11 s after the kill; over websockets 2 ms and none).
//!
//! The rule, the browser's too (`client-web/src/net/silence.ts`): a session
//! that hears nothing for [`probe_after`] (five of its usual gaps between
//! messages, from [`MIN_PROBE_AFTER`] while frames come every tick up to
//! [`MAX_PROBE_AFTER`] in a still place, where the keep-alive's Pongs are all
//! that comes) sends a Ping; if nothing at all comes within [`ANSWER_WITHIN`]
//! of it, the shard is taken for dead and the session is closed and resumed
//! elsewhere. A live shard answers a Ping within a round trip, and a walking
//! place's frames come every 50 ms, so a live session is never that quiet.
//! I/O-free: the caller keeps the clock and sends the Ping.

use std::time::Duration;

/// Shortest silence that sends a Ping (five ticks at 20 Hz).
pub const MIN_PROBE_AFTER: Duration = Duration::from_millis(250);

/// Longest silence before a Ping: the browser's keep-alive interval (in a
/// still place the Ping is the one the keep-alive sends anyway).
pub const MAX_PROBE_AFTER: Duration = Duration::from_millis(2000);

/// How long after the Ping a shard that said nothing is taken for dead: a
/// few round trips of a poor mobile link, and more than TCP's 200 ms minimum
/// retransmission timeout twice over (a lost Ping or answer is resent).
pub const ANSWER_WITHIN: Duration = Duration::from_millis(1000);

/// Gaps the silence must pass, in units of the session's usual gap.
const GAPS: u32 = 5;

/// Weight of a new gap in the usual gap (an exponential mean).
const GAP_WEIGHT: f64 = 0.125;

/// The silence before a Ping for a session whose usual gap between messages
/// is `usual` (None: none seen yet).
pub fn probe_after(usual: Option<Duration>) -> Duration {
    usual.map_or(MAX_PROBE_AFTER, |g| (g * GAPS).clamp(MIN_PROBE_AFTER, MAX_PROBE_AFTER))
}

/// What the silence calls for now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing; look again at this offset.
    Wait(Duration),
    /// Send a Ping now (then look again at the offset given).
    Probe(Duration),
    /// Nothing came within [`ANSWER_WITHIN`] of the Ping: the shard is gone,
    /// silent this long.
    Dead(Duration),
}

/// One session's silence; times are offsets on the caller's monotonic clock.
#[derive(Clone, Debug)]
pub struct Silence {
    /// When something last came.
    last: Duration,
    /// The usual gap between messages, seconds.
    usual_s: Option<f64>,
    /// When the Ping of this silence was sent.
    probed: Option<Duration>,
}

impl Silence {
    /// A session that heard from its shard at `now` (its Welcome).
    pub fn new(now: Duration) -> Silence {
        Silence { last: now, usual_s: None, probed: None }
    }

    /// Something came at `now`: any message counts.
    pub fn heard(&mut self, now: Duration) {
        let gap = now.saturating_sub(self.last).as_secs_f64();
        // A silence that needed a Ping is not a usual gap.
        if self.probed.is_none() {
            self.usual_s = Some(self.usual_s.map_or(gap, |u| u + GAP_WEIGHT * (gap - u)));
        }
        self.last = now;
        self.probed = None;
    }

    /// The usual gap between messages (None before the second message).
    pub fn usual(&self) -> Option<Duration> {
        self.usual_s.map(Duration::from_secs_f64)
    }

    /// What to do at `now`.
    pub fn check(&mut self, now: Duration) -> Verdict {
        let quiet = now.saturating_sub(self.last);
        match self.probed {
            Some(at) if now >= at + ANSWER_WITHIN => Verdict::Dead(quiet),
            Some(at) => Verdict::Wait(at + ANSWER_WITHIN),
            None => {
                let due = self.last + probe_after(self.usual());
                if now >= due {
                    self.probed = Some(now);
                    Verdict::Probe(now + ANSWER_WITHIN)
                } else {
                    Verdict::Wait(due)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// A session heard every `gap` from 0 to `until`.
    fn steady(gap: Duration, until: Duration) -> Silence {
        let mut s = Silence::new(Duration::ZERO);
        let mut t = gap;
        while t <= until {
            s.heard(t);
            t += gap;
        }
        s
    }

    #[test]
    fn a_walking_place_pings_after_five_quiet_ticks_and_gives_up_a_second_later() {
        let mut s = steady(50 * MS, 2000 * MS);
        assert_eq!(s.check(2100 * MS), Verdict::Wait(2250 * MS));
        assert_eq!(s.check(2250 * MS), Verdict::Probe(3250 * MS));
        assert_eq!(s.check(2300 * MS), Verdict::Wait(3250 * MS), "one Ping a silence");
        assert_eq!(s.check(3250 * MS), Verdict::Dead(1250 * MS));
    }

    #[test]
    fn any_answer_ends_the_silence_and_it_does_not_count_as_a_usual_gap() {
        let mut s = steady(50 * MS, 2000 * MS);
        assert_eq!(s.check(2250 * MS), Verdict::Probe(3250 * MS));
        s.heard(2260 * MS);
        let usual = s.usual().expect("usual");
        assert!((49 * MS..=51 * MS).contains(&usual), "{usual:?}");
        assert_eq!(s.check(2400 * MS), Verdict::Wait(2510 * MS));
    }

    #[test]
    fn a_still_place_heard_only_by_its_pongs_waits_the_keepalive_interval() {
        let mut s = steady(2000 * MS, 20_000 * MS);
        assert_eq!(s.check(21_000 * MS), Verdict::Wait(22_000 * MS));
        assert_eq!(s.check(22_000 * MS), Verdict::Probe(23_000 * MS));
        assert_eq!(s.check(23_000 * MS), Verdict::Dead(3000 * MS));
        // Before a second message there is no usual gap: the longest wait.
        let mut fresh = Silence::new(Duration::ZERO);
        assert_eq!(fresh.check(MS), Verdict::Wait(MAX_PROBE_AFTER));
    }

    #[test]
    fn the_wait_before_a_ping_is_bounded_both_ways() {
        assert_eq!(probe_after(Some(MS)), MIN_PROBE_AFTER);
        assert_eq!(probe_after(Some(100 * MS)), 500 * MS);
        assert_eq!(probe_after(Some(60_000 * MS)), MAX_PROBE_AFTER);
        assert_eq!(probe_after(None), MAX_PROBE_AFTER);
    }
}
