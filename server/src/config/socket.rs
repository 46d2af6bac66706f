//! A player's socket once admitted: pings and the silence that drops it, how
//! long its writes may stay blocked, and what it may send per second.

use super::parse::ranged_f64;
use super::ConfigError;
use clap::Args;
use std::time::Duration;

/// Longest period of the liveness sweep (pings, peer timeout, ticket refresh).
const SWEEP_MAX: Duration = Duration::from_secs(1);

/// Shortest period of the liveness sweep.
const SWEEP_MIN: Duration = Duration::from_millis(10);

/// What a peer timeout leaves an idle peer beyond the ping interval and the
/// sweep that sends the ping: the ping waits for the next tick's write
/// (50 ms at 20 Hz), then the round trip.
const ANSWER_MARGIN: Duration = Duration::from_millis(100);

/// The flags of each admitted socket.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Players' sockets")]
pub struct SocketArgs {
    /// Interval between websocket pings the server sends, ms (a ping goes out
    /// with the next tick's write; checked once a second). 100 to 600,000.
    #[arg(long, env = "MINO_PING_INTERVAL_MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(100..=600_000))]
    pub ping_interval_ms: u64,

    /// A peer that sent nothing (not even a pong) for this long is dropped, ms
    /// (checked once a second); a WebTransport session's QUIC idle timeout.
    /// A dead or unreachable peer, not an idle player: a browser answers
    /// websocket pings and QUIC keep-alives itself, even for a hidden or
    /// frozen tab, whose player therefore stays. 200 to 3,600,000.
    #[arg(long, env = "MINO_PEER_TIMEOUT_MS", default_value_t = 15000, value_parser = clap::value_parser!(u64).range(200..=3_600_000))]
    pub peer_timeout_ms: u64,

    /// A socket whose writes stay blocked this long is closed as too slow, ms.
    /// 50 to 600,000.
    #[arg(long, env = "MINO_WRITE_TIMEOUT_MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(50..=600_000))]
    pub write_timeout_ms: u64,

    /// Ticks in a row a socket's writes may stay blocked (its kernel buffer
    /// full) before it is closed as too slow. Meanwhile its view frames wait
    /// in order, one a tick; only when this and --write-timeout-ms both allow
    /// over 64 ticks can more than 64 wait, and those are then dropped and
    /// the socket sent its view anew. Chat and presence are kept (at most
    /// 1,024 frames). 2 to 1,000.
    #[arg(long, env = "MINO_OUTBOUND_TICKS", default_value_t = 40, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub outbound_ticks: u32,

    /// Sustained input messages a player may send per second (burst: twice
    /// this). 1 to 10,000.
    #[arg(long, env = "MINO_INPUT_RATE", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub input_rate: u32,

    /// Websocket pings and pongs a socket may send per second, sustained
    /// (burst: twice this); past it the socket closes with 4019. An admitted
    /// player's pings are answered with the next tick's write, the newest
    /// only. 1 to 10,000.
    #[arg(long, env = "MINO_CONTROL_RATE", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub control_rate: u32,

    /// Sustained chat lines a player may send per second, as a fraction (burst:
    /// 5). 0.01 to 1,000.
    #[arg(long, env = "MINO_CHAT_RATE", default_value_t = 1.0, value_parser = ranged_f64(0.01, 1000.0))]
    pub chat_rate: f64,

    /// Benchmark control only: write each frame with its own system call
    /// instead of one vectored write a tick, to measure what batching saves.
    #[arg(long, env = "MINO_UNBATCHED_WRITES", hide = true)]
    pub unbatched_writes: bool,
}

/// Each admitted socket's limits (see [`SocketArgs`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SocketConfig {
    /// Server ping interval.
    pub ping_interval: Duration,
    /// Silence after which a peer is dropped.
    pub peer_timeout: Duration,
    /// Longest a socket write may stay blocked.
    pub write_timeout: Duration,
    /// Ticks in a row a socket may stay blocked.
    pub outbound_ticks: u32,
    /// Inputs per second, sustained.
    pub input_rate: u32,
    /// Pings and pongs per second a socket may send, sustained.
    pub control_rate: u32,
    /// Chat lines per second, sustained.
    pub chat_rate: f64,
    /// How each socket's frames are written.
    pub writes: Writes,
}

