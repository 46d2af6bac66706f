//! A bot's reading of view frames: what it holds of its cells ([`Held`],
//! as the Welcome describes the place), and the walk over the cells a frame
//! updated, each handed on with its share of the frame's bytes. A session
//! measures each cell the walk hands on ([`crate::cells::CellMeter`], and
//! as an observer [`crate::observer::Observer`]); the `delta_cost` bench's
//! clients take the same path.

use crate::event::Welcomed;
use mino_protocol::client::Capabilities;
use mino_protocol::entry::Entry;
use mino_protocol::held::{Delivery, Held, HeldError, Update};
use mino_protocol::view::{tick_time_ms, ItemKind, ViewCell, ViewFrame};
use std::ops::Range;

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
    /// The runs of `shares` of each section that has explicit cells:
    /// (shard, range of `shares`), cells increasing in each.
    runs: Vec<(u32, Range<usize>)>,
    /// What the last frame did, in order (reused frame to frame).
    updates: Vec<Update>,
    /// The walk: the next update to hand on, where the last share was
    /// found and where the last lookup of a share stopped, the header bytes
    /// not charged yet, where the last cell was held ([`Held::cell_at`])
    /// and the last section's tick and its time.
    next: usize,
    at: usize,
    probe: usize,
    header: usize,
    slot: usize,
    time: Option<(u32, u64)>,
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
        .expiring(welcome.cell_expiry_ms)
        .delivered(if welcome.capabilities.contains(Capabilities::DATAGRAM_DELTAS) {
            Delivery::Lossy
        } else {
            Delivery::InOrder
        });
        ViewReader {
            held,
            tick_hz: welcome.tick_hz,
            welcome_ms: welcome.server_time_ms,
            sections: Vec::new(),
            shares: Vec::new(),
            runs: Vec::new(),
            updates: Vec::new(),
            next: 0,
            at: 0,
            probe: 0,
            header: 0,
            slot: 0,
            time: None,
        }
    }

    /// What is held.
    pub fn held(&self) -> &Held {
        &self.held
    }

    /// True when the last frame had a cell the bot missed a change of
    /// (deltas over datagrams: a datagram lost); it asks for a resync.
    pub fn broken(&self) -> bool {
        self.updates.iter().any(|u| matches!(u, Update::Broken { .. }))
    }

    /// Applies the view frame `v`, whose message is `len` bytes, arrived
    /// `since_ms` ms after the session began (the expiry's clock); the walk
    /// ([`ViewReader::next_cell`]) then hands on the cells it updated.
    ///
    /// Errors: an item that does not apply to what is held (the walk then
    /// hands on nothing; [`ViewReader::sections`] still lists the frame's
    /// sections).
    pub fn apply(&mut self, v: &ViewFrame<'_>, len: usize, since_ms: u64) -> Result<(), HeldError> {
        let (sections, shares, runs) = (&mut self.sections, &mut self.shares, &mut self.runs);
        sections.clear();
        shares.clear();
        runs.clear();
        let mut items_bytes = 0;
        // Each section's cells and their bytes, read as the section applies.
        let applied = self.held.apply_at_each(v, since_ms, &mut self.updates, |section| {
            sections.push((section.shard, section.tick));
            let from = shares.len();
            for cell in section.cells() {
                let (all, bodies) = item_bytes(&cell);
                items_bytes += all;
                shares.push(Share { shard: section.shard, cell: cell.cell, all, bodies });
            }
            if shares.len() > from {
                runs.push((section.shard, from..shares.len()));
            }
        });
        self.header = len.saturating_sub(items_bytes);
        (self.at, self.probe, self.slot) = (0, 0, 0);
        self.next = 0;
        if applied.is_err() {
            // Nothing to walk; the sections past the one that failed are
            // listed all the same.
            self.next = self.updates.len();
            self.sections.clear();
            self.sections.extend(v.sections().map(|s| (s.shard, s.tick)));
        }
        applied
    }

    /// The last frame's sections, (shard, tick low 32 bits), in order.
    pub fn sections(&self) -> &[(u32, u32)] {
        &self.sections
    }

    /// The next cell the last frame updated, in the frame's order, and its
    /// players as held (sorted by id; read where they are held, not
    /// copied: [`ViewReader::players`] finds them again once the borrow has
    /// ended); None when the walk is over. A cell told several items is
    /// handed on once an item (its bytes charged to the first).
    pub fn next_cell(&mut self) -> Option<(Updated, &[Entry])> {
        while let Some(&update) = self.updates.get(self.next) {
            self.next += 1;
            let Update::Cell { shard, cell, tick } = update else { continue };
            // A section's cells come by increasing cell: found from the last.
            let Some(held) = self.held.cell_at(shard, cell, &mut self.slot) else { continue };
            let time_ms = time_of(&mut self.time, (self.tick_hz, self.welcome_ms), tick);
            let (share, bodies) = match share_of(&self.shares, &self.runs, self.at, &mut self.probe, (shard, cell)) {
                Some(i) => {
                    self.at = i;
                    let s = &mut self.shares[i];
                    (std::mem::take(&mut s.all), std::mem::take(&mut s.bodies))
                }
                None => (0, 0),
            };
            let len = share + std::mem::take(&mut self.header);
            return Some((Updated { shard, cell, tick, time_ms, len, bodies }, held.entries));
        }
        None
    }

    /// The players of `u`, the cell [`ViewReader::next_cell`] last handed
    /// on, as held (sorted by id): any held cell is found, the last one at
    /// once; none for a cell not held.
    pub fn players(&self, u: &Updated) -> &[Entry] {
        // The walk's cursor is at the cell: found at once.
        let mut at = self.slot;
        self.held.cell_at(u.shard, u.cell, &mut at).map_or(&[], |c| c.entries)
    }
}

