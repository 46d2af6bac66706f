//! The scale runner's sections: what each measures is in benches/README.md;
//! here their names, their order, and the raw files each writes (a rerun of
//! a section replaces exactly those).

/// One section of the scale run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Section {
    /// Criterion micro-benchmarks.
    Criterion,
    /// Snapshot gap, CPU per frame and ticks against players (one shard, two).
    Steps,
    /// Batched writes against one write per frame.
    Control,
    /// Memory and CPU per idle websocket (and the allocator).
    Idle,
    /// Players arriving at a rate.
    Arrivals,
    /// A shard killed, then drained.
    Failover,
    /// Area of interest against whole-shard snapshots.
    Aoi,
    /// Everyone in one cell.
    Crowd,
    /// Redis Cluster and Sentinel (`examples/redis_ha`).
    Redis,
    /// Through nginx with TLS, loopback TCP against Unix sockets.
    Nginx,
    /// The same walking game on Colyseus, side by side with mino.
    Peer,
    /// Shared delta frames against full frames (issue 25).
    Deltas,
    /// WebTransport beside the websocket, straight and through nginx (issue 28).
    #[value(name = "webtransport")]
    WebTransport,
}

impl Section {
    /// Every section, in the order a run takes them.
    pub const ALL: [Section; 13] = [
        Section::Criterion,
        Section::Steps,
        Section::Control,
        Section::Idle,
        Section::Arrivals,
        Section::Failover,
        Section::Aoi,
        Section::Crowd,
        Section::Redis,
        Section::Nginx,
        Section::Peer,
        Section::Deltas,
        Section::WebTransport,
    ];

    /// Its name on the command line and in `commands-NAME.txt`.
    pub fn label(self) -> &'static str {
        match self {
            Section::Criterion => "criterion",
            Section::Steps => "steps",
            Section::Control => "control",
            Section::Idle => "idle",
            Section::Arrivals => "arrivals",
            Section::Failover => "failover",
            Section::Aoi => "aoi",
            Section::Crowd => "crowd",
            Section::Redis => "redis",
            Section::Nginx => "nginx",
            Section::Peer => "peer",
            Section::Deltas => "deltas",
            Section::WebTransport => "webtransport",
        }
    }

    /// Whether the folder `name` of `raw/` is the one this section writes
    /// (a rerun removes it first). Only these: any other folder is a record
    /// kept by hand (say `webtransport-repeat3/`, rows of an earlier attempt)
    /// and survives every rerun, whatever its name starts with.
    pub fn owns_folder(self, name: &str) -> bool {
        match self {
            Section::Nginx => name == "nginx",
            Section::WebTransport => name == "webtransport",
            _ => false,
        }
    }

    /// Whether a file of `raw/` (its name, or `logs/NAME`) was written by
    /// this section: a rerun removes them first. A prefix is a label and the
    /// separator after it (`.` or `-`), so that a file kept by hand whose
    /// name merely starts like a label survives; the sections that write
    /// folders ([`Section::owns_folder`]) own no file.
    pub fn owns(self, name: &str) -> bool {
        let name = name.strip_prefix("logs/").unwrap_or(name);
        let prefixes: &[&str] = match self {
            Section::Criterion => &["criterion."],
            Section::Steps => &["one-shard.", "one-shard-", "two-shards.", "two-shards-"],
            Section::Control => &["control-"],
            Section::Idle => &["idle-", "malloc-"],
            Section::Arrivals => &["arrivals.", "arrivals-"],
            Section::Failover => &["failover-"],
            Section::Aoi => &["aoi-"],
            Section::Crowd => &["crowd-"],
            Section::Redis => &["redis-"],
            Section::Nginx => &[],
            Section::Peer => &["peer-"],
            Section::Deltas => &["deltas-"],
            Section::WebTransport => &[],
        };
        prefixes.iter().any(|p| name.starts_with(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_own_their_files_only() {
        assert!(Section::Steps.owns("one-shard.server.json") && Section::Steps.owns("logs/two-shards-shard-a.log"));
        assert!(Section::Idle.owns("malloc-glibc-15000-1.json") && !Section::Idle.owns("aoi-1000-on.json"));
        assert!(Section::Arrivals.owns("arrivals.server.json") && Section::Arrivals.owns("logs/arrivals-loadgen.log"));
        // Kept by hand: a name that starts like a label, but not as a label.
        assert!(!Section::Steps.owns("one-shards-old.json") && !Section::Arrivals.owns("arrivalsold.json"));
        for (s, name) in [(Section::Nginx, "nginx-tcp-1.json"), (Section::WebTransport, "webtransport-repeat3.json")] {
            assert!(!s.owns(name) && !s.owns(&format!("logs/{name}")), "{s:?} writes folders only");
        }
        for s in Section::ALL {
            assert!(!s.owns("run.tsv") && !s.owns("commands-steps.txt") && !s.owns("heap-idle-10000.json"), "{s:?}");
        }
        assert_eq!(Section::ALL.iter().filter(|s| s.owns("criterion.json")).count(), 1);
        assert!(
            Section::Deltas.owns("deltas-aoi-1000-full-2.server.json")
                && Section::Deltas.owns("deltas-trace-walk.json")
        );
        assert!(
            !Section::Aoi.owns("deltas-aoi-1000-deltas-1.json")
                && !Section::Crowd.owns("deltas-crowd-2000-full-1.json")
        );
    }

    #[test]
    fn folders_kept_by_hand_survive_every_section() {
        assert!(Section::Nginx.owns_folder("nginx") && Section::WebTransport.owns_folder("webtransport"));
        for s in Section::ALL {
            for kept in ["webtransport-repeat3", "deltas-cpu-pairs", "nginx-old", "loadgen-held", "logs"] {
                assert!(!s.owns_folder(kept), "{s:?} {kept}");
            }
        }
    }
}
