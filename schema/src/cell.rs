//! Area-of-interest frames. A shard encodes each occupied cell's players once
//! a tick (10 bytes a player, [`encode_entries`]); a socket gets, per tick,
//! one **view frame** per shard whose cells it sees: a `ServerMessage` with a
//! 12-byte [`wire::FrameHeader`] (shard, tick, time), one 6-byte
//! [`wire::CellRun`] per cell and the cells' players back to back, and no
//! body. Every socket of a view group (players who see the same cells) shares
//! the same frame's bytes.
//!
//! What a frame costs: [`FRAME_BYTES`] (52) bytes of FlatBuffers once (root
//! offset, vtable, table, header, the two vectors' lengths), 6 a cell and 10
//! a player;
//! nothing the Welcome already gave (bounds, tick rate, the grid). A frame per
//! cell, as mino first sent them, cost about 42 bytes a cell with the
//! websocket's header: at 4 players a cell that was as much as the players.
//!
//! Between shards, a shard's cells of one region for one tick travel in one
//! [`wire::CellBundle`] with the same runs and players, so a relaying shard
//! puts each cell's players' bytes into its own view frames unchanged.

use crate::entry::PlayerEntry;
use crate::ids::{ShardId, Tick};
use crate::root::finish;
use crate::wire;
use bytes::Bytes;
use flatbuffers::FlatBufferBuilder;

/// Bytes of one player in a cell: a [`wire::PlayerState`].
pub const ENTRY_BYTES: usize = 10;

/// Bytes of one cell's run in a view frame: a [`wire::CellRun`].
pub const RUN_BYTES: usize = 6;

/// Bytes of a view frame with no cells: the header a frame costs once
/// (root offset 4, vtable 16, table 24 with the 12-byte
/// [`wire::FrameHeader`], the two vectors' lengths 8). The runs may add 2
/// bytes of padding; the websocket adds 2 to 4 bytes (RFC 6455 5.2).
pub const FRAME_BYTES: usize = 52;

/// The most players one [`wire::CellRun`] counts; a cell with more comes as
/// consecutive runs of the same cell.
pub const MAX_RUN_PLAYERS: usize = u16::MAX as usize;

/// Whose and when a view frame (or a bundle) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameStamp {
    /// The shard whose players these are.
    pub shard: ShardId,
    /// The shard's tick.
    pub tick: Tick,
    /// Wall clock of the tick, ms since the Unix epoch (a view frame carries
    /// its low 32 bits).
    pub server_time_ms: u64,
}

/// Appends the entries of one cell's `players`, quantized over `bounds` (the
/// world's, as the Welcome gave them), to `out`: [`ENTRY_BYTES`] each, the
/// bytes a view frame carries for them.
pub fn encode_entries(bounds: &wire::Bounds, players: impl IntoIterator<Item = PlayerEntry>, out: &mut Vec<u8>) {
    for p in players {
        out.extend_from_slice(&p.to_wire(bounds).0);
    }
}

/// The runs a cell's `entries` take, each its part of them: one empty run
/// for an emptied cell (its players left it: news too), else one run per
/// [`MAX_RUN_PLAYERS`] (a partial trailing entry dropped).
fn cell_runs(entries: &[u8]) -> impl Iterator<Item = &[u8]> + Clone {
    let entries = &entries[..entries.len() / ENTRY_BYTES * ENTRY_BYTES];
    entries.is_empty().then_some(entries).into_iter().chain(entries.chunks(MAX_RUN_PLAYERS * ENTRY_BYTES))
}

/// Runs a cell of `n` players takes ([`cell_runs`]).
fn run_count(n: usize) -> usize {
    n.div_ceil(MAX_RUN_PLAYERS).max(1)
}

/// The 6 bytes of the run of `cell` holding `count` players.
fn run_bytes(cell: u32, count: usize) -> [u8; RUN_BYTES] {
    let [a, b, c, d] = cell.to_le_bytes();
    let [e, f] = (count as u16).to_le_bytes();
    [a, b, c, d, e, f]
}

/// The size of a view frame: its runs and players.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSize {
    /// Runs (a cell of more than [`MAX_RUN_PLAYERS`] takes several).
    pub runs: usize,
    /// Players, all cells.
    pub players: usize,
}

