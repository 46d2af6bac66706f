//! What a view frame's bytes are spent on: the parts an observer counts, so
//! a load tester sees where a place's bytes go (issue 25 asks for entries,
//! references and headers apart) and what an encoding change would save.
//!
//! The layout is `schema/src/view.rs`'s: a FlatBuffers envelope, then
//! sections (a 4-byte shard, a 4-byte tick and a varint head each, and,
//! protocol 7, a block of implied cells: the view named and a bit a
//! candidate), then each cell's reference (id gap and mode, an item count
//! where several) and its items (tag, length, body).

use mino_protocol::delta::decode_full;
use mino_protocol::held::Held;
use mino_protocol::view::{ItemKind, ViewFrame};
use std::collections::HashSet;

/// A view frame's bytes by part, bytes; and its cells, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameParts {
    /// The FlatBuffers envelope and the sections' headers.
    pub framing: usize,
    /// The cells' references (and item counts).
    pub references: usize,
    /// Full-form items, whole.
    pub full: usize,
    /// Delta items written out, whole, and the unchanged items before them
    /// (a lossy client's check of a delta's base).
    pub delta: usize,
    /// Supplement items, whole.
    pub supplement: usize,
    /// Forget items (a tag each).
    pub forget: usize,
    /// Sections' implied blocks (protocol 7): the view named, the due
    /// byte, the count and the bits.
    pub implied: usize,
    /// Cells in the frame.
    pub cells: usize,
    /// Cells whose one item was an empty delta said by the reference alone.
    pub empty_deltas: usize,
    /// Implied cells (protocol 7): an empty delta said by one bit.
    pub implied_cells: usize,
    /// Players in supplements.
    pub supplement_entries: usize,
    /// Of them, players the client held in another cell of the same shard
    /// before the frame: handed off between cells of its view over
    /// different spans (the rest came into the view).
    pub supplement_entries_held: usize,
}

impl FrameParts {
    /// The parts of `frame`, a verified view frame whose message (envelope
    /// included) is `len` bytes, for a client that holds `held` before it.
    pub fn of(frame: &ViewFrame<'_>, len: usize, held: &Held) -> FrameParts {
        let view = frame.bytes();
        let inside = view.as_ptr_range();
        let mut parts = FrameParts { framing: len.saturating_sub(view.len()), ..FrameParts::default() };
        let mut items = 0;
        let (mut known, mut entries) = (HashSet::new(), Vec::new());
        for section in frame.sections() {
            known.clear();
            let mut cells = 0usize;
            for cell in section.cells() {
                cells += 1;
                for item in cell.items() {
                    // An empty delta said by the reference reads as an item
                    // whose tag is not among the frame's bytes.
                    if !inside.contains(&item.bytes.as_ptr()) {
                        parts.empty_deltas += 1;
                        continue;
                    }
                    items += item.bytes.len();
                    let part = match item.kind {
                        ItemKind::Full => &mut parts.full,
                        ItemKind::Delta { .. } | ItemKind::Unchanged => &mut parts.delta,
                        ItemKind::Supplement => &mut parts.supplement,
                        ItemKind::Forget => &mut parts.forget,
                    };
                    *part += item.bytes.len();
                    if item.kind == ItemKind::Supplement && decode_full(item.body, usize::MAX, &mut entries).is_ok() {
                        if known.is_empty() {
                            known.extend(
                                held.cells()
                                    .filter(|(key, _)| key.0 == section.shard)
                                    .flat_map(|(_, c)| c.entries.iter().map(|e| e.id)),
                            );
                        }
                        parts.supplement_entries += entries.len();
                        parts.supplement_entries_held += entries.iter().filter(|e| known.contains(&e.id)).count();
                    }
                }
            }
            parts.cells += cells;
            parts.framing += section.header_bytes();
            parts.implied += section.implied_bytes();
            parts.implied_cells += section.implied_cells();
        }
        parts.references = len.saturating_sub(parts.framing + parts.implied + items);
        parts
    }

