//! What view frames' bytes carry, by kind (`delta_cost --breakdown`): the
//! frame's envelope and its section and cell headers (implied blocks with
//! them), and its items by kind (`mino_protocol::view::ItemKind`): full
//! forms, deltas, empty deltas, supplements, unchanged items and forgets.
//! A cell whose one item is an empty delta over 1 to 32 ticks is written as
//! its reference alone (protocol 8): its bytes are a header's, and the cell
//! is counted apart. So the next step of an encoding is chosen by what the
//! bytes are, not guessed (issue 25's "measure before choosing").

use mino_protocol::server::{decode, ServerMsg};
use mino_protocol::view::{empty_delta_span, ItemKind};

/// View frames' bytes by what they carry, summed over the frames added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameBytes {
    /// Frames added.
    pub frames: u64,
    /// Every byte of them (the messages; a websocket's header apart).
    pub total: u64,
    /// The frame envelope, section headers (implied blocks among them) and
    /// cell headers: `total` less the items'.
    pub headers: u64,
    /// Full forms (every player of a cell).
    pub full: u64,
    /// Deltas that say something.
    pub deltas: u64,
    /// Empty deltas written as items (in a chain, or after an unchanged
    /// item or before supplements); a cell told as its reference alone and
    /// an implied cell have none (see `alone` and `implied`).
    pub empty_deltas: u64,
    /// Supplements (walkers from another cell, whole).
    pub supplements: u64,
    /// Unchanged items (a lossy client's check of a delta's base).
    pub unchanged: u64,
    /// Forgets (a cell that left the view).
    pub forgets: u64,
    /// Cells told (implied cells apart).
    pub cells: u64,
    /// Cells told as their reference alone: one empty delta over 1 to 32
    /// ticks, said by the reference's mode (its bytes in `headers`).
    pub alone: u64,
    /// Cells implied (protocol 7: an empty delta as a bit).
    pub implied: u64,
}

impl FrameBytes {
    /// Adds one view frame message (a `ServerMessage`, verified here).
    ///
    /// Errors: the message is not a view frame (anything else the server
    /// sends, or bytes that do not verify), with what it was.
    pub fn add(&mut self, message: &[u8]) -> Result<(), String> {
        let frame = match decode(message) {
            Ok(ServerMsg::View(frame)) => frame,
            Ok(other) => return Err(format!("not a view frame: {other:?}")),
            Err(e) => return Err(format!("not a server message: {e}")),
        };
        let mut items = 0;
        for section in frame.sections() {
            self.implied += section.implied_cells() as u64;
            for cell in section.cells() {
                self.cells += 1;
                if cell.told_by_reference() {
                    // Its item is the reader's own, not the message's bytes.
                    self.alone += 1;
                    continue;
                }
                for item in cell.items() {
                    let n = item.bytes.len() as u64;
                    items += n;
                    *match item.kind {
                        ItemKind::Full => &mut self.full,
                        ItemKind::Delta { .. } if empty_delta_span(item.bytes).is_some() => &mut self.empty_deltas,
                        ItemKind::Delta { .. } => &mut self.deltas,
                        ItemKind::Supplement => &mut self.supplements,
                        ItemKind::Unchanged => &mut self.unchanged,
                        ItemKind::Forget => &mut self.forgets,
                    } += n;
                }
            }
        }
        self.frames += 1;
        self.total += message.len() as u64;
        self.headers += message.len() as u64 - items;
        Ok(())
    }

    /// One line: each kind's bytes per `unit` (for example sockets times
    /// ticks: bytes a socket a tick) and its share of the total.
    pub fn line(&self, unit: f64) -> String {
        let share = |n: u64| 100.0 * n as f64 / self.total.max(1) as f64;
        let parts = [
            ("headers", self.headers),
            ("full forms", self.full),
            ("deltas", self.deltas),
            ("empty deltas", self.empty_deltas),
            ("supplements", self.supplements),
            ("unchanged", self.unchanged),
            ("forgets", self.forgets),
        ];
        let kinds: Vec<String> =
            parts.iter().map(|(name, n)| format!("{name} {:.1} ({:.0} %)", *n as f64 / unit, share(*n))).collect();
        format!(
            "{:.1} bytes: {}; {:.2} cells told ({:.2} of them as their reference alone) and {:.2} implied",
            self.total as f64 / unit,
            kinds.join(", "),
            self.cells as f64 / unit,
            self.alone as f64 / unit,
            self.implied as f64 / unit
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::entry::Entry;
    use mino_protocol::view::{
        empty_delta_item, encode_full_view, encode_view, unchanged_item, write_item, write_section_cell,
        write_section_header,
    };
    use mino_protocol::PlayerId;

    #[test]
    fn a_frame_is_its_headers_and_its_items() {
        let entries = [
            Entry { id: PlayerId(7), x: 10, y: 20, heading: 0, flags: 1 },
            Entry { id: PlayerId(9), x: 30, y: 40, heading: 3, flags: 1 },
        ];
        let message = encode_full_view(1, 50, 3, &entries);
        let mut bytes = FrameBytes::default();
        bytes.add(&message).expect("a view frame");
        assert_eq!((bytes.frames, bytes.cells, bytes.total), (1, 1, message.len() as u64));
        assert!(bytes.full > 2 * 6, "two players' entries are in the full form: {bytes:?}");
        assert_eq!(bytes.headers + bytes.full, bytes.total, "{bytes:?}");
        assert!(bytes.add(b"not a frame").is_err());
        assert_eq!(bytes.frames, 1, "nothing added of bytes that are no frame");
    }

    #[test]
    fn each_kind_is_counted_and_a_cell_told_by_its_reference_alone_is_a_header() {
        let mut full = Vec::new();
        write_item(&mut full, ItemKind::Full, &[]);
        let mut supplement = Vec::new();
        write_item(&mut supplement, ItemKind::Supplement, &[]);
        let mut forget = Vec::new();
        write_item(&mut forget, ItemKind::Forget, &[]);
        let unchanged = unchanged_item(3);
        let (empty2, empty1) = (empty_delta_item(2), empty_delta_item(1));
        let mut sections = Vec::new();
        write_section_header(&mut sections, 1, 50, 5);
        write_section_cell(&mut sections, 0, 2, &[&full]);
        write_section_cell(&mut sections, 2, 3, &[&unchanged, empty2]);
        write_section_cell(&mut sections, 3, 4, &[empty1, empty1, &supplement]);
        write_section_cell(&mut sections, 4, 6, &[empty2]);
        write_section_cell(&mut sections, 6, 9, &[&forget]);
        let message = encode_view(&sections);
        let mut bytes = FrameBytes::default();
        bytes.add(&message).expect("a view frame");
        let want = FrameBytes {
            frames: 1,
            total: message.len() as u64,
            full: full.len() as u64,
            empty_deltas: 3,
            supplements: supplement.len() as u64,
            unchanged: 2,
            forgets: forget.len() as u64,
            cells: 5,
            alone: 1,
            ..FrameBytes::default()
        };
        let items = want.full + want.empty_deltas + want.supplements + want.unchanged + want.forgets;
        assert_eq!(bytes, FrameBytes { headers: want.total - items, ..want });
    }
}
