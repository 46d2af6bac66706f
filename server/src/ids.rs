//! Player ids. Standalone, a counter. Clustered, ids must be unique across the
//! place, so they come from a counter in Redis in blocks (INCRBY), fetched ahead
//! by the registry task: a join takes the next id from memory and the tick never
//! waits for Redis.

use mino_protocol::PlayerId;
use std::collections::VecDeque;

/// Ids in one block fetched from Redis.
pub const BLOCK: u32 = 256;

/// Ids fetched in one INCRBY: four blocks.
pub const ID_FETCH: u32 = 4 * BLOCK;

/// Where a shard's next player id comes from.
#[derive(Debug)]
pub enum PlayerIds {
    /// Standalone: 1, 2, 3, ...
    Local {
        /// Next id to hand out.
        next: u32,
    },
    /// Clustered: blocks `[start, end)` allocated in Redis.
    Blocks(VecDeque<(u32, u32)>),
}

impl PlayerIds {
    /// The next id, or `None` when clustered and no block is left.
    pub fn take(&mut self) -> Option<PlayerId> {
        match self {
            PlayerIds::Local { next } => {
                let id = *next;
                *next = next.checked_add(1).unwrap_or(1);
                Some(PlayerId(id))
            }
            PlayerIds::Blocks(blocks) => loop {
                let (start, end) = blocks.front_mut()?;
                if *start < *end {
                    let id = *start;
                    *start += 1;
                    return Some(PlayerId(id));
                }
                blocks.pop_front();
            },
        }
    }

    /// Ids left before a new block is needed (`u64::MAX` standalone).
    pub fn remaining(&self) -> u64 {
        match self {
            PlayerIds::Local { .. } => u64::MAX,
            PlayerIds::Blocks(blocks) => blocks.iter().map(|(s, e)| u64::from(e.saturating_sub(*s))).sum(),
        }
    }

    /// The highest id this shard may still hand out: the last of its blocks
    /// (0 standalone, or with no block). The heartbeat keeps the place's id
    /// counter above it, so that a Redis that lost the counter never grants
    /// another shard a block overlapping one held here.
    pub fn highest_reserved(&self) -> u32 {
        match self {
            PlayerIds::Local { .. } => 0,
            PlayerIds::Blocks(blocks) => blocks.iter().map(|&(_, end)| end.saturating_sub(1)).max().unwrap_or(0),
        }
    }

    /// Adds the block `[start, start + len)` (clustered only; ignored standalone
    /// and for id 0).
    pub fn add_block(&mut self, start: u32, len: u32) {
        if let PlayerIds::Blocks(blocks) = self {
            let start = start.max(1);
            blocks.push_back((start, start.saturating_add(len)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_reserved_id_is_the_last_of_the_blocks_held_taken_or_not() {
        let mut ids = PlayerIds::Blocks(Default::default());
        assert_eq!(ids.highest_reserved(), 0);
        ids.add_block(1025, 1024);
        ids.add_block(3073, 1024);
        assert_eq!(ids.take(), Some(PlayerId(1025)));
        assert_eq!(ids.highest_reserved(), 4096);
        assert_eq!(PlayerIds::Local { next: 7 }.highest_reserved(), 0);
    }

    #[test]
    fn local_ids_count_up_from_one() {
        let mut ids = PlayerIds::Local { next: 1 };
        assert_eq!(ids.take(), Some(PlayerId(1)));
        assert_eq!(ids.take(), Some(PlayerId(2)));
    }

    #[test]
    fn blocks_run_out_and_refill() {
        let mut ids = PlayerIds::Blocks(VecDeque::new());
        assert_eq!(ids.take(), None);
        ids.add_block(500, 2);
        ids.add_block(900, 1);
        assert_eq!(ids.remaining(), 3);
        let got: Vec<_> = std::iter::from_fn(|| ids.take()).map(|p| p.0).collect();
        assert_eq!(got, [500, 501, 900]);
        assert_eq!(ids.remaining(), 0);
    }
}
