//! What view frames' bytes carry, by kind (`delta_cost --breakdown`): the
//! frame's envelope and its section and cell headers (implied blocks with
//! them), and its items by kind (`mino_protocol::view::ItemKind`): full
//! forms, deltas, empty deltas, supplements, unchanged items and forgets.
//! So the next step of an encoding is chosen by what the bytes are, not
//! guessed (issue 25's "measure before choosing").

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
    /// Empty deltas told (a cell that changed by the rule alone, or a lossy
    /// client's repeat); implied cells' are in `headers`.
    pub empty_deltas: u64,
    /// Supplements (walkers from another cell, whole).
    pub supplements: u64,
    /// Unchanged items (a lossy client's check of a delta's base).
    pub unchanged: u64,
    /// Forgets (a cell that left the view).
    pub forgets: u64,
    /// Cells told (implied cells apart).
    pub cells: u64,
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
            "{:.1} bytes: {}; {:.2} cells told and {:.2} implied",
            self.total as f64 / unit,
            kinds.join(", "),
            self.cells as f64 / unit,
            self.implied as f64 / unit
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::entry::Entry;
    use mino_protocol::view::encode_full_view;
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
}