/// How a socket's frames are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Writes {
    /// A tick's frames with one vectored write.
    #[default]
    Batched,
    /// Each frame with its own system call (`--unbatched-writes`: the
    /// benchmark's control row, to measure what batching saves).
    Unbatched,
}

impl SocketArgs {
    /// The typed settings (every value was range-checked by clap).
    ///
    /// Errors: [`ConfigError::PeerTimeoutTooShort`] when an idle peer that
    /// answers every ping could still be dropped: the peer timeout must
    /// outlast the ping interval, the sweep that sends the ping and the
    /// answer (see [`least_peer_timeout`]).
    pub fn config(&self) -> Result<SocketConfig, ConfigError> {
        let ms = Duration::from_millis;
        let (ping_interval, peer_timeout) = (ms(self.ping_interval_ms), ms(self.peer_timeout_ms));
        let least = least_peer_timeout(ping_interval);
        if peer_timeout < least {
            return Err(ConfigError::PeerTimeoutTooShort {
                peer_timeout_ms: self.peer_timeout_ms,
                least_ms: least.as_millis() as u64,
            });
        }
        Ok(SocketConfig {
            ping_interval: ms(self.ping_interval_ms),
            peer_timeout: ms(self.peer_timeout_ms),
            write_timeout: ms(self.write_timeout_ms),
            outbound_ticks: self.outbound_ticks,
            input_rate: self.input_rate,
            control_rate: self.control_rate,
            chat_rate: self.chat_rate,
            writes: if self.unbatched_writes { Writes::Unbatched } else { Writes::Batched },
        })
    }
}

/// The liveness sweep's period for a ping interval and a peer timeout: at
/// most [`SWEEP_MAX`], the ping interval and a quarter of the timeout (so a
/// ping goes out at most this late, and silence is judged this finely).
fn sweep_period(ping_interval: Duration, peer_timeout: Duration) -> Duration {
    SWEEP_MAX.min(ping_interval).min(peer_timeout / 4).max(SWEEP_MIN)
}

/// The shortest peer timeout (whole ms) that an idle peer answering every
/// ping outlasts with a ping interval of `ping_interval`: at least the
/// interval, the sweep that sends the ping (which itself depends on the
/// timeout) and [`ANSWER_MARGIN`].
fn least_peer_timeout(ping_interval: Duration) -> Duration {
    let from = ping_interval + ANSWER_MARGIN;
    (0..=SWEEP_MAX.as_millis() as u64)
        .map(|extra| from + Duration::from_millis(extra))
        .find(|&p| p >= from + sweep_period(ping_interval, p))
        .unwrap_or(from + SWEEP_MAX)
}

impl SocketConfig {
    /// The liveness sweep's period (see [`crate::hub::liveness`]).
    pub fn sweep_period(&self) -> Duration {
        sweep_period(self.ping_interval, self.peer_timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_peer_timeout_is_itself_taken_and_one_ms_less_is_not() {
        // Each ping interval's least outlasts the interval, the sweep its own
        // value gives and the margin; a ms less does not (the sweep shrinks
        // with the timeout, so the least is where the two meet).
        for ping_ms in [100, 200, 1000, 2000, 5000, 600_000] {
            let ping = Duration::from_millis(ping_ms);
            let least = least_peer_timeout(ping);
            let enough = |p: Duration| p >= ping + sweep_period(ping, p) + ANSWER_MARGIN;
            assert!(enough(least), "{ping_ms}: {least:?}");
            assert!(!enough(least - Duration::from_millis(1)), "{ping_ms}: {least:?} is not the least");
        }
        assert_eq!(least_peer_timeout(Duration::from_millis(1000)), Duration::from_millis(1467));
        assert_eq!(least_peer_timeout(Duration::from_millis(5000)), Duration::from_millis(6100));
    }
}