impl FrameSize {
    /// The size of the view frame of `cells` (each a cell id and its
    /// entries, as for [`write_view_frame`]).
    pub fn of<'e>(cells: impl IntoIterator<Item = (u32, &'e [u8])>) -> FrameSize {
        cells.into_iter().fold(FrameSize { runs: 0, players: 0 }, |size, (_, entries)| {
            let n = entries.len() / ENTRY_BYTES;
            FrameSize { runs: size.runs + run_count(n), players: size.players + n }
        })
    }

    /// Bytes of the frame.
    pub fn bytes(&self) -> usize {
        players_at(self.runs) + 4 + self.players * ENTRY_BYTES
    }
}

/// `cells` cut into consecutive spans whose view frames come to at most
/// `max_bytes` each (a client refuses a message over
/// [`crate::limits::MAX_SERVER_MESSAGE_BYTES`]): (index of the span's first
/// cell, its cells, its size). A cell is never cut: one alone over the limit
/// (over 110,000 players of one shard) is a span of its own.
pub fn frame_spans<'e>(
    cells: impl IntoIterator<Item = (u32, &'e [u8])>,
    max_bytes: usize,
) -> Vec<(usize, usize, FrameSize)> {
    let mut spans = Vec::with_capacity(1);
    let (mut first, mut n, mut size) = (0, 0, FrameSize { runs: 0, players: 0 });
    for (i, cell) in cells.into_iter().enumerate() {
        let one = FrameSize::of([cell]);
        let more = FrameSize { runs: size.runs + one.runs, players: size.players + one.players };
        if n > 0 && more.bytes() > max_bytes {
            spans.push((first, n, size));
            (first, n, size) = (i, 1, one);
        } else {
            (n, size) = (n + 1, more);
        }
    }
    spans.push((first, n, size));
    spans
}

/// Where a view frame of `runs` runs has its players vector (its length).
fn players_at(runs: usize) -> usize {
    (FRAME_BYTES - 4 + runs * RUN_BYTES).next_multiple_of(4)
}

