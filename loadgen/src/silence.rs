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
//! The rule, the browser's too (`client-web/src/net/silence.ts`, the same
//! test cases): a session that hears no message for [`probe_after`] (five of
//! its usual gaps between messages: [`MIN_PROBE_AFTER`] while frames come
//! every tick, up to [`MAX_PROBE_AFTER`]) sends a Ping, and judges at the end
//! of [`answer_within`] of it (at least [`MIN_ANSWER_WITHIN`], and four round
//! trips: QUIC resends a lost Ping or Pong after about one):
//!
//! - a message came meanwhile: alive, the silence is over;
//! - none came, but the transport received packets since the Ping (the
//!   shard's QUIC stack acknowledged it: the process lives, its tick is late
//!   or stalled, and its Pong, answered by the tick, waits; a shard with
//!   `--worker-threads` above 1, whose QUIC runs beside the tick): alive,
//!   and another Ping;
//! - nothing at all came (or the transport cannot tell): the shard is taken
//!   for dead, and the session is closed and resumed elsewhere;
//! - and whatever the packets, no message for [`MAX_QUIET`] (a tick that
//!   hangs while its QUIC answers) is dead too: the page's websocket bound.
//!
//! A packet count is only believed when read at or after the answer time
//! (a page reads its browser's asynchronously, a look late). A shard on
//!   one thread (the default) that stalls that long, its QUIC with it, is
//!   left as a dead one would be: its players go on elsewhere (a shard of
//!   one thread stalled 2.5 s by a fail point lost its 20 WebTransport bots,
//!   which resumed; websockets wait for their 8 s silence).
//!
//! I/O-free: the caller keeps the clock, sends the Ping and reads its
//! transport's round trip and packet count.

use std::time::Duration;

/// Shortest silence that sends a Ping (five ticks at 20 Hz).
pub const MIN_PROBE_AFTER: Duration = Duration::from_millis(250);

/// Longest silence before a Ping: a little more than the keep-alive's 2 s,
/// so in a still place the keep-alive's own Pong comes first.
pub const MAX_PROBE_AFTER: Duration = Duration::from_millis(2250);

/// Least time given a Ping to be answered: TCP's and QUIC's first resends
/// come well within it on a fast link.
pub const MIN_ANSWER_WITHIN: Duration = Duration::from_millis(1000);

/// Most time given a Ping to be answered, whatever the round trip read.
pub const MAX_ANSWER_WITHIN: Duration = Duration::from_millis(5000);

/// Longest silence a session takes, packets or not (the page's websocket
/// silence bound).
pub const MAX_QUIET: Duration = Duration::from_millis(8000);

/// How soon to look again when the packet count is older than the answer
/// time.
const RECHECK: Duration = Duration::from_millis(50);

/// Round trips given a Ping to be answered (a lost Ping or Pong is resent
/// after about one, then after twice as long).
const ANSWER_ROUND_TRIPS: u32 = 4;

/// Gaps the silence must pass, in units of the session's usual gap.
const GAPS: u32 = 5;

/// Weight of a new gap in the usual gap (an exponential mean).
const GAP_WEIGHT: f64 = 0.125;

/// The silence before a Ping for a session whose usual gap between messages
/// is `usual` (None: none seen yet).
pub fn probe_after(usual: Option<Duration>) -> Duration {
    usual.map_or(MAX_PROBE_AFTER, |g| (g * GAPS).clamp(MIN_PROBE_AFTER, MAX_PROBE_AFTER))
}

/// How long a Ping is given to be answered on a path of round trip `rtt`
/// (None: not known).
pub fn answer_within(rtt: Option<Duration>) -> Duration {
    rtt.map_or(MIN_ANSWER_WITHIN, |r| (r * ANSWER_ROUND_TRIPS).clamp(MIN_ANSWER_WITHIN, MAX_ANSWER_WITHIN))
}

/// What the transport says of its path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Path {
    /// Its smoothed round trip (None: not known).
    pub rtt: Option<Duration>,
    /// Packets it had received by `as_of` (None: it cannot tell).
    pub packets: Option<u64>,
    /// When the reading was taken, on the silence's clock.
    pub as_of: Duration,
}

/// What the silence calls for now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing; look again at this offset.
    Wait(Duration),
    /// Send a Ping now (then look again at the offset given).
    Probe(Duration),
    /// No message and no packet came within the answer time of the Ping:
    /// the shard is gone, silent this long.
    Dead(Duration),
}

/// A Ping sent: when, and the packets the transport had received then.
#[derive(Clone, Copy, Debug)]
struct Probe {
    at: Duration,
    packets: Option<u64>,
    answer: Duration,
}

