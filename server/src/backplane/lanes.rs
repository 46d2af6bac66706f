//! Writes whose replies are not needed (publishes, a shard's last snapshot,
//! its players hash), sent in independent lanes: one a slot on a Redis
//! Cluster, one in all on one node or Sentinel. A lane sends its writes in
//! order, one at a time; no lane ever waits on another. So on a cluster a
//! primary that is down (until its replica is promoted) holds up only the
//! lanes of its own slots, while every tick's frames to the healthy
//! primaries go out as usual.
//!
//! What a held-up lane keeps is bounded: its newest frame (a newer one
//! replaces a frame still waiting, as a socket's outbox does) and up to
//! [`EVENT_BACKLOG`] events in order (chat, presence, the players hash;
//! more are dropped). A write with a deadline not started by then is
//! dropped (a stale snapshot must not speak for the shard later). Every
//! write that does not go out is reported, for the metrics.

use super::{Backplane, RedisError};
use crate::clock::{self, Instant};
use futures_util::future::BoxFuture;
use futures_util::stream::{FuturesUnordered, StreamExt};
use redis::cluster_routing::Slot;
use redis::Pipeline;
use std::collections::{HashMap, VecDeque};

/// Most events one lane holds while its write in flight has not answered;
/// later ones are dropped. About a second of a busy shard's presence and
/// chat, and what a dead primary's command timeout lets pile up.
pub const EVENT_BACKLOG: usize = 256;

/// How a lane keeps a write that must wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backlog {
    /// Only the newest such write waits: it replaces an older one (frames).
    Newest,
    /// In order, up to [`EVENT_BACKLOG`] (events).
    InOrder,
}

/// One write: a pipeline (a transaction when atomic) within one slot.
pub struct Write<T> {
    /// The commands.
    pub pipe: Pipeline,
    /// How it waits.
    pub backlog: Backlog,
    /// Not started by then, it is dropped ([`Outcome::Stale`]).
    pub deadline: Option<Instant>,
    /// What the caller wants back with its [`Outcome`].
    pub tag: T,
}

/// What became of a write.
#[derive(Debug)]
pub enum Outcome {
    /// Redis took it.
    Sent,
    /// It failed or timed out.
    Failed(RedisError),
    /// A newer [`Backlog::Newest`] write of its lane replaced it before it
    /// could start.
    Replaced,
    /// Its lane's event backlog was full.
    Overflow,
    /// Its deadline passed before its turn.
    Stale,
}

/// A write's tag and what became of it.
pub type Done<T> = (T, Outcome);

/// A write that ran: its lane, its tag, Redis's answer.
type Ran<T> = (Slot, T, Result<(), RedisError>);

struct Lane<T> {
    /// A write of this lane is in flight.
    busy: bool,
    events: VecDeque<Write<T>>,
    newest: Option<Write<T>>,
}

/// Every lane of one writer (the publisher). Driven by its owner's loop:
/// [`Lanes::push`] to write, [`Lanes::next`] for what became of each.
pub struct Lanes<T> {
    backplane: Backplane,
    lanes: HashMap<Slot, Lane<T>>,
    running: FuturesUnordered<BoxFuture<'static, Ran<T>>>,
    /// Writes that ended without being sent, not yet reported.
    ended: VecDeque<Done<T>>,
}

