//! Where the Redis of a place is: one node (or a stable address in front of
//! whichever node is the primary), a primary found through Redis Sentinel, or
//! a Redis Cluster. Typed once from the flags (`--redis-url`,
//! `--redis-sentinel` with `--redis-master`, `--redis-cluster`).

/// The URL with any password replaced by `***`, for logs.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    match rest.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or("", |(u, _)| u);
            format!("{scheme}://{user}:***@{host}")
        }
        None => url.to_owned(),
    }
}

/// How a shard reaches the Redis of its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisTarget {
    /// One node: `redis://[user:pass@]host:port[/db]` or `rediss://…`. A
    /// primary demoted behind that address is noticed by its `READONLY`
    /// replies, and the shard reconnects.
    Node(String),
    /// The primary Redis Sentinel names `master`, asked of these sentinels
    /// (`redis://host:26379`, several for redundancy). The primary is
    /// reached with the user, password, database and TLS of the first
    /// sentinel URL.
    Sentinel {
        /// Sentinel URLs.
        sentinels: Vec<String>,
        /// The master's name in the sentinels' configuration.
        master: String,
    },
    /// A Redis Cluster (7.0 or newer, for sharded pub/sub), discovered
    /// from these seed nodes (any reachable one is enough; the first URL's
    /// user, password and TLS are used for every node).
    Cluster {
        /// Seed node URLs.
        seeds: Vec<String>,
    },
}

/// The kind of [`RedisTarget`]: the `mode` label of `mino_redis_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// One node (or a stable address).
    Node,
    /// Sentinel.
    Sentinel,
    /// Redis Cluster.
    Cluster,
}

impl Mode {
    /// Every mode, for documentation tests.
    pub const ALL: [Mode; 3] = [Mode::Node, Mode::Sentinel, Mode::Cluster];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Node => "node",
            Mode::Sentinel => "sentinel",
            Mode::Cluster => "cluster",
        }
    }
}

impl RedisTarget {
    /// Its kind.
    pub fn mode(&self) -> Mode {
        match self {
            RedisTarget::Node(_) => Mode::Node,
            RedisTarget::Sentinel { .. } => Mode::Sentinel,
            RedisTarget::Cluster { .. } => Mode::Cluster,
        }
    }

    /// The URLs with passwords replaced by `***`, for logs.
    pub fn describe(&self) -> String {
        let list = |urls: &[String]| urls.iter().map(|u| redact(u)).collect::<Vec<_>>().join(",");
        match self {
            RedisTarget::Node(url) => redact(url),
            RedisTarget::Sentinel { sentinels, master } => format!("sentinel {} master {master}", list(sentinels)),
            RedisTarget::Cluster { seeds } => format!("cluster {}", list(seeds)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_logs() {
        assert_eq!(redact("redis://:s3cret@host:6379/0"), "redis://:***@host:6379/0");
        assert_eq!(redact("rediss://user:pa:ss@h/1"), "rediss://user:***@h/1");
        assert_eq!(redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert!(!redact("redis://u:p%40ss@h").contains("p%40ss"));
    }

    #[test]
    fn descriptions_name_the_mode_and_hide_passwords() {
        let s = RedisTarget::Sentinel {
            sentinels: vec!["redis://:pw@a:26379".into(), "redis://b:26379".into()],
            master: "mino".into(),
        };
        assert_eq!(s.describe(), "sentinel redis://:***@a:26379,redis://b:26379 master mino");
        let c = RedisTarget::Cluster { seeds: vec!["redis://u:secret@n1:7000".into()] };
        assert!(c.describe().starts_with("cluster ") && !c.describe().contains("secret"));
        assert_eq!(c.mode().label(), "cluster");
        assert_eq!(RedisTarget::Node("redis://h".into()).mode(), Mode::Node);
    }
}
