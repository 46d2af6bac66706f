//! What drives the core besides the sessions' commands: the tick's timing,
//! and what the cluster tasks (and the driver's own ownership check) report.

use crate::clock::Instant;
use crate::order::Order;
use bytes::Bytes;
use mino_protocol::{PlayerId, ShardId, Tick};
use std::sync::Arc;
use std::time::Duration;

/// When a tick runs.
#[derive(Clone, Copy, Debug)]
pub struct TickAt {
    /// The scheduled tick's number: ticks count scheduled ticks, so after a
    /// stall the number jumps by the ticks skipped.
    pub tick: Tick,
    /// How late the tick started after its scheduled instant.
    pub lateness: Duration,
    /// The tick's start, monotonic.
    pub now: Instant,
    /// The tick's start, wall clock, ms since the Unix epoch (written into
    /// the frames as server time).
    pub wall_ms: u64,
    /// Clustered: the last heartbeat reached Redis.
    pub redis_up: bool,
}

/// What the cluster tasks tell the core (through the driver).
#[derive(Debug)]
pub enum ClusterEvent {
    /// Another shard's cells of one region and step: their full forms and
    /// deltas, as published.
    Bundle(super::aoi::Relayed),
    /// Another shard's chat frame.
    Chat {
        /// Exact bytes.
        bytes: Bytes,
    },
    /// Another shard's presence frame and its delta.
    Presence {
        /// Publisher.
        shard: ShardId,
        /// Its presence sequence number.
        seq: u64,
        /// Exact bytes.
        bytes: Bytes,
        /// Players that joined, with names.
        joined: Vec<(PlayerId, Arc<str>)>,
        /// Players that left.
        left: Vec<PlayerId>,
    },
    /// The other shards alive now.
    Live(Vec<ShardId>),
    /// Another process took this shard's id while this one was away from
    /// Redis longer than its TTL (the same `--shard-id` started twice): this
    /// one moves its players away and stops, so that one process serves the
    /// id. Handled by the tick driver (a drain), not the core.
    Superseded,
    /// The full player list of a shard that appeared, came back or
    /// restarted, after a resubscription, and every few seconds
    /// (anti-entropy).
    Roster {
        /// Whose.
        shard: ShardId,
        /// The shard's presence epoch (another one than before: it restarted,
        /// and this list replaces what was known whatever the numbers).
        epoch: u64,
        /// The presence sequence number the list is current to (0: unknown).
        seq: u64,
        /// Its players.
        players: Vec<(PlayerId, Arc<str>)>,
    },
    /// Another shard resumed `player` at `generation`: drop it here.
    Takeover {
        /// Who.
        player: PlayerId,
        /// The session's generation on the new owner.
        generation: u64,
    },
    /// An operator's order from the control channel (for whichever shard
    /// it concerns).
    Order(Order),
    /// After a fence: the players that were resumed elsewhere meanwhile.
    Verified {
        /// To drop.
        lost: Vec<PlayerId>,
    },
    /// The periodic ownership audit's answer: players here whose session
    /// another shard owns (their takeover notices were lost).
    Audited {
        /// To drop, with the session generation they were audited at (a
        /// player claimed here again since is kept).
        lost: Vec<(PlayerId, u64)>,
    },
    /// A block of cluster-unique player ids `[start, start + len)`.
    Ids {
        /// First id.
        start: u32,
        /// How many.
        len: u32,
    },
}