/// One session's silence; times are offsets on the caller's monotonic clock.
#[derive(Clone, Debug)]
pub struct Silence {
    /// When a message last came.
    last: Duration,
    /// The usual gap between messages, seconds.
    usual_s: Option<f64>,
    /// The Ping of this silence.
    probe: Option<Probe>,
}

impl Silence {
    /// A session that heard from its shard at `now` (its Welcome).
    pub fn new(now: Duration) -> Silence {
        Silence { last: now, usual_s: None, probe: None }
    }

    /// A message came at `now`: any message counts, and its gap is learnt
    /// (a silence that needed a Ping too: a place gone still, whose Pongs
    /// are all that comes, lengthens the usual gap towards
    /// [`MAX_PROBE_AFTER`] instead of being pinged every
    /// [`MIN_PROBE_AFTER`] for ever).
    pub fn heard(&mut self, now: Duration) {
        let gap = now.saturating_sub(self.last).as_secs_f64();
        self.usual_s = Some(self.usual_s.map_or(gap, |u| u + GAP_WEIGHT * (gap - u)));
        self.last = now;
        self.probe = None;
    }

    /// The usual gap between messages (None before the second message).
    pub fn usual(&self) -> Option<Duration> {
        self.usual_s.map(Duration::from_secs_f64)
    }

    /// What to do at `now`, the transport's path being `path`.
    pub fn check(&mut self, now: Duration, path: Path) -> Verdict {
        match self.probe {
            _ if now.saturating_sub(self.last) >= MAX_QUIET => Verdict::Dead(now.saturating_sub(self.last)),
            Some(p) if now < p.at + p.answer => Verdict::Wait(p.at + p.answer),
            Some(p) if path.packets.is_some() && path.as_of < p.at + p.answer => Verdict::Wait(now + RECHECK),
            Some(p) => {
                let packets_came = matches!((p.packets, path.packets), (Some(then), Some(now)) if now > then);
                if packets_came {
                    self.ping(now, path)
                } else {
                    Verdict::Dead(now.saturating_sub(self.last))
                }
            }
            None => {
                let due = self.last + probe_after(self.usual());
                if now >= due {
                    self.ping(now, path)
                } else {
                    Verdict::Wait(due)
                }
            }
        }
    }