/// Appends the view frame of `stamp` holding `cells`, of `size`
/// ([`FrameSize::of`] the same cells), to `out`: each cell an id and its
/// players' entries as [`encode_entries`] made them (a length that is not a
/// multiple of [`ENTRY_BYTES`] loses its tail; a cell of more than
/// [`MAX_RUN_PLAYERS`] comes as several runs), `size.bytes()` bytes.
///
/// Written front to back in one pass, with no builder, so each entry is
/// copied once, straight from the cell's bytes into the frame. The layout is
/// FlatBuffers' (the generated reader and verifier read it; a test checks it
/// against the builder's): the root offset, the vtable of the six field ids
/// of which `players` (1), `frame` (4) and `runs` (5) are set, the table with
/// the [`wire::FrameHeader`] inline, then the two vectors, each 4-byte
/// aligned. `cells` is walked twice.
pub fn write_view_frame<'e, I>(out: &mut Vec<u8>, stamp: &FrameStamp, size: FrameSize, cells: I)
where
    I: IntoIterator<Item = (u32, &'e [u8])>,
    I::IntoIter: Clone,
{
    let cells = cells.into_iter();
    let FrameSize { runs, players } = size;
    let start = out.len();
    let players_at = players_at(runs);
    out.reserve(players_at + 4 + players * ENTRY_BYTES);
    let u16s = |out: &mut Vec<u8>, v: &[u16]| v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
    let u32s = |out: &mut Vec<u8>, v: &[u32]| v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
    // Root offset to the table at 20; the vtable at 4: its size, the table's
    // size, then each field id's offset in the table (0: absent): players at
    // 20, frame at 4, runs at 16.
    u32s(out, &[20]);
    u16s(out, &[16, 24, 0, 20, 0, 0, 4, 16]);
    // The table: its vtable 16 bytes back, the header, the two vectors'
    // offsets (from where each offset is stored: runs at 36, players at 40),
    // then the runs' length at 44.
    let header = [stamp.shard.0, stamp.tick.0 as u32, stamp.server_time_ms as u32];
    u32s(out, &[16, header[0], header[1], header[2], 44 - 36, (players_at - 40) as u32, runs as u32]);
    for (cell, entries) in cells.clone() {
        for run in cell_runs(entries) {
            out.extend_from_slice(&run_bytes(cell, run.len() / ENTRY_BYTES));
        }
    }
    out.resize(start + players_at, 0);
    u32s(out, &[players as u32]);
    for (_, entries) in cells {
        cell_runs(entries).for_each(|run| out.extend_from_slice(run));
    }
    debug_assert_eq!(out.len() - start, size.bytes(), "a view frame of the size it was given");
}

/// Reusable view-frame and bundle encoder: keeps its buffers between frames.
#[derive(Default)]
pub struct ViewEncoder {
    fbb: FlatBufferBuilder<'static>,
    runs: Vec<wire::CellRun>,
    players: Vec<wire::PlayerState>,
    frame: Vec<u8>,
}

impl ViewEncoder {
    /// A new encoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Encodes the view frame of `stamp` holding `cells` ([`write_view_frame`]).
    /// The bytes are the encoder's, valid until its next call.
    pub fn encode<'e, I>(&mut self, stamp: &FrameStamp, cells: I) -> &[u8]
    where
        I: IntoIterator<Item = (u32, &'e [u8])>,
        I::IntoIter: Clone,
    {
        let cells = cells.into_iter();
        self.frame.clear();
        write_view_frame(&mut self.frame, stamp, FrameSize::of(cells.clone()), cells);
        &self.frame
    }

    /// Encodes the bundle of one shard's `cells` (as for [`ViewEncoder::encode`])
    /// of one region and tick, for the other shards.
    pub fn encode_bundle<'e>(
        &mut self,
        stamp: &FrameStamp,
        region: u32,
        cells: impl IntoIterator<Item = (u32, &'e [u8])>,
    ) -> Bytes {
        self.stage(cells);
        self.fbb.reset();
        let runs = self.fbb.create_vector(&self.runs);
        let players = self.fbb.create_vector(&self.players);
        let body = wire::CellBundle::create(
            &mut self.fbb,
            &wire::CellBundleArgs {
                shard_id: stamp.shard.0,
                region,
                tick: stamp.tick.0,
                server_time_ms: stamp.server_time_ms,
                runs: Some(runs),
                players: Some(players),
            },
        );
        finish(&mut self.fbb, wire::ServerBody::CellBundle, body.as_union_value())
    }

    /// Stages the runs and players of `cells`, splitting a cell of more than
    /// [`MAX_RUN_PLAYERS`] into runs.
    fn stage<'e>(&mut self, cells: impl IntoIterator<Item = (u32, &'e [u8])>) {
        self.runs.clear();
        self.players.clear();
        for (cell, entries) in cells {
            for run in cell_runs(entries) {
                self.runs.push(wire::CellRun(run_bytes(cell, run.len() / ENTRY_BYTES)));
                self.players.extend(run.chunks_exact(ENTRY_BYTES).map(|e| {
                    let mut state = [0; ENTRY_BYTES];
                    state.copy_from_slice(e);
                    wire::PlayerState(state)
                }));
            }
        }
    }
}

/// The cell a run is of.
fn run_cell(run: &wire::CellRun) -> u32 {
    u32::from(run.cell_lo()) | (u32::from(run.cell_hi()) << 16)
}

/// True when the runs' counts add up to `players` entries.
fn adds_up(runs: flatbuffers::Vector<'_, wire::CellRun>, players: usize) -> bool {
    runs.iter().map(|r| usize::from(r.count())).sum::<usize>() == players
}

/// Each cell with the byte range of its players within the players' bytes
/// (the runs were checked to add up): consecutive runs of one cell (a cell
/// of more than [`MAX_RUN_PLAYERS`]) come as one cell, all its players.
fn run_ranges<'a>(
    runs: flatbuffers::Vector<'a, wire::CellRun>,
) -> impl Iterator<Item = (u32, std::ops::Range<usize>)> + Clone + 'a {
    let (mut next, mut at) = (0usize, 0usize);
    std::iter::from_fn(move || {
        if next >= runs.len() {
            return None;
        }
        let (cell, start) = (run_cell(runs.get(next)), at);
        while next < runs.len() && run_cell(runs.get(next)) == cell {
            at += usize::from(runs.get(next).count()) * ENTRY_BYTES;
            next += 1;
        }
        Some((cell, start..at))
    })
}

/// A cell's players in a frame: [`ENTRY_BYTES`] each.
#[derive(Clone, Copy, Debug)]
pub struct Players<'a> {
    bytes: &'a [u8],
}

