//! What a shard tells its operator at info about the place around it: other
//! shards leaving or joining its view (a failover starts and ends with
//! these), and the players resumed here, counted over a window rather than
//! one line a player (a dead shard's 500 players arrive within a second).
//! Pure: the caller passes the time, and logs the lines these return.

use mino_protocol::ShardId;
use std::collections::BTreeMap;
use std::fmt;

/// How long resumes are gathered into one line, ms.
pub const RESUME_WINDOW_MS: u64 = 1000;

/// Shards that joined and left the view between two lists of live shards.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ViewChange {
    /// Shards newly live.
    pub joined: Vec<ShardId>,
    /// Shards gone, with the players this shard knew on each.
    pub left: Vec<(ShardId, usize)>,
}

/// The change from `before` (live shards with their players) to `now`.
pub fn view_change(before: &[(ShardId, usize)], now: &[ShardId]) -> ViewChange {
    let mut change = ViewChange {
        joined: now.iter().filter(|s| !before.iter().any(|(b, _)| b == *s)).copied().collect(),
        left: before.iter().filter(|(b, _)| !now.contains(b)).copied().collect(),
    };
    change.joined.sort_unstable();
    change.left.sort_unstable();
    change
}

/// Where resumed players came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ResumedFrom {
    /// Another shard (failover, drain).
    Shard(ShardId),
    /// This shard (the player reconnected to it).
    Here,
}

/// One line's worth of resumes.
#[derive(Debug, PartialEq, Eq)]
pub struct Resumes {
    /// Players resumed in the window.
    pub total: usize,
    /// The window's length, ms (from the first resume to the line).
    pub over_ms: u64,
    /// By origin, in order.
    pub by_origin: Vec<(ResumedFrom, usize)>,
}

impl fmt::Display for Resumes {
    /// `from shard 00000002: 248, reconnected here: 2` (a shard as [`ShardId`] writes it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (from, n)) in self.by_origin.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match from {
                ResumedFrom::Shard(s) => write!(f, "from shard {s}: {n}")?,
                ResumedFrom::Here => write!(f, "reconnected here: {n}")?,
            }
        }
        Ok(())
    }
}

/// Counts resumes until a line is due.
#[derive(Debug, Default)]
pub struct ResumeTally {
    /// When the window's first resume came, wall ms.
    since_ms: Option<u64>,
    counts: BTreeMap<ResumedFrom, usize>,
}

impl ResumeTally {
    /// A player resumed here at `wall_ms`.
    pub fn record(&mut self, from: ResumedFrom, wall_ms: u64) {
        self.since_ms.get_or_insert(wall_ms);
        *self.counts.entry(from).or_default() += 1;
    }

    /// The line due at `wall_ms`: once [`RESUME_WINDOW_MS`] passed since the
    /// window's first resume (then a new window starts with the next one).
    pub fn due(&mut self, wall_ms: u64) -> Option<Resumes> {
        let since = self.since_ms?;
        if wall_ms.saturating_sub(since) < RESUME_WINDOW_MS {
            return None;
        }
        self.since_ms = None;
        let by_origin: Vec<(ResumedFrom, usize)> = std::mem::take(&mut self.counts).into_iter().collect();
        Some(Resumes { total: by_origin.iter().map(|(_, n)| n).sum(), over_ms: wall_ms - since, by_origin })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_and_left_shards_are_told_apart() {
        let before = [(ShardId(2), 250), (ShardId(3), 0)];
        let change = view_change(&before, &[ShardId(3), ShardId(4)]);
        assert_eq!(change, ViewChange { joined: vec![ShardId(4)], left: vec![(ShardId(2), 250)] });
        assert_eq!(view_change(&before, &[ShardId(3), ShardId(2)]), ViewChange::default());
    }

    #[test]
    fn resumes_make_one_line_a_window_with_counts_by_origin() {
        let mut t = ResumeTally::default();
        assert_eq!(t.due(0), None, "nothing resumed");
        for i in 0..248 {
            t.record(ResumedFrom::Shard(ShardId(2)), 10_000 + i);
        }
        t.record(ResumedFrom::Here, 10_300);
        t.record(ResumedFrom::Here, 10_400);
        assert_eq!(t.due(10_900), None, "the window is still open");
        let line = t.due(11_050).expect("due after a second");
        assert_eq!(line.total, 250);
        assert_eq!(line.over_ms, 1050);
        assert_eq!(line.to_string(), "from shard 00000002: 248, reconnected here: 2");
        assert_eq!(t.due(20_000), None, "told once");
        t.record(ResumedFrom::Here, 30_000);
        assert_eq!(t.due(31_000).map(|l| l.total), Some(1), "a new window");
    }
}
