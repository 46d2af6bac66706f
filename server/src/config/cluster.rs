//! The cluster: where the place's Redis is (one node, Sentinel or a Redis
//! Cluster), the place a shard serves, and the heartbeat that tells the other
//! shards it lives.

use super::parse::parse_place;
use super::ConfigError;
use crate::topology::RedisTarget;
use clap::Args;
use std::time::Duration;

/// The cluster's flags.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Cluster")]
pub struct ClusterArgs {
    /// Redis URL (redis://, rediss:// for TLS, redis://user:pass@host:port/db).
    /// With it, this shard joins the other shards of its place; without it, it
    /// runs standalone. Append #insecure to a rediss:// URL to accept a
    /// self-signed certificate.
    #[arg(long, env = "MINO_REDIS_URL", conflicts_with_all = ["redis_cluster", "redis_sentinel"])]
    pub redis_url: Option<String>,

    /// Redis Cluster (7.0+) seed nodes, comma-separated
    /// (redis://host:port,redis://host:port; the first URL's user, password
    /// and TLS are used for every node). Instead of --redis-url: the place's
    /// frames go over sharded pub/sub (SPUBLISH/SSUBSCRIBE), each shard's
    /// snapshots on a channel of their own, so a busy place spreads over the
    /// cluster's primaries; slot moves and failovers are followed.
    #[arg(long, env = "MINO_REDIS_CLUSTER", value_delimiter = ',', conflicts_with = "redis_sentinel")]
    pub redis_cluster: Vec<String>,

    /// Redis Sentinel URLs, comma-separated (redis://host:26379,...), with
    /// --redis-master: the shards ask the sentinels for the primary and
    /// follow its failovers. The primary is reached with the first URL's
    /// user, password, database and TLS. Instead of --redis-url.
    #[arg(long, env = "MINO_REDIS_SENTINEL", value_delimiter = ',', requires = "redis_master")]
    pub redis_sentinel: Vec<String>,

    /// With --redis-sentinel: the master's name in the sentinels'
    /// configuration (`sentinel monitor NAME ...`).
    #[arg(long, env = "MINO_REDIS_MASTER", requires = "redis_sentinel")]
    pub redis_master: Option<String>,

    /// The place this shard serves: shards with the same place and Redis share
    /// one world. 1 to 64 of A-Z a-z 0-9 _ -.
    #[arg(long, env = "MINO_PLACE", default_value = "main", value_parser = parse_place)]
    pub place: String,

    /// A shard whose heartbeat is older than this is dead to the others, ms.
    /// 200 to 600,000.
    #[arg(long, env = "MINO_SHARD_TTL_MS", default_value_t = 3000, value_parser = clap::value_parser!(u64).range(200..=600_000))]
    pub shard_ttl_ms: u64,

    /// Interval of the shard's heartbeat and of its reading of the registry, ms.
    /// 50 to 300,000, and at most half of --shard-ttl-ms.
    #[arg(long, env = "MINO_HEARTBEAT_MS", default_value_t = 500, value_parser = clap::value_parser!(u64).range(50..=300_000))]
    pub heartbeat_ms: u64,
}

impl ClusterArgs {
    /// Where Redis is, from `--redis-url`, `--redis-cluster` or
    /// `--redis-sentinel` with `--redis-master` (clap lets at most one
    /// through); `None`: standalone.
    pub fn redis(&self) -> Option<RedisTarget> {
        let nonempty =
            |v: &[String]| v.iter().filter(|u| !u.trim().is_empty()).map(|u| u.trim().to_owned()).collect::<Vec<_>>();
        let (seeds, sentinels) = (nonempty(&self.redis_cluster), nonempty(&self.redis_sentinel));
        if !seeds.is_empty() {
            return Some(RedisTarget::Cluster { seeds });
        }
        if let (false, Some(master)) = (sentinels.is_empty(), self.redis_master.clone()) {
            return Some(RedisTarget::Sentinel { sentinels, master });
        }
        self.redis_url.clone().filter(|u| !u.is_empty()).map(RedisTarget::Node)
    }

    /// The heartbeat interval and the shard TTL.
    ///
    /// Errors: [`ConfigError::HeartbeatTooSlow`] when the heartbeat does not
    /// fit twice in the TTL.
    pub fn heartbeat_and_ttl(&self) -> Result<(Duration, Duration), ConfigError> {
        let (heartbeat_ms, shard_ttl_ms) = (self.heartbeat_ms, self.shard_ttl_ms);
        if heartbeat_ms > shard_ttl_ms / 2 {
            return Err(ConfigError::HeartbeatTooSlow { heartbeat_ms, shard_ttl_ms });
        }
        Ok((Duration::from_millis(heartbeat_ms), Duration::from_millis(shard_ttl_ms)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::super::Config;
    use super::*;

    #[test]
    fn redis_is_one_node_a_cluster_or_sentinels_never_two() {
        let target = |args: &[&str]| parse(args).expect("flags").cluster.redis();
        assert_eq!(target(&["--redis-url", "redis://a"]), Some(RedisTarget::Node("redis://a".into())));
        assert_eq!(
            target(&["--redis-cluster", "redis://a:1,redis://b:2"]),
            Some(RedisTarget::Cluster { seeds: vec!["redis://a:1".into(), "redis://b:2".into()] })
        );
        assert_eq!(
            target(&["--redis-sentinel", "redis://s:26379", "--redis-master", "mino"]),
            Some(RedisTarget::Sentinel { sentinels: vec!["redis://s:26379".into()], master: "mino".into() })
        );
        assert!(parse(&["--redis-url", "redis://a", "--redis-cluster", "redis://b"]).is_err());
        assert!(parse(&["--redis-sentinel", "redis://s"]).is_err(), "a sentinel needs --redis-master");
        assert!(parse(&["--redis-master", "mino"]).is_err(), "a master's name needs --redis-sentinel");
    }

    #[test]
    fn a_heartbeat_that_does_not_fit_twice_in_the_ttl_is_refused() {
        let cli = parse(&["--shard-ttl-ms", "1000", "--heartbeat-ms", "600"]).expect("each in range");
        let e = Config::from_cli(&cli).expect_err("too slow");
        assert_eq!(e, ConfigError::HeartbeatTooSlow { heartbeat_ms: 600, shard_ttl_ms: 1000 });
        assert!(e.to_string().contains("--heartbeat-ms") && e.to_string().contains("--shard-ttl-ms"));
    }
}