    fn ping(&mut self, now: Duration, path: Path) -> Verdict {
        let answer = answer_within(path.rtt);
        self.probe = Some(Probe { at: now, packets: path.packets, answer });
        Verdict::Probe(now + answer)
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

    /// A path of round trip `rtt` ms that has received `packets`, read now
    /// (as the bots read quinn's).
    fn path(rtt: u64, packets: u64) -> Path {
        Path { rtt: Some(Duration::from_millis(rtt)), packets: Some(packets), as_of: Duration::MAX }
    }

    #[test]
    fn a_walking_place_pings_after_five_quiet_ticks_and_gives_up_a_second_later() {
        let mut s = steady(50 * MS, 2000 * MS);
        assert_eq!(s.check(2100 * MS, path(1, 90)), Verdict::Wait(2250 * MS));
        assert_eq!(s.check(2250 * MS, path(1, 90)), Verdict::Probe(3250 * MS));
        assert_eq!(s.check(2300 * MS, path(1, 90)), Verdict::Wait(3250 * MS), "one Ping at a time");
        assert_eq!(s.check(3250 * MS, path(1, 90)), Verdict::Dead(1250 * MS));
    }

    #[test]
    fn any_message_ends_the_silence_and_a_place_gone_still_is_pinged_less_and_less() {
        let mut s = steady(50 * MS, 2000 * MS);
        assert_eq!(s.check(2250 * MS, path(1, 90)), Verdict::Probe(3250 * MS));
        s.heard(2260 * MS);
        // The silence's 260 ms is learnt: 50 + (260 - 50) / 8.
        let usual = s.usual().expect("usual");
        assert!((76 * MS..=77 * MS).contains(&usual), "{usual:?}");
        assert!(matches!(s.check(2400 * MS, path(1, 91)), Verdict::Wait(_)));
        // Only Pongs come now, each a round trip after its Ping: the Pings
        // grow rarer, up to one each MAX_PROBE_AFTER.
        let mut t = 2260 * MS;
        let mut pings = Vec::new();
        while t < 60_000 * MS {
            t += MS;
            if let Verdict::Probe(_) = s.check(t, path(1, 91)) {
                pings.push(t);
                s.heard(t + MS);
            }
        }
        let last_gap = pings[pings.len() - 1] - pings[pings.len() - 2];
        assert!(last_gap >= MAX_PROBE_AFTER, "pinged every {last_gap:?} at the end");
        assert!(pings.len() < 60, "{} Pings in a minute", pings.len());
    }

    #[test]
    fn a_still_place_heard_only_by_its_pongs_waits_the_keepalive_interval() {
        let mut s = steady(2000 * MS, 20_000 * MS);
        // A little past the keep-alive's 2 s, so its own Pong comes first.
        assert_eq!(s.check(21_000 * MS, path(1, 9)), Verdict::Wait(22_250 * MS));
        assert_eq!(s.check(22_250 * MS, path(1, 9)), Verdict::Probe(23_250 * MS));
        assert_eq!(s.check(23_250 * MS, path(1, 9)), Verdict::Dead(3250 * MS));
        // Before a second message there is no usual gap: the longest wait.
        let mut fresh = Silence::new(Duration::ZERO);
        assert_eq!(fresh.check(MS, Path::default()), Verdict::Wait(MAX_PROBE_AFTER));
    }

    #[test]
    fn a_slow_path_gets_four_round_trips_to_answer() {
        let mut s = steady(50 * MS, 2000 * MS);
        assert_eq!(s.check(2250 * MS, path(1200, 90)), Verdict::Probe(7050 * MS));
        assert_eq!(s.check(7000 * MS, path(1200, 90)), Verdict::Wait(7050 * MS));
        assert_eq!(s.check(7050 * MS, path(1200, 90)), Verdict::Dead(5050 * MS));
    }

    #[test]
    fn packets_without_a_message_are_a_live_shard_whose_tick_stalled() {
        let mut s = steady(50 * MS, 2000 * MS);
        assert_eq!(s.check(2250 * MS, path(1, 90)), Verdict::Probe(3250 * MS));
        // Its QUIC stack acknowledged the Ping: another Ping, not a death.
        assert_eq!(s.check(3250 * MS, path(1, 91)), Verdict::Probe(4250 * MS));
        assert_eq!(s.check(4250 * MS, path(1, 91)), Verdict::Dead(2250 * MS), "then nothing at all");
        // Packets for ever, no message: dead at MAX_QUIET all the same (a hung tick).
        let mut hung = steady(50 * MS, 2000 * MS);
        let mut t = 2000 * MS;
        let mut packets = 90;
        let verdict = loop {
            t += 10 * MS;
            packets += 1;
            match hung.check(t, path(1, packets)) {
                Verdict::Dead(quiet) => break quiet,
                _ => continue,
            }
        };
        assert_eq!(verdict, MAX_QUIET);
        // A transport that cannot count packets has only the messages.
        let mut blind = steady(50 * MS, 2000 * MS);
        let none = Path { rtt: None, packets: None, as_of: Duration::ZERO };
        assert_eq!(blind.check(2250 * MS, none), Verdict::Probe(3250 * MS));
        assert_eq!(blind.check(3250 * MS, none), Verdict::Dead(1250 * MS));
    }

    #[test]
    fn a_packet_count_read_before_the_answer_time_is_not_believed() {
        let mut s = steady(50 * MS, 2000 * MS);
        let read_at = |packets: u64, at: Duration| Path { rtt: Some(MS), packets: Some(packets), as_of: at };
        assert_eq!(s.check(2250 * MS, read_at(90, 2100 * MS)), Verdict::Probe(3250 * MS));
        // At the answer time the count in hand was read 200 ms before it: look again soon.
        assert_eq!(s.check(3250 * MS, read_at(90, 3050 * MS)), Verdict::Wait(3300 * MS));
        // A reading from after it, with the Ping's acknowledgement: alive.
        assert_eq!(s.check(3300 * MS, read_at(91, 3260 * MS)), Verdict::Probe(4300 * MS));
    }

    #[test]
    fn the_waits_are_bounded_both_ways() {
        assert_eq!(probe_after(Some(MS)), MIN_PROBE_AFTER);
        assert_eq!(probe_after(Some(100 * MS)), 500 * MS);
        assert_eq!(probe_after(Some(60_000 * MS)), MAX_PROBE_AFTER);
        assert_eq!(probe_after(None), MAX_PROBE_AFTER);
        assert_eq!(answer_within(Some(40 * MS)), MIN_ANSWER_WITHIN);
        assert_eq!(answer_within(Some(500 * MS)), 2000 * MS);
        assert_eq!(answer_within(Some(60_000 * MS)), MAX_ANSWER_WITHIN);
        assert_eq!(answer_within(None), MIN_ANSWER_WITHIN);
    }
}