impl<'a> Players<'a> {
    /// Players in the cell.
    pub fn len(&self) -> usize {
        self.bytes.len() / ENTRY_BYTES
    }

    /// True when the cell has none (of that shard).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The `i`th player. Panics when `i >= len()`, like a slice.
    pub fn get(&self, i: usize) -> wire::PlayerState {
        let mut state = [0; ENTRY_BYTES];
        state.copy_from_slice(&self.bytes[i * ENTRY_BYTES..(i + 1) * ENTRY_BYTES]);
        wire::PlayerState(state)
    }

    /// The players, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = wire::PlayerState> + Clone + 'a {
        let bytes = self.bytes;
        (0..bytes.len() / ENTRY_BYTES).map(move |i| Players { bytes }.get(i))
    }

    /// Their bytes as sent.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// One cell of a verified view frame: whose, where, when and its players.
#[derive(Clone, Copy, Debug)]
pub struct CellView<'a> {
    header: &'a wire::FrameHeader,
    cell: u32,
    players: Players<'a>,
}

impl<'a> CellView<'a> {
    /// The shard whose players these are.
    pub fn shard_id(&self) -> u32 {
        self.header.shard_id()
    }

    /// The cell (1 + row * grid_columns + column).
    pub fn cell(&self) -> u32 {
        self.cell
    }

    /// The shard's tick (low 32 bits).
    pub fn tick(&self) -> u32 {
        self.header.tick()
    }

    /// The tick's wall clock, low 32 bits of ms since the Unix epoch.
    pub fn time_ms(&self) -> u32 {
        self.header.time_ms()
    }

    /// The cell's players of that shard, all of them.
    pub fn players(&self) -> Players<'a> {
        self.players
    }
}

/// A verified view frame whose runs add up to its players.
#[derive(Clone, Copy, Debug)]
pub struct ViewFrame<'a> {
    header: &'a wire::FrameHeader,
    runs: flatbuffers::Vector<'a, wire::CellRun>,
    players: &'a [u8],
}

impl<'a> ViewFrame<'a> {
    /// The view frame a verified message is, if it is one and its runs add up.
    pub(crate) fn of(msg: &wire::ServerMessage<'a>) -> Option<ViewFrame<'a>> {
        let (header, runs, players) = (msg.frame()?, msg.runs()?, msg.players()?);
        adds_up(runs, players.len()).then_some(ViewFrame { header, runs, players: players.bytes() })
    }

    /// Shard, tick and time (low 32 bits of the ms).
    pub fn header(&self) -> &'a wire::FrameHeader {
        self.header
    }

    /// Runs in the frame (a cell may have more than one: see [`wire::CellRun`]).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Players in the frame, all cells.
    pub fn players(&self) -> usize {
        self.players.len() / ENTRY_BYTES
    }

    /// The frame's cells, in order.
    pub fn cells(&self) -> impl Iterator<Item = CellView<'a>> + Clone + 'a {
        let (header, players) = (self.header, self.players);
        run_ranges(self.runs).map(move |(cell, range)| CellView {
            header,
            cell,
            players: Players { bytes: &players[range] },
        })
    }
}

/// A verified bundle whose runs add up to its players.
#[derive(Clone, Copy, Debug)]
pub struct Bundle<'a> {
    bundle: wire::CellBundle<'a>,
    runs: flatbuffers::Vector<'a, wire::CellRun>,
    players: &'a [u8],
}

impl<'a> Bundle<'a> {
    /// The bundle a verified body is, if its runs add up.
    pub(crate) fn of(bundle: wire::CellBundle<'a>) -> Option<Bundle<'a>> {
        let (runs, players) = (bundle.runs()?, bundle.players()?);
        adds_up(runs, players.len()).then_some(Bundle { bundle, runs, players: players.bytes() })
    }

    /// Whose and when.
    pub fn stamp(&self) -> FrameStamp {
        FrameStamp {
            shard: ShardId(self.bundle.shard_id()),
            tick: Tick(self.bundle.tick()),
            server_time_ms: self.bundle.server_time_ms(),
        }
    }

    /// The region.
    pub fn region(&self) -> u32 {
        self.bundle.region()
    }

    /// Each run's cell and the byte range of its players within
    /// [`Bundle::players`], in order.
    pub fn cells(&self) -> impl Iterator<Item = (u32, std::ops::Range<usize>)> + 'a {
        run_ranges(self.runs)
    }