    /// Every byte counted: the frame's length.
    pub fn total(&self) -> usize {
        self.framing + self.references + self.full + self.delta + self.supplement + self.forget + self.implied
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::delta::{encode_delta, encode_full};
    use mino_protocol::entry::Entry;
    use mino_protocol::motion::Motion;
    use mino_protocol::server::{self, ServerMsg};
    use mino_protocol::view::{
        encode_full_view, encode_view, implied_bytes, write_item, write_section, write_section_cell,
        write_section_header_implied, Implied, Section, SectionView, VIEW_ENVELOPE_BYTES,
    };
    use mino_protocol::wire::Bounds;
    use mino_protocol::PlayerId;

    fn entry(id: u32, x: u16) -> Entry {
        Entry { id: PlayerId(id), x, y: 100, heading: 0, flags: 0 }
    }

    #[test]
    fn every_byte_of_a_frame_is_one_part() {
        let motion = Motion::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0, 20);
        let players = [entry(1, 100), entry(2, 200)];
        let (mut full, mut delta, mut empty) = (Vec::new(), Vec::new(), Vec::new());
        encode_full(&players, &mut full);
        let moved = [entry(1, 100), entry(2, 300)];
        encode_delta(&players, &moved, 1, &motion, &mut delta);
        encode_delta(&players, &players, 1, &motion, &mut empty);
        let mut items = vec![Vec::new(); 5];
        write_item(&mut items[0], ItemKind::Full, &full);
        write_item(&mut items[1], ItemKind::Delta { span: 1 }, &delta);
        write_item(&mut items[2], ItemKind::Delta { span: 1 }, &empty);
        write_item(&mut items[3], ItemKind::Forget, &[]);
        write_item(&mut items[4], ItemKind::Supplement, &full);
        let cells: Vec<(u32, Vec<&[u8]>)> =
            vec![(3, vec![&items[0]]), (4, vec![&items[1], &items[4]]), (9, vec![&items[2]]), (20, vec![&items[3]])];
        let mut sections = Vec::new();
        write_section(&mut sections, &Section { shard: 7, tick: 40, cells: &cells });
        write_section(&mut sections, &Section::<(u32, Vec<&[u8]>)> { shard: 8, tick: 41, cells: &[] });
        // Protocol 7: a section implying three of ten candidates, with one
        // cell told.
        let bits = [0b1000_0101, 0];
        let view = SectionView { key: 40, previous: 41, rung: 1 };
        let block = Implied { view, due: 2, count: 10, bits: &bits };
        write_section_header_implied(&mut sections, 9, 42, 1, &block, true);
        write_section_cell(&mut sections, 0, 30, &[&items[3]]);
        let message = encode_view(&sections);
        let Ok(ServerMsg::View(frame)) = server::decode(&message) else { panic!("a view frame") };
        let mut held = Held::new(motion, 100);
        // The client holds player 2 in cell 5 of shard 7 (walked into 4).
        let before = [(7u32, 5u32, vec![entry(2, 200)])];
        let mut prior = Vec::new();
        for (shard, cell, players) in &before {
            prior.extend(encode_full_view(*shard, 39, *cell, players));
        }
        let Ok(ServerMsg::View(prior)) = server::decode(&prior) else { panic!("a view frame") };
        held.apply(&prior).expect("applies");
        let parts = FrameParts::of(&frame, message.len(), &held);
        assert_eq!((parts.supplement_entries, parts.supplement_entries_held), (2, 1));
        assert_eq!(parts.total(), message.len());
        assert_eq!(parts.framing, VIEW_ENVELOPE_BYTES + 9 + 9 + 9);
        assert_eq!((parts.full, parts.supplement, parts.forget), (items[0].len(), items[4].len(), 2));
        assert_eq!(parts.delta, items[1].len(), "the empty delta is said by its reference");
        assert_eq!((parts.cells, parts.empty_deltas, parts.implied_cells), (5, 1, 3));
        // The due byte, the key, the previous cell's code, the count and two bytes of bits.
        assert_eq!(parts.implied, implied_bytes(&block, true));
        assert_eq!(parts.implied, 1 + 1 + 1 + 1 + 2);
        // Five references (cell 30's in two bytes), one with an item count.
        assert_eq!(parts.references, 7);
    }
}