impl<T: Send + 'static> Lanes<T> {
    /// No lane yet, over `backplane`.
    pub fn new(backplane: Backplane) -> Lanes<T> {
        Lanes { backplane, lanes: HashMap::new(), running: FuturesUnordered::new(), ended: VecDeque::new() }
    }

    /// Writes `write` on the lane of `slot` ([`Backplane::slot_of`]): at once
    /// when the lane is idle, else after the lane's earlier writes.
    pub fn push(&mut self, slot: Slot, write: Write<T>) {
        let lane =
            self.lanes.entry(slot).or_insert_with(|| Lane { busy: false, events: VecDeque::new(), newest: None });
        match write.backlog {
            Backlog::Newest => {
                if let Some(old) = lane.newest.replace(write) {
                    self.ended.push_back((old.tag, Outcome::Replaced));
                }
            }
            Backlog::InOrder if lane.events.len() >= EVENT_BACKLOG => {
                self.ended.push_back((write.tag, Outcome::Overflow));
            }
            Backlog::InOrder => lane.events.push_back(write),
        }
        self.start(slot);
    }

    /// What became of the next write to end (sent, failed, or dropped);
    /// pending while none is in flight and none ended unreported.
    pub async fn next(&mut self) -> Done<T> {
        if let Some(done) = self.ended.pop_front() {
            return done;
        }
        let Some((slot, tag, result)) = self.running.next().await else {
            return std::future::pending().await;
        };
        if let Some(lane) = self.lanes.get_mut(&slot) {
            lane.busy = false;
        }
        self.start(slot);
        (tag, result.map_or_else(Outcome::Failed, |()| Outcome::Sent))
    }

    /// Starts the lane's next write if it is idle (events first, then the
    /// newest frame, as the tick staged them); forgets an idle empty lane.
    fn start(&mut self, slot: Slot) {
        let Some(lane) = self.lanes.get_mut(&slot) else { return };
        if lane.busy {
            return;
        }
        let now = clock::now();
        while let Some(write) = lane.events.pop_front().or_else(|| lane.newest.take()) {
            if write.deadline.is_some_and(|d| now > d) {
                self.ended.push_back((write.tag, Outcome::Stale));
                continue;
            }
            lane.busy = true;
            let backplane = self.backplane.clone();
            let Write { pipe, tag, .. } = write;
            self.running.push(Box::pin(async move {
                let result = backplane.pipe::<redis::Value>(&pipe).await.map(|_| ());
                (slot, tag, result)
            }));
            return;
        }
        self.lanes.remove(&slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backplane::RedisTarget;
    use crate::metrics::Metrics;
    use std::time::Duration;

    /// Lanes over a Redis that refuses connections (port 1): every write
    /// that starts fails, quickly.
    fn lanes() -> Lanes<u32> {
        let metrics = Metrics::register(&mut prometheus_client::registry::Registry::default());
        let backplane = Backplane::new(&RedisTarget::Node("redis://127.0.0.1:1".into()), "t", 1, &metrics);
        Lanes::new(backplane.expect("a redis URL"))
    }

    fn write(tag: u32, backlog: Backlog, deadline: Option<Instant>) -> Write<u32> {
        Write { pipe: redis::pipe(), backlog, deadline, tag }
    }

    #[tokio::test]
    async fn a_lane_keeps_its_newest_frame_and_its_events_in_order_and_no_lane_waits_on_another() {
        let mut lanes = lanes();
        let (a, b) = (Slot::for_key("{a}"), Slot::for_key("{b}"));
        lanes.push(a, write(1, Backlog::Newest, None));
        lanes.push(a, write(2, Backlog::Newest, None));
        lanes.push(a, write(3, Backlog::InOrder, None));
        lanes.push(a, write(4, Backlog::Newest, None));
        lanes.push(b, write(10, Backlog::Newest, None));
        let mut ended = Vec::new();
        while ended.len() < 5 {
            let (tag, outcome) = tokio::time::timeout(Duration::from_secs(10), lanes.next()).await.expect("ended");
            ended.push((tag, matches!(outcome, Outcome::Replaced)));
        }
        // 2 is replaced by 4 at once; 1 and 10 start at once, each on its
        // lane; then lane a's event, then its newest frame.
        assert_eq!(ended[0], (2, true));
        let order: Vec<u32> = ended[1..].iter().map(|e| e.0).collect();
        let a_order: Vec<u32> = order.iter().copied().filter(|t| *t != 10).collect();
        assert_eq!(a_order, [1, 3, 4], "{order:?}");
        assert!(order.contains(&10));
    }

    #[tokio::test]
    async fn a_full_backlog_drops_new_events_and_a_stale_write_never_starts() {
        let mut lanes = lanes();
        let slot = Slot::for_key("{a}");
        lanes.push(slot, write(0, Backlog::InOrder, None));
        for tag in 1..=EVENT_BACKLOG as u32 + 1 {
            lanes.push(slot, write(tag, Backlog::InOrder, None));
        }
        let (tag, outcome) = lanes.next().await;
        assert!(matches!(outcome, Outcome::Overflow) && tag == EVENT_BACKLOG as u32 + 1, "{tag} {outcome:?}");
        let other = Slot::for_key("{b}");
        lanes.push(other, write(100, Backlog::InOrder, None));
        lanes.push(other, write(101, Backlog::Newest, Some(clock::now())));
        tokio::time::sleep(Duration::from_millis(5)).await;
        let mut stale = false;
        for _ in 0..EVENT_BACKLOG + 2 {
            let (tag, outcome) = tokio::time::timeout(Duration::from_secs(10), lanes.next()).await.expect("ended");
            if tag == 101 {
                stale = matches!(outcome, Outcome::Stale);
                break;
            }
        }
        assert!(stale, "a frame past its deadline when its turn came is dropped, not written");
    }
}
