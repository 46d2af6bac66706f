//! A bot's reading of view frames: what it holds of its cells ([`Held`],
//! as the Welcome describes the place), and the walk over the cells a frame
//! updated, each handed on with its share of the frame's bytes. A session
//! measures each cell the walk hands on ([`crate::cells::CellMeter`], and
//! as an observer [`crate::observer::Observer`]); the `delta_cost` bench's
//! clients take the same path.

use crate::event::Welcomed;
use mino_protocol::entry::Entry;
use mino_protocol::held::{Held, HeldError, Update};
use mino_protocol::view::{tick_time_ms, ItemKind, ViewFrame};

/// One cell a view frame updated, as held after the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Updated {
    /// Whose players.
    pub shard: u32,
    /// The cell.
    pub cell: u32,
    /// The section's tick (low 32 bits).
    pub tick: u32,
    /// The tick's server time, ms since the Unix epoch.
    pub time_ms: u64,
    /// Bytes of the frame charged to it: its items' (the first cell handed
    /// on also the frame's and the sections' headers, so that the cells'
    /// bytes add up to the frame's).
    pub len: usize,
    /// Of them, its items' bodies (entries), bytes.
    pub bodies: usize,
}

/// One explicit cell of a frame and its items' bytes (all, bodies).
#[derive(Clone, Copy, Debug)]
struct Share {
    shard: u32,
    cell: u32,
    all: usize,
    bodies: usize,
}

/// What a bot holds of the cells view frames told it, and the walk over
/// the cells the last frame updated.
#[derive(Debug)]
pub struct ViewReader {
    held: Held,
    /// The Welcome's tick rate, Hz, and server time, ms: the sections' times.
    tick_hz: u16,
    welcome_ms: u64,
    /// The last frame's sections, (shard, tick), in order.
    sections: Vec<(u32, u32)>,
    /// The last frame's explicit cells, in order, with their bytes.
    shares: Vec<Share>,
    /// What the last frame did, in order (reused frame to frame).
    updates: Vec<Update>,
    /// The walk: the next update to hand on, where the last share was
    /// found, and the header bytes not charged yet.
    next: usize,
    at: usize,
    header: usize,
}

impl ViewReader {
    /// Nothing held yet, of the place `welcome` describes (its cells
    /// expire as it says, on the clock [`ViewReader::apply`] is given).
    pub fn new(welcome: &Welcomed) -> ViewReader {
        let held = Held::for_place(
            &welcome.bounds,
            welcome.speed,
            welcome.tick_hz,
            (welcome.cell_size, welcome.view_radius),
            usize::MAX,
        )
        .expiring(welcome.cell_expiry_ms);
        ViewReader {
            held,
            tick_hz: welcome.tick_hz,
            welcome_ms: welcome.server_time_ms,
            sections: Vec::new(),
            shares: Vec::new(),
            updates: Vec::new(),
            next: 0,
            at: 0,
            header: 0,
        }
    }

    /// What is held.
    pub fn held(&self) -> &Held {
        &self.held
    }

    /// Applies the view frame `v`, whose message is `len` bytes, arrived
    /// `since_ms` ms after the session began (the expiry's clock); the walk
    /// ([`ViewReader::next_cell`]) then hands on the cells it updated.
    ///
    /// Errors: an item that does not apply to what is held (the walk then
    /// hands on nothing; [`ViewReader::sections`] still lists the frame's
    /// sections).
    pub fn apply(&mut self, v: &ViewFrame<'_>, len: usize, since_ms: u64) -> Result<(), HeldError> {
        self.sections.clear();
        self.shares.clear();
        let mut items_bytes = 0;
        for section in v.sections() {
            self.sections.push((section.shard, section.tick));
            for cell in section.cells() {
                let (mut all, mut bodies) = (0, 0);
                for item in cell.items() {
                    all += item.bytes.len();
                    bodies += if item.kind == ItemKind::Forget { 0 } else { item.body.len() };
                }
                items_bytes += all;
                self.shares.push(Share { shard: section.shard, cell: cell.cell, all, bodies });
            }
        }
        self.header = len.saturating_sub(items_bytes);
        self.at = 0;
        let applied = self.held.apply_at(v, since_ms, &mut self.updates);
        self.next = if applied.is_ok() { 0 } else { self.updates.len() };
        applied
    }

    /// The last frame's sections, (shard, tick low 32 bits), in order.
    pub fn sections(&self) -> &[(u32, u32)] {
        &self.sections
    }

    /// The next cell the last frame updated, in the frame's order, with its
    /// players copied into `entries` (the held state cannot stay borrowed
    /// while the bot acts on them: one copy, no allocation once `entries`
    /// has grown); None when the walk is over. A cell told several items is
    /// handed on once an item (its bytes charged to the first).
    pub fn next_cell(&mut self, entries: &mut Vec<Entry>) -> Option<Updated> {
        while let Some(&update) = self.updates.get(self.next) {
            self.next += 1;
            let Update::Cell { shard, cell, tick } = update else { continue };
            let Some(held) = self.held.cell(shard, cell) else { continue };
            entries.clear();
            entries.extend_from_slice(held.entries);
            let time_ms = tick_time_ms(tick, self.tick_hz, self.welcome_ms);
            let is = |s: &Share| (s.shard, s.cell) == (shard, cell);
            let found = self.shares[self.at..]
                .iter()
                .position(is)
                .map(|i| self.at + i)
                .or_else(|| self.shares.iter().position(is));
            let (share, bodies) = match found {
                Some(i) => {
                    self.at = i;
                    let s = &mut self.shares[i];
                    (std::mem::take(&mut s.all), std::mem::take(&mut s.bodies))
                }
                None => (0, 0),
            };
            let len = share + std::mem::take(&mut self.header);
            return Some(Updated { shard, cell, tick, time_ms, len, bodies });
        }
        None
    }
}
