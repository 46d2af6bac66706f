//! The fan-out: hands each tick's [`TickFrame`] to every admitted socket's
//! [`Outbox`], right after the tick encodes it.
//!
//! One pass over the sockets, one non-blocking vectored write each, no task
//! woken per socket: the per-socket cost is the `writev` system call and a few
//! reference counts. A socket the kernel cannot take a whole tick from is left
//! to its session task to finish, so the pass never waits.
//!
//! The first version woke one task per socket per tick through a broadcast
//! channel. At 1,000 players on one shard that cost 4.3 to 5.9 µs of user CPU
//! per delivered frame (5.17 in `benches/RESULTS.md` at commit 0f6321a); this
//! pass costs 2.0 to 2.9 µs (2.08 in `benches/RESULTS.md` at ebc417c).
//! The order of the pass is the order of joining and does not change from
//! tick to tick, so each socket's frame leaves at about the same offset into
//! every tick.

use super::outbox::Outbox;
use crate::clock;
use crate::metrics::{Metrics, Tally};
use crate::shard::{LinkId, TickFrame, ViewFrames};
use std::sync::Arc;

/// The admitted sockets of one shard. Owned by the tick loop.
pub struct Fanout {
    outboxes: Vec<(LinkId, Arc<Outbox>)>,
    metrics: Metrics,
}

impl Fanout {
    /// An empty fan-out counting into `metrics`.
    pub fn new(metrics: Metrics) -> Fanout {
        Fanout { outboxes: Vec::new(), metrics }
    }

    /// Adds an admitted socket, filed under its link; it gets every tick from
    /// the next one on.
    pub fn add(&mut self, link: LinkId, outbox: Arc<Outbox>) {
        self.outboxes.push((link, outbox));
    }

    /// Writes `frame` to every socket (the frames for all, and those of the
    /// view group `view_of` names for its link), forgets closed and stuck
    /// ones, and counts the writes in the metrics.
    pub fn deliver(&mut self, frame: &TickFrame, view_of: impl Fn(LinkId) -> usize) {
        let now = clock::now();
        let mut tally = Tally::default();
        let none = ViewFrames::default();
        self.outboxes.retain(|(link, outbox)| {
            let view = frame.views.get(view_of(*link)).unwrap_or(&none);
            outbox.deliver(frame, view, now, &mut tally)
        });
        self.metrics.count_writes(tally);
    }
}