/// The server time of a section's `tick` (low 32 bits), ms since the
/// epoch, from the Welcome's tick rate, Hz, and server time, ms: worked
/// out once a section (its cells share the tick) and kept in `last`.
fn time_of(last: &mut Option<(u32, u64)>, (tick_hz, welcome_ms): (u16, u64), tick: u32) -> u64 {
    match *last {
        Some((t, ms)) if t == tick => ms,
        _ => {
            let ms = tick_time_ms(tick, tick_hz, welcome_ms);
            *last = Some((tick, ms));
            ms
        }
    }
}

/// Where the share of (`shard`, `cell`) is among `shares` (their `runs`
/// a section): the first at or after `at` (the last one found), else the
/// first (what a search from there, then from the start, finds). Most
/// often the last one found or the next. When the frame has one section
/// of the shard (a section's cells increase) it is the one share of that
/// cell, found walking on from `probe` (where the last lookup in that
/// section stopped: the walk asks by increasing cell), so a cell not told
/// (an implied one) costs a comparison; with several, a search.
fn share_of(
    shares: &[Share],
    runs: &[(u32, Range<usize>)],
    at: usize,
    probe: &mut usize,
    (shard, cell): (u32, u32),
) -> Option<usize> {
    let is = |s: &Share| (s.shard, s.cell) == (shard, cell);
    for i in [at, at + 1] {
        if shares.get(i).is_some_and(is) {
            return Some(i);
        }
    }
    let mut runs = runs.iter().filter(|r| r.0 == shard);
    let run = match (runs.next(), runs.next()) {
        (None, _) => return None,
        (Some((_, run)), None) => run.clone(),
        (Some(_), Some(_)) => {
            let after = shares.get(at..).and_then(|rest| rest.iter().position(is)).map(|i| at + i);
            return after.or_else(|| shares.iter().position(is));
        }
    };
    // The first share of the run whose cell is not below `cell`.
    let cells = &shares[run.clone()];
    let mut i = probe.wrapping_sub(run.start);
    if i > cells.len() || (i > 0 && cells[i - 1].cell >= cell) {
        i = cells.partition_point(|s| s.cell < cell);
    }
    while cells.get(i).is_some_and(|s| s.cell < cell) {
        i += 1;
    }
    *probe = run.start + i;
    cells.get(i).is_some_and(|s| s.cell == cell).then_some(run.start + i)
}

