//! The tick's due table: what a view holding a cell at its tiers' aligned
//! step (no exception of it, see [`super::views`]) is sent of each stream at
//! each period, worked out once a tick for every view to read.
//!
//! A walking place assembles hundreds of views a tick, each asking every
//! stream of its 81 or so cells what is due ([`Stream::due`](super::streams::Stream::due)): the same
//! question, with the same answer, for every view that sees the cell at the
//! same period. Asked of the streams, each answer is a chain of dependent
//! loads (the cell's slot, its stream, the delta history, the item), most of
//! them cache misses; here the first view to ask works it out and the others
//! read it from a dense table indexed by slot and source. An answer that is
//! not nothing or one delta ([`Due::Ask`]) is worked out by the view itself.
//!
//! Measured (same frames, the digest unchanged): section 15's walk without
//! sockets, `target/release/delta_cost --frames deltas`, median of 7, went
//! from 9.14 to 6.65 µs a player a tick (full frames: 8.27); with sockets,
//! 1,000 walkers over 2 shards, the views' share of a shard's `perf record`
//! samples went from 21 % to 14 %.

use super::grid::CellId;
use super::streams::{DeltaRef, Due, SourceId, Streams};

/// The periods tabulated: 1, 2, 4 ... 64 ticks (every period of
/// [`super::interest::LADDER`]).
const PERIODS: usize = 7;

/// An entry: not worked out yet this tick.
const UNKNOWN: u32 = u32::MAX;
/// An entry: nothing (no stream, not due, or unchanged).
const NOTHING: u32 = 0;
/// An entry: ask the stream.
const ASK: u32 = 1;
/// An entry at or above this (below [`UNKNOWN`]) is a delta:
/// `items[entry - FIRST_ITEM]`.
const FIRST_ITEM: u32 = 2;

/// Room for a [`DueTable`]'s entries, kept between ticks.
pub(crate) type DueRoom = Vec<[u32; PERIODS]>;

/// Per (slot, source): per period 2^k, an answer or [`UNKNOWN`].
#[derive(Debug)]
pub(crate) struct DueTable<'a> {
    streams: &'a Streams,
    entries: DueRoom,
    /// The delta items the entries name, with the step each ends at.
    items: Vec<(DeltaRef<'a>, u64)>,
    /// Sources per slot (the table's row width).
    sources: usize,
}

impl<'a> DueTable<'a> {
    /// A table of this tick's `streams`, nothing worked out yet, in `room`
    /// (taken back with [`DueTable::into_room`]). Its 28 bytes a stream slot
    /// and source are set at the first read, so a tick that assembles no
    /// view (a standing place) writes none.
    pub(crate) fn new(streams: &'a Streams, mut room: DueRoom) -> DueTable<'a> {
        room.clear();
        DueTable { streams, entries: room, items: Vec::new(), sources: usize::from(streams.sources_len()) }
    }

    /// What a view holding `cell` (of slot `slot`) at its aligned step for
    /// `period` ticks is sent of `source`'s stream there: the stream's
    /// [`Stream::due`](super::streams::Stream::due), worked out once a tick ([`Due::Ask`] for a period
    /// not tabulated, [`Due::Nothing`] with no stream).
    #[inline]
    pub(crate) fn get(&mut self, slot: u32, source: SourceId, cell: CellId, period: u32) -> Due<'a> {
        let k = period.trailing_zeros() as usize;
        if period & period.wrapping_sub(1) != 0 || k >= PERIODS {
            return Due::Ask;
        }
        if self.entries.is_empty() {
            self.entries.resize(self.streams.slots_len() * self.sources, [UNKNOWN; PERIODS]);
        }
        let at = slot as usize * self.sources + usize::from(source);
        let Some(entry) = self.entries.get_mut(at).map(|row| &mut row[k]) else { return Due::Ask };
        if *entry == UNKNOWN {
            let due = self.streams.get(source, cell).map_or(Due::Nothing, |stream| stream.due(period));
            *entry = match due {
                Due::Nothing => NOTHING,
                Due::Ask => ASK,
                Due::Delta(item, step) => {
                    self.items.push((item, step));
                    FIRST_ITEM + self.items.len() as u32 - 1
                }
            };
            return due;
        }
        match *entry {
            NOTHING => Due::Nothing,
            ASK => Due::Ask,
            i => self.items.get((i - FIRST_ITEM) as usize).map_or(Due::Ask, |&(item, step)| Due::Delta(item, step)),
        }
    }

    /// The entries' room, for the next tick's table.
    pub(crate) fn into_room(self) -> DueRoom {
        self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::super::streams::Stream;
    use super::*;
    use bytes::Bytes;
    use mino_protocol::ShardId;

    #[test]
    fn the_table_answers_as_the_stream_does_and_works_each_out_once() {
        let mut streams = Streams::new(16, ShardId(1));
        let relayed = streams.source_of(ShardId(2));
        // Cell 3 changed at step 1 (own and relayed), cell 5 never (own).
        for (source, cell, changed) in [(0, 3, true), (relayed, 3, true), (0, 5, false)] {
            let stream = streams.get_or_insert(source, CellId(cell), || Stream::new(0, 0)).expect("on the grid");
            stream.push(1, Bytes::from_static(b"full"), true, changed, &[(1, Bytes::from_static(b"d1"))]);
        }
        let mut table = DueTable::new(&streams, Vec::new());
        for _ in 0..2 {
            for (source, cell) in [(0, 3), (relayed, 3), (0, 5), (relayed, 5)] {
                let cell = CellId(cell);
                let Some(slot) = streams.slot_of(cell) else { panic!("cell {cell:?} has streams") };
                for period in [1, 2, 4, 8, 16, 32, 64] {
                    let want = streams.get(source, cell).map_or(Due::Nothing, |s| s.due(period));
                    assert_eq!(table.get(slot, source, cell, period), want, "{source} {cell:?} {period}");
                }
            }
        }
        let slot = streams.slot_of(CellId(3)).unwrap_or(u32::MAX);
        let Due::Delta(d1, 1) = table.get(slot, 0, CellId(3), 1) else { panic!("the one-step delta") };
        assert_eq!(&d1.kept[..], b"d1");
        assert_eq!(table.get(slot, 0, CellId(3), 3), Due::Ask, "a period not tabulated");
        assert_eq!(table.items.len(), 2, "each delta worked out once");
    }
}
