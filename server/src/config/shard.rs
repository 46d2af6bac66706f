//! The shard itself: its id, its tick, its world, whom it admits, how long a
//! left player's session is kept, and the threads it runs on. These settings
//! are the shard core's, so they are [`Config`](super::Config)'s own fields.

use super::parse::{parse_shard_id, ranged_f32};
use clap::Args;
use mino_protocol::ShardId;
use std::num::NonZeroU32;
use std::time::Duration;

/// The shard's own flags.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Shard")]
pub struct ShardArgs {
    /// Simulation and snapshot rate, Hz. 1 to 120.
    #[arg(long, env = "MINO_TICK_HZ", default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=120))]
    pub tick_hz: u16,

    /// Most players this process admits; further hellos get "busy".
    /// 1 to 1,000,000.
    #[arg(long, env = "MINO_MAX_PLAYERS", default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_players: u32,

    /// This shard's id, non-zero: 1 to 8 hex digits, the form it is shown
    /// in everywhere (the logs, the admin console, the page's HUD: 8
    /// lowercase hex digits, so `--shard-id 2a` is shard 0000002a). Default:
    /// random.
    #[arg(long, env = "MINO_SHARD_ID", value_parser = parse_shard_id)]
    pub shard_id: Option<NonZeroU32>,

    /// World width and height, world units; the world spans (0,0) to
    /// (size,size). 1 to 1,000,000.
    #[arg(long, env = "MINO_WORLD_SIZE", default_value_t = 1000.0, value_parser = ranged_f32(1.0, 1_000_000.0))]
    pub world_size: f32,

    /// Walking speed, world units per second. 0 to 10,000.
    #[arg(long, env = "MINO_SPEED", default_value_t = 120.0, value_parser = ranged_f32(0.0, 10_000.0))]
    pub speed: f32,

    /// Busy rule: refuse new players while the mean tick start lateness over the
    /// last 20 ticks (a second at the default 20 Hz) exceeds this many ms. 0
    /// turns the lateness part of the rule off. 0 to 10,000.
    #[arg(long, env = "MINO_BUSY_LATENESS_MS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub busy_lateness_ms: u64,

    /// Retry-after sent with a busy refusal, ms (a random 0-50 % is added).
    /// 0 to 600,000.
    #[arg(long, env = "MINO_BUSY_RETRY_MS", default_value_t = 2000, value_parser = clap::value_parser!(u32).range(0..=600_000))]
    pub busy_retry_ms: u32,

    /// How long a resume ticket (and a disconnected player's session) stays
    /// valid after it was issued or last refreshed, ms. 1,000 to 2,592,000,000
    /// (30 days).
    #[arg(long, env = "MINO_TICKET_TTL_MS", default_value_t = 600_000, value_parser = clap::value_parser!(u64).range(1000..=2_592_000_000))]
    pub ticket_ttl_ms: u64,

    /// Runtime threads, 1 to 256. 1 (the default) runs the whole shard on one thread: no
    /// cross-thread wake-ups on the fan-out path, and one core per shard process
    /// (scale out with more processes). More threads spread the sockets' work.
    #[arg(long, env = "MINO_WORKER_THREADS", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub worker_threads: u16,
}

impl ShardArgs {
    /// The shard's id: the one given, else a random non-zero one.
    pub fn shard_id(&self) -> ShardId {
        ShardId(self.shard_id.map_or_else(|| rand::random_range(1..=u32::MAX), NonZeroU32::get))
    }

    /// The busy rule's lateness threshold; `None`: that part of the rule is off.
    pub fn busy_lateness(&self) -> Option<Duration> {
        (self.busy_lateness_ms > 0).then(|| Duration::from_millis(self.busy_lateness_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::super::Config;
    use mino_protocol::ShardId;

    #[test]
    fn out_of_range_values_name_the_flag_and_its_range() {
        for (args, flag, range) in [
            (&["--tick-hz", "0"][..], "--tick-hz", "1..=120"),
            (&["--outbound-ticks", "1"][..], "--outbound-ticks", "2..=1000"),
            (&["--peer-timeout-ms", "5"][..], "--peer-timeout-ms", "200..=3600000"),
            (&["--world-size", "0"][..], "--world-size", "1..=1000000"),
            (&["--chat-rate", "NaN"][..], "--chat-rate", "0.01..=1000"),
            (&["--max-players", "0"][..], "--max-players", "1..=1000000"),
        ] {
            let e = parse(args).expect_err("out of range").to_string();
            assert!(e.contains(flag) && e.contains(range), "{args:?}: {e}");
        }
    }

    #[test]
    fn the_shard_id_is_read_in_the_form_it_is_shown_in() {
        for (arg, id) in [("2a", 0x2a), ("0000002a", 0x2a), ("DEADBEEF", 0xdead_beef), ("10", 0x10), ("1", 1)] {
            let config = Config::from_cli(&parse(&["--shard-id", arg]).expect(arg)).expect(arg);
            assert_eq!(config.shard_id, ShardId(id), "{arg}");
            assert_eq!(config.shard_id.to_string(), format!("{id:08x}"), "shown as 8 lowercase hex digits");
        }
        for bad in ["0", "00000000", "123456789", "0x2a", "g1", "", "2 a"] {
            let err = parse(&["--shard-id", bad]).expect_err(bad).to_string();
            assert!(err.contains("--shard-id"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_busy_lateness_of_zero_turns_that_rule_off() {
        assert_eq!(parse(&["--busy-lateness-ms", "0"]).expect("flags").shard.busy_lateness(), None);
        assert_eq!(parse(&[]).expect("flags").shard.busy_lateness().map(|d| d.as_millis()), Some(10));
    }
}