    /// The players' bytes, all cells back to back ([`ENTRY_BYTES`] each).
    pub fn players(&self) -> &'a [u8] {
        self.players
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::player_id;
    use crate::ids::PlayerId;
    use crate::server::{decode, ServerMsg};

    const STAMP: FrameStamp = FrameStamp { shard: ShardId(7), tick: Tick(40), server_time_ms: 0x1_2345_6789 };

    fn bounds() -> wire::Bounds {
        wire::Bounds::new(0.0, 0.0, 1000.0, 1000.0)
    }

    fn entries(ids: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        let players = ids.iter().map(|&id| PlayerEntry {
            id: PlayerId(id),
            x: 110.0,
            y: 120.0,
            heading: 3,
            moving: true,
            input_seq: 5,
        });
        encode_entries(&bounds(), players, &mut out);
        out
    }

    #[test]
    fn a_view_frame_costs_its_header_once_six_bytes_a_cell_and_ten_a_player() {
        let mut enc = ViewEncoder::new();
        let empty = enc.encode(&STAMP, []).len();
        assert_eq!(empty, FRAME_BYTES, "the header");
        let (a, b) = (entries(&[1, 2, 70_000]), entries(&[4]));
        let cells = [(12, &a[..]), (0x1_0003, &b[..]), (14, &[][..])];
        let frame = enc.encode(&STAMP, cells).to_vec();
        assert!(frame.len() <= empty + 3 * RUN_BYTES + 4 * ENTRY_BYTES + 4, "{} bytes", frame.len());
        let Ok(ServerMsg::View(v)) = decode(&frame) else { panic!("a view frame") };
        let h = v.header();
        assert_eq!((h.shard_id(), h.tick(), h.time_ms()), (7, 40, 0x2345_6789));
        let got: Vec<(u32, u32, Vec<u32>)> = v
            .cells()
            .map(|c| (c.shard_id(), c.cell(), c.players().iter().map(|p| player_id(&p).0).collect()))
            .collect();
        assert_eq!(got, [(7, 12, vec![1, 2, 70_000]), (7, 0x1_0003, vec![4]), (7, 14, vec![])]);
        let first = v.cells().next().expect("a cell");
        assert_eq!(crate::entry::input_seq(first.players().get(0).flags()), 5);
    }

    /// The same frame as the generated builder makes it.
    fn built(stamp: &FrameStamp, cells: &[(u32, &[u8])]) -> Vec<u8> {
        let mut enc = ViewEncoder::new();
        enc.stage(cells.iter().copied());
        let header = wire::FrameHeader::new(stamp.shard.0, stamp.tick.0 as u32, stamp.server_time_ms as u32);
        build_view(&header, &enc.runs, &enc.players)
    }

    /// A view frame of these fields, made by the generated builder.
    fn build_view(header: &wire::FrameHeader, runs: &[wire::CellRun], players: &[wire::PlayerState]) -> Vec<u8> {
        let mut fbb = FlatBufferBuilder::new();
        let (runs, players) = (fbb.create_vector(runs), fbb.create_vector(players));
        let args = wire::ServerMessageArgs {
            frame: Some(header),
            runs: Some(runs),
            players: Some(players),
            ..Default::default()
        };
        let root = wire::ServerMessage::create(&mut fbb, &args);
        fbb.finish(root, None);
        fbb.finished_data().to_vec()
    }

    /// A view frame's (shard, tick, time) and each cell with its players' bytes.
    type Read = ((u32, u32, u32), Vec<(u32, Vec<u8>)>);

    /// What a decoder reads of a view frame.
    fn read(bytes: &[u8]) -> Read {
        let Ok(ServerMsg::View(v)) = decode(bytes) else { panic!("a view frame") };
        let h = v.header();
        ((h.shard_id(), h.tick(), h.time_ms()), v.cells().map(|c| (c.cell(), c.players().bytes().to_vec())).collect())
    }

