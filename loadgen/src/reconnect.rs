//! The client reconnect policy (issue 4), as pure functions of what happened:
//! after an unexpected close, reconnect at once with a little jitter, then
//! with capped exponential backoff, presenting the resume ticket; never after
//! SessionReplaced, nor after an operator's kick (Kicked: the schema says a
//! client must not reconnect on its own); after Busy, wait retry-after (the
//! next attempt goes to the next `--url`); after a Move, reconnect at once
//! with the Move's ticket.

use mino_protocol::wire::CloseCode;
use rand::Rng;
use std::time::Duration;

/// Tunables of the policy.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReconnectPolicy {
    /// Reconnect at all after an unexpected close or a failed attempt.
    pub enabled: bool,
    /// Retry after Busy (after its retry-after); when false a Busy ends the bot.
    pub retry_busy: bool,
    /// The first reconnect waits a uniform random time in `[0, first_jitter]`.
    pub first_jitter: Duration,
    /// Later attempts wait `base * 2^(n-1)`, capped at `cap`, times a random 0.5..=1.
    pub base: Duration,
    /// Longest backoff.
    pub cap: Duration,
}

impl Default for ReconnectPolicy {
    /// Reconnect and retry Busy; jitter 0–50 ms, then 100 ms doubling to 2 s.
    fn default() -> Self {
        ReconnectPolicy {
            enabled: true,
            retry_busy: true,
            first_jitter: Duration::from_millis(50),
            base: Duration::from_millis(100),
            cap: Duration::from_secs(2),
        }
    }
}

/// How a welcomed session ended, as far as the policy cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The loadgen stopped it.
    Stopped,
    /// The server sent a close frame with this code (None: no code).
    Closed(Option<u16>),
    /// The connection broke without a close frame.
    Lost,
    /// The server sent Move (drain): reconnect elsewhere with the new ticket.
    Moved,
    /// The server sent bytes the bot could not accept.
    Protocol,
}

/// How a join attempt failed, as far as the policy cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinFailure {
    /// Busy with a retry-after, ms.
    Busy(u32),
    /// Error/close with this code in answer to Hello.
    Refused(u16),
    /// Anything else: connect failure, timeout, lost connection.
    Other,
}

/// Why a bot stops for good.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The loadgen stopped it (end of run).
    Stopped,
    /// SessionReplaced: another session took the player over; never reconnect.
    Replaced,
    /// The server refused the bot for good (protocol version, name, a rule the bot broke, an operator's kick).
    Refused,
    /// Busy and the policy does not retry Busy.
    Busy,
    /// A failure and the policy does not reconnect.
    Failed,
}

/// What to do next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Stop the bot.
    Stop(StopReason),
    /// Try again after `delay`; `keep_ticket` false means join as a new player.
    Retry {
        /// Wait before the attempt.
        delay: Duration,
        /// Present the resume ticket held so far.
        keep_ticket: bool,
    },
}

/// Close codes after which reconnecting cannot help (the bot itself is at
/// fault) or is not the bot's to do (an operator removed it).
fn final_code(code: u16) -> bool {
    let c = CloseCode(code);
    c == CloseCode::SessionReplaced
        || c == CloseCode::Kicked
        || c == CloseCode::ProtocolVersion
        || c == CloseCode::NameInvalid
        || (CloseCode::MalformedMessage.0..=CloseCode::ChatFlood.0).contains(&code)
        || c == CloseCode::TextFrame
}

/// Ticket refusals: retry as a new player.
fn ticket_code(code: u16) -> bool {
    (CloseCode::TicketInvalid.0..=CloseCode::TicketLive.0).contains(&code)
}

impl ReconnectPolicy {
    /// No reconnects and no Busy retries: every bot gets one attempt.
    pub fn single_attempt() -> ReconnectPolicy {
        ReconnectPolicy { enabled: false, retry_busy: false, ..ReconnectPolicy::default() }
    }

    /// Wait before reconnect attempt `attempt` (0 = the first after a close).
    pub fn delay(&self, attempt: u32, rng: &mut impl Rng) -> Duration {
        if attempt == 0 {
            return self.first_jitter.mul_f64(rng.random_range(0.0..=1.0));
        }
        let exp = self.base.saturating_mul(1u32 << (attempt - 1).min(20));
        exp.min(self.cap).mul_f64(rng.random_range(0.5..=1.0))
    }

    /// Wait after a Busy: its retry-after plus up to 20 % jitter.
    pub fn busy_delay(&self, retry_after_ms: u32, rng: &mut impl Rng) -> Duration {
        Duration::from_millis(retry_after_ms as u64).mul_f64(rng.random_range(1.0..=1.2))
    }