/// A told cell's items' bytes: (all of them, their bodies: the entries a
/// forget has none of).
fn item_bytes(cell: &ViewCell<'_>) -> (usize, usize) {
    cell.items().fold((0, 0), |(all, bodies), item| {
        let body = if item.kind == ItemKind::Forget { 0 } else { item.body.len() };
        (all + item.bytes.len(), bodies + body)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::tests::welcomed;
    use mino_protocol::delta::encode_full;
    use mino_protocol::grid::CellGrid;
    use mino_protocol::stencil::{candidates, view_cells, Stencil, ViewScratch};
    use mino_protocol::view::{
        empty_delta_item, write_item, write_section, write_section_cell, write_section_header_implied, Implied,
        Section, SectionView,
    };
    use mino_protocol::PlayerId;

    fn full(ids: &[u32]) -> Vec<u8> {
        let entries: Vec<Entry> =
            ids.iter().map(|&id| Entry { id: PlayerId(id), x: 9000, y: 9000, heading: 0, flags: 0 }).collect();
        let (mut body, mut item) = (Vec::new(), Vec::new());
        encode_full(&entries, &mut body);
        write_item(&mut item, ItemKind::Full, &body);
        item
    }

    fn forget() -> Vec<u8> {
        let mut item = Vec::new();
        write_item(&mut item, ItemKind::Forget, &[]);
        item
    }

    /// A plain section of `shard` at `tick`: each cell with its items.
    fn section(out: &mut Vec<u8>, shard: u32, tick: u64, cells: &[(u32, Vec<Vec<u8>>)]) {
        let cells: Vec<(u32, Vec<&[u8]>)> =
            cells.iter().map(|(c, items)| (*c, items.iter().map(Vec::as_slice).collect())).collect();
        write_section(out, &Section { shard, tick, cells: &cells });
    }

    /// A section of `shard` at `tick` implying those of `implied` (the
    /// candidates of the view of cell 13 at rung 0, due every tick on the
    /// place of [`welcomed`]), then telling `told`.
    fn implied_section(out: &mut Vec<u8>, shard: u32, tick: u64, implied: &[u32], told: &[(u32, Vec<Vec<u8>>)]) {
        let w = welcomed(100.0);
        let grid = CellGrid::new(&w.bounds, w.cell_size).expect("grid");
        let stencil = Stencil::of_view(w.view_radius, w.cell_size);
        let (mut view, mut room, mut list) = (Vec::new(), ViewScratch::default(), Vec::new());
        view_cells(&grid, &stencil, (13, 0), &mut view, &mut room, |c, t| (c, t));
        candidates(view.iter().copied(), 0, 0, |c, _| list.push(c)).expect("rung 0");
        let mut bits = vec![0u8; list.len().div_ceil(8)];
        for cell in implied {
            let i = list.iter().position(|c| c == cell).expect("a candidate");
            bits[i / 8] |= 1 << (i % 8);
        }
        let block =
            Implied { view: SectionView { key: 13, previous: 0, rung: 0 }, due: 0, count: list.len(), bits: &bits };
        write_section_header_implied(out, shard, tick, told.len(), &block, true);
        let mut previous = 0;
        for (cell, items) in told {
            let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
            write_section_cell(out, previous, *cell, &items);
            previous = *cell;
        }
    }

    /// The cells a walk handed on, with their players.
    type Walk = Vec<(Updated, Vec<Entry>)>;

    /// What the session's walk handed on before the reader: each update's
    /// cell found by search, its share by a search from the last one found
    /// and then from the start, over the shares of a pass of their own.
    fn walked_before(reader: &ViewReader, v: &ViewFrame<'_>, len: usize) -> Walk {
        let mut shares = Vec::new();
        let mut items_bytes = 0;
        for section in v.sections() {
            for cell in section.cells() {
                let (all, bodies) = item_bytes(&cell);
                items_bytes += all;
                shares.push((section.shard, cell.cell, all, bodies));
            }
        }
        let (mut header, mut at, mut out) = (len.saturating_sub(items_bytes), 0, Vec::new());
        for &update in &reader.updates {
            let Update::Cell { shard, cell, tick } = update else { continue };
            let Some(held) = reader.held.cell(shard, cell) else { continue };
            let time_ms = tick_time_ms(tick, reader.tick_hz, reader.welcome_ms);
            let is = |s: &(u32, u32, usize, usize)| (s.0, s.1) == (shard, cell);
            let found = shares[at..].iter().position(is).map(|i| at + i).or_else(|| shares.iter().position(is));
            let (share, bodies) = match found {
                Some(i) => {
                    at = i;
                    (std::mem::take(&mut shares[i].2), std::mem::take(&mut shares[i].3))
                }
                None => (0, 0),
            };
            let len = share + std::mem::take(&mut header);
            out.push((Updated { shard, cell, tick, time_ms, len, bodies }, held.entries.to_vec()));
        }
        out
    }

    /// Applies `frame` (its message `len` bytes) and walks it.
    fn walk(reader: &mut ViewReader, frame: &[u8], len: usize) -> (Walk, Walk) {
        let v = ViewFrame::parse(frame).expect("valid");
        reader.apply(&v, len, 0).expect("applies");
        let mut got = Vec::new();
        while let Some((u, players)) = reader.next_cell() {
            let players = players.to_vec();
            assert_eq!(reader.players(&u), &players[..], "found again as handed on");
            got.push((u, players));
        }
        (got, walked_before(reader, &v, len))
    }

    #[test]
    fn the_walk_hands_on_what_a_search_for_each_cell_found() {
        let mut reader = ViewReader::new(&welcomed(100.0));
        let mut setup = Vec::new();
        let cells = [12, 13, 14, 23].map(|c| (c, vec![full(&[c, c + 100])]));
        section(&mut setup, 1, 1, &cells);
        section(&mut setup, 2, 1, &cells[..2]);
        let (got, want) = walk(&mut reader, &setup, setup.len() + 20);
        assert_eq!(got, want);
        assert_eq!(got.len(), 6);
        // Implied cells (held and not), a cell told two items, a forget of
        // a cell not held, and a shard's plain section after.
        let empty = empty_delta_item(1).to_vec();
        let mut frame = Vec::new();
        let told = [(23, vec![full(&[23]), empty.clone()]), (50, vec![forget()]), (60, vec![full(&[7])])];
        implied_section(&mut frame, 1, 2, &[3, 12, 14, 24], &told);
        section(&mut frame, 2, 2, &[(12, vec![empty]), (13, vec![forget()]), (30, vec![full(&[8, 9])])]);
        let (got, want) = walk(&mut reader, &frame, frame.len() + 20);
        assert_eq!(got, want);
        let cells: Vec<(u32, u32)> = got.iter().map(|(u, _)| (u.shard, u.cell)).collect();
        assert_eq!(cells, [(1, 3), (1, 12), (1, 14), (1, 23), (1, 23), (1, 24), (1, 60), (2, 12), (2, 30)]);
        assert_eq!(
            got.iter().map(|(u, _)| u.len).sum::<usize>(),
            frame.len() + 20 - 2,
            "all but the two forgets' tags"
        );
        // Two sections of one shard in a frame.
        let mut frame = Vec::new();
        section(&mut frame, 1, 3, &[(12, vec![full(&[1])]), (13, vec![full(&[2])])]);
        section(&mut frame, 2, 3, &[(12, vec![full(&[3])])]);
        section(&mut frame, 1, 4, &[(13, vec![full(&[4])]), (14, vec![full(&[5])])]);
        let (got, want) = walk(&mut reader, &frame, frame.len());
        assert_eq!(got, want);
        assert_eq!(got.len(), 5);
    }
}