    #[test]
    fn the_written_frame_reads_as_the_builders_and_is_as_long_as_said() {
        let (a, b, many) = (entries(&[1, 2, 70_000]), entries(&[4]), entries(&(0..70_000).collect::<Vec<_>>()));
        let cases: [&[(u32, &[u8])]; 6] = [
            &[],
            &[(3, &[][..])],
            &[(12, &a[..])],
            &[(12, &a[..]), (0x1_0003, &b[..]), (14, &[][..])],
            &[(1, &b[..]), (2, &b[..]), (3, &b[..])],
            &[(9, &many[..]), (10, &a[..])],
        ];
        for cells in cases {
            let mut out = vec![0xee; 3];
            write_view_frame(&mut out, &STAMP, FrameSize::of(cells.iter().copied()), cells.iter().copied());
            let written = &out[3..];
            assert_eq!(written.len(), FrameSize::of(cells.iter().copied()).bytes(), "{} cells", cells.len());
            assert_eq!(read(written), read(&built(&STAMP, cells)), "{} cells", cells.len());
        }
    }

    #[test]
    fn a_view_too_large_for_one_frame_is_cut_between_cells() {
        let (a, b) = (entries(&[1, 2, 3]), entries(&[4]));
        let cells = [(1, &a[..]), (2, &b[..]), (3, &a[..]), (4, &[][..])];
        let whole = FrameSize::of(cells.iter().copied()).bytes();
        assert_eq!(frame_spans(cells.iter().copied(), whole).len(), 1, "fits whole");
        let limit = FrameSize::of(cells[..2].iter().copied()).bytes();
        let spans = frame_spans(cells.iter().copied(), limit);
        assert_eq!(spans.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>(), [(0, 2), (2, 2)]);
        for (first, n, size) in spans {
            assert!(size.bytes() <= limit);
            assert_eq!(size, FrameSize::of(cells[first..first + n].iter().copied()));
        }
        let tiny = frame_spans(cells.iter().copied(), 1);
        assert_eq!(tiny.len(), 4, "a cell alone over the limit is a span of its own");
        assert_eq!(frame_spans([], 100).len(), 1, "no cells: one empty span");
    }

    #[test]
    fn a_cell_of_more_than_a_run_holds_comes_as_runs_of_the_same_cell() {
        let ids: Vec<u32> = (0..MAX_RUN_PLAYERS as u32 + 3).collect();
        let many = entries(&ids);
        let mut enc = ViewEncoder::new();
        let frame = enc.encode(&STAMP, [(9, &many[..])]).to_vec();
        let Ok(ServerMsg::View(v)) = decode(&frame) else { panic!("a view frame") };
        assert_eq!(v.runs(), 2, "two runs");
        let cells: Vec<(u32, usize)> = v.cells().map(|c| (c.cell(), c.players().len())).collect();
        assert_eq!(cells, [(9, MAX_RUN_PLAYERS + 3)], "read back as one cell");
    }

    #[test]
    fn a_bundle_carries_the_players_bytes_unchanged() {
        let (a, b) = (entries(&[1]), entries(&[2, 3]));
        let bundle = ViewEncoder::new().encode_bundle(&STAMP, 4, [(12, &a[..]), (13, &b[..])]);
        let Ok(ServerMsg::CellBundle(got)) = decode(&bundle) else { panic!("a bundle") };
        assert_eq!((got.stamp(), got.region()), (STAMP, 4));
        let cells: Vec<(u32, &[u8])> = got.cells().map(|(c, r)| (c, &got.players()[r])).collect();
        assert_eq!(cells, [(12, &a[..]), (13, &b[..])]);
    }

    #[test]
    fn runs_that_do_not_add_up_are_refused() {
        let players = [wire::PlayerState([0; ENTRY_BYTES]); 3];
        for counts in [[2u16, 2], [1, 0]] {
            let runs: Vec<wire::CellRun> = counts.iter().map(|&n| wire::CellRun::new(1, 0, n)).collect();
            let frame = build_view(&wire::FrameHeader::new(1, 2, 3), &runs, &players);
            assert!(decode(&frame).is_err(), "{counts:?}");
            let mut fbb = FlatBufferBuilder::new();
            let (runs, players) = (fbb.create_vector(&runs), fbb.create_vector(&players));
            let args = wire::CellBundleArgs { runs: Some(runs), players: Some(players), ..Default::default() };
            let body = wire::CellBundle::create(&mut fbb, &args);
            let bytes = finish(&mut fbb, wire::ServerBody::CellBundle, body.as_union_value());
            assert!(decode(&bytes).is_err(), "bundle {counts:?}");
        }
    }
}