    /// What to do after a welcomed session ended.
    pub fn after_session(&self, ending: Ending, rng: &mut impl Rng) -> Next {
        match ending {
            Ending::Stopped => Next::Stop(StopReason::Stopped),
            Ending::Closed(Some(c)) if c == CloseCode::SessionReplaced.0 => Next::Stop(StopReason::Replaced),
            Ending::Closed(Some(c)) if final_code(c) => Next::Stop(StopReason::Refused),
            Ending::Moved => Next::Retry { delay: Duration::ZERO, keep_ticket: true },
            _ if !self.enabled => Next::Stop(StopReason::Failed),
            _ => Next::Retry { delay: self.delay(0, rng), keep_ticket: true },
        }
    }

    /// What to do after join attempt number `attempt` (0-based, counted since the
    /// last Welcome) failed.
    pub fn after_join(&self, failure: JoinFailure, attempt: u32, rng: &mut impl Rng) -> Next {
        match failure {
            JoinFailure::Busy(_) if !self.retry_busy => Next::Stop(StopReason::Busy),
            JoinFailure::Busy(ms) => Next::Retry { delay: self.busy_delay(ms, rng), keep_ticket: true },
            JoinFailure::Refused(c) if final_code(c) => Next::Stop(StopReason::Refused),
            _ if !self.enabled => Next::Stop(StopReason::Failed),
            JoinFailure::Refused(c) if ticket_code(c) => {
                Next::Retry { delay: self.delay(attempt + 1, rng), keep_ticket: false }
            }
            _ => Next::Retry { delay: self.delay(attempt + 1, rng), keep_ticket: true },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng() -> rand::rngs::SmallRng {
        rand::rngs::SmallRng::seed_from_u64(4)
    }

    #[test]
    fn first_reconnect_is_at_once_with_jitter_then_backoff_is_capped() {
        let p = ReconnectPolicy::default();
        let mut r = rng();
        for _ in 0..200 {
            assert!(p.delay(0, &mut r) <= Duration::from_millis(50));
            let d1 = p.delay(1, &mut r);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d3 = p.delay(3, &mut r);
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400));
            assert!(p.delay(30, &mut r) <= Duration::from_secs(2));
        }
    }

    #[test]
    fn never_reconnects_after_session_replaced() {
        let p = ReconnectPolicy::default();
        let replaced = Ending::Closed(Some(CloseCode::SessionReplaced.0));
        assert_eq!(p.after_session(replaced, &mut rng()), Next::Stop(StopReason::Replaced));
    }

    #[test]
    fn unexpected_closes_resume_at_once_and_moves_without_delay() {
        let p = ReconnectPolicy::default();
        for ending in [Ending::Lost, Ending::Closed(Some(1001)), Ending::Closed(None), Ending::Protocol] {
            let Next::Retry { delay, keep_ticket } = p.after_session(ending, &mut rng()) else {
                panic!("{ending:?} should reconnect")
            };
            assert!(keep_ticket && delay <= Duration::from_millis(50));
        }
        assert_eq!(
            p.after_session(Ending::Moved, &mut rng()),
            Next::Retry { delay: Duration::ZERO, keep_ticket: true }
        );
        assert_eq!(p.after_session(Ending::Stopped, &mut rng()), Next::Stop(StopReason::Stopped));
    }

    #[test]
    fn busy_waits_retry_after_and_ticket_refusal_rejoins_fresh() {
        let p = ReconnectPolicy::default();
        let Next::Retry { delay, keep_ticket } = p.after_join(JoinFailure::Busy(1000), 0, &mut rng()) else { panic!() };
        assert!(keep_ticket && delay >= Duration::from_secs(1) && delay <= Duration::from_millis(1200));
        let used = JoinFailure::Refused(CloseCode::TicketUsed.0);
        assert!(matches!(p.after_join(used, 0, &mut rng()), Next::Retry { keep_ticket: false, .. }));
        let version = JoinFailure::Refused(CloseCode::ProtocolVersion.0);
        assert_eq!(p.after_join(version, 0, &mut rng()), Next::Stop(StopReason::Refused));
    }

    #[test]
    fn never_reconnects_after_a_kick() {
        let p = ReconnectPolicy::default();
        let kicked = Ending::Closed(Some(CloseCode::Kicked.0));
        assert_eq!(p.after_session(kicked, &mut rng()), Next::Stop(StopReason::Refused));
        assert_eq!(
            p.after_join(JoinFailure::Refused(CloseCode::Kicked.0), 0, &mut rng()),
            Next::Stop(StopReason::Refused)
        );
    }

    #[test]
    fn single_attempt_stops_on_everything() {
        let p = ReconnectPolicy::single_attempt();
        assert_eq!(p.after_join(JoinFailure::Busy(10), 0, &mut rng()), Next::Stop(StopReason::Busy));
        assert_eq!(p.after_join(JoinFailure::Other, 0, &mut rng()), Next::Stop(StopReason::Failed));
        assert_eq!(p.after_session(Ending::Lost, &mut rng()), Next::Stop(StopReason::Failed));
    }
}
