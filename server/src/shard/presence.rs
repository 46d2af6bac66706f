//! Who joined and left this shard since the last tick, and the presence
//! sequence number its deltas carry. A player who joins and leaves within one
//! tick never shows up; one who leaves and comes back within one tick (a
//! resume) is never reported gone.

use bytes::Bytes;
use mino_protocol::server as msg;
use mino_protocol::{PlayerId, ShardId};
use std::sync::Arc;

/// One tick's presence delta, encoded, with its parts (for the players hash
/// the publisher keeps in Redis).
#[derive(Debug)]
pub(crate) struct Delta {
    pub(crate) bytes: Bytes,
    pub(crate) seq: u64,
    pub(crate) joined: Vec<(PlayerId, Arc<str>)>,
    pub(crate) left: Vec<PlayerId>,
}

/// The staged delta of one shard.
#[derive(Debug, Default)]
pub(crate) struct Presence {
    joined: Vec<(PlayerId, Arc<str>)>,
    left: Vec<PlayerId>,
    seq: u64,
}

impl Presence {
    /// Starts the sequence at `epoch` (the start time in µs, so a restarted
    /// shard's numbers keep increasing).
    pub(crate) fn with_epoch(epoch: u64) -> Presence {
        Presence { seq: epoch, ..Presence::default() }
    }

    /// A new player arrived.
    pub(crate) fn joined(&mut self, player: PlayerId, name: Arc<str>) {
        self.joined.push((player, name));
    }

    /// A player came back (resumed): unreported if it left this very tick.
    pub(crate) fn returned(&mut self, player: PlayerId, name: Arc<str>) {
        match self.left.iter().position(|id| *id == player) {
            Some(i) => {
                self.left.swap_remove(i);
            }
            None => self.joined.push((player, name)),
        }
    }

    /// A player left: unreported if it joined this very tick.
    pub(crate) fn left(&mut self, player: PlayerId) {
        match self.joined.iter().position(|(id, _)| *id == player) {
            Some(i) => {
                self.joined.swap_remove(i);
            }
            None => self.left.push(player),
        }
    }

    /// True when someone joined since the last tick (the roster is due).
    pub(crate) fn anyone_joined(&self) -> bool {
        !self.joined.is_empty()
    }

    /// The delta since the last call, numbered, or `None` when nothing changed.
    pub(crate) fn take(&mut self, shard: ShardId) -> Option<Delta> {
        if self.joined.is_empty() && self.left.is_empty() {
            return None;
        }
        self.seq += 1;
        let bytes = msg::encode_presence(
            shard,
            self.seq,
            self.joined.iter().map(|(id, name)| (*id, &**name)),
            self.left.iter().copied(),
        );
        Some(Delta {
            bytes,
            seq: self.seq,
            joined: std::mem::take(&mut self.joined),
            left: std::mem::take(&mut self.left),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_then_leave_within_a_tick_is_silent_and_so_is_leave_then_return() {
        let mut p = Presence::with_epoch(100);
        p.joined(PlayerId(1), "a".into());
        p.left(PlayerId(1));
        assert!(p.take(ShardId(1)).is_none());
        p.left(PlayerId(2));
        p.returned(PlayerId(2), "b".into());
        assert!(p.take(ShardId(1)).is_none());
    }

    #[test]
    fn deltas_are_numbered_from_the_epoch() {
        let mut p = Presence::with_epoch(100);
        p.joined(PlayerId(1), "a".into());
        assert!(p.anyone_joined());
        let d = p.take(ShardId(1)).expect("a delta");
        assert_eq!((d.seq, d.joined.len(), d.left.len()), (101, 1, 0));
        p.left(PlayerId(1));
        assert_eq!(p.take(ShardId(1)).map(|d| d.seq), Some(102));
        assert!(!p.anyone_joined());
    }
}
