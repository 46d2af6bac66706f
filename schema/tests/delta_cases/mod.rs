//! Protocol 8's view frames for tests, built with the protocol's own encoders:
//! the worlds they predict in, scripted sequences that cover every item and
//! record kind, random walks over cells, tiers and shards, and frames and
//! deltas that are malformed on purpose. Shared by the fixture
//! (`tests/delta_fixture.rs`), the fuzz corpus (`tests/fuzz_corpus.rs`) and
//! the differential oracle (`examples/delta_oracle.rs`).
#![allow(dead_code)] // each user takes a part
// Counts bytes are written as enters_changes_leaves (3, 3 and 2 bits).
#![allow(clippy::unusual_byte_groupings)]

use mino_protocol::delta::{encode_delta, encode_full, put_varint};
use mino_protocol::entry::{flags, Entry};
use mino_protocol::grid::CellGrid;
use mino_protocol::held::{Delivery, Held};
use mino_protocol::motion::Motion;
use mino_protocol::stencil::{candidates, view_cells, Stencil, ViewScratch};
use mino_protocol::view::{
    write_item, write_section, write_section_cell, write_section_header_implied, write_unchanged, Implied, ItemKind,
    Section, SectionView,
};
use mino_protocol::wire::Bounds;
use mino_protocol::PlayerId;
use std::collections::{BTreeMap, BTreeSet};

/// A world deltas predict in: bounds (world units, f32 as the Welcome
/// carries them), walking speed (world units/s), tick rate (Hz), the most
/// players a held cell may have, the cell size (world units; 0: no grid,
/// nobody handed off) and the view radius (world units: implied cells are
/// read with its stencil, protocol 7).
#[derive(Clone, Copy, Debug)]
pub struct World {
    /// min_x, min_y, max_x, max_y.
    pub bounds: [f32; 4],
    /// World units a second.
    pub speed: f32,
    /// Ticks a second.
    pub tick_hz: u16,
    /// Most players of one held cell.
    pub max_players: usize,
    /// The grid's cell side, world units (0: none).
    pub cell_size: f32,
    /// The view radius, world units.
    pub view_radius: f32,
}

impl World {
    /// Its movement rule.
    pub fn motion(&self) -> Motion {
        let [a, b, c, d] = self.bounds;
        Motion::new(&Bounds::new(a, b, c, d), self.speed, self.tick_hz)
    }

    /// Its grid, if it has one.
    pub fn grid(&self) -> Option<CellGrid> {
        let [a, b, c, d] = self.bounds;
        CellGrid::new(&Bounds::new(a, b, c, d), self.cell_size)
    }

    /// Its view stencil.
    pub fn stencil(&self) -> Stencil {
        Stencil::of_view(self.view_radius, self.cell_size)
    }

    /// A client holding nothing yet, its frames reaching it by `delivery`.
    pub fn held_by(&self, delivery: Delivery) -> Held {
        self.held().delivered(delivery)
    }

    /// A client holding nothing yet, its frames in order.
    pub fn held(&self) -> Held {
        let held = Held::new(self.motion(), self.max_players);
        match self.grid() {
            Some(grid) => held.handing_off(grid).seeing(self.stencil()),
            None => held,
        }
    }
}

/// The worlds: the walk game's, an odd one (offset bounds, fractional speed,
/// 30 Hz), and a small one with few players a cell (big steps, walls hit
/// often, the player limit reached), all without a grid; then two with one,
/// where players are handed off between cells: the walk game's with area of
/// interest, and an odd one (offset bounds, cells that do not divide them).
pub const WORLDS: [World; 5] = [
    World {
        bounds: [0.0, 0.0, 1000.0, 1000.0],
        speed: 120.0,
        tick_hz: 20,
        max_players: 1000,
        cell_size: 0.0,
        view_radius: 0.0,
    },
    World {
        bounds: [-50.0, 10.0, 1234.5, 777.25],
        speed: 333.3,
        tick_hz: 30,
        max_players: 500,
        cell_size: 0.0,
        view_radius: 0.0,
    },
    World {
        bounds: [0.0, 0.0, 100.0, 50.0],
        speed: 10.0,
        tick_hz: 10,
        max_players: 12,
        cell_size: 0.0,
        view_radius: 0.0,
    },
    World {
        bounds: [0.0, 0.0, 1000.0, 1000.0],
        speed: 120.0,
        tick_hz: 20,
        max_players: 1000,
        cell_size: 250.0,
        view_radius: 250.0,
    },
    World {
        bounds: [-50.0, 10.0, 1234.5, 777.25],
        speed: 333.3,
        tick_hz: 30,
        max_players: 500,
        cell_size: 301.7,
        view_radius: 500.0,
    },
];

/// A named sequence of view frames (the bytes of `ServerMessage.view`) in
/// one world, applied in order by one client.
pub struct Sequence {
    /// What it shows.
    pub name: &'static str,
    /// Index into [`WORLDS`].
    pub world: usize,
    /// The frames.
    pub frames: Vec<Vec<u8>>,
    /// How they reach the client: in order, or as datagrams (lost, late,
    /// out of order: the client holds them by the lossy rule).
    pub delivery: Delivery,
}

/// A player: id, quantized position, heading, walking, input seq.
pub fn p(id: u32, x: u16, y: u16, heading: u8, moving: bool, seq: u8) -> Entry {
    Entry { id: PlayerId(id), x, y, heading, flags: flags(moving, seq) }
}

/// A full form's item.
pub fn full(entries: &[Entry]) -> Vec<u8> {
    let mut body = Vec::new();
    encode_full(entries, &mut body);
    item(ItemKind::Full, &body)
}

/// A delta's item from `base` to `new` over `span` ticks.
pub fn delta(base: &[Entry], new: &[Entry], span: u32, motion: &Motion) -> Vec<u8> {
    let mut body = Vec::new();
    encode_delta(base, new, span, motion, &mut body);
    item(ItemKind::Delta { span }, &body)
}

/// `e` after `ticks` ticks of walking by `m`'s rule: its heading's steps
/// when moving, else where it stands.
fn walked(m: &Motion, e: Entry, ticks: u32) -> Entry {
    let (x, y) = m.advance((e.x, e.y), e.heading, e.moving(), ticks);
    Entry { x, y, ..e }
}

/// A supplement's item: players added after a delta.
pub fn supplement(entries: &[Entry]) -> Vec<u8> {
    let mut body = Vec::new();
    encode_full(entries, &mut body);
    item(ItemKind::Supplement, &body)
}

/// A forget's item.
pub fn forget() -> Vec<u8> {
    item(ItemKind::Forget, &[])
}

/// An item of `kind` around `body`.
pub fn item(kind: ItemKind, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_item(&mut out, kind, body);
    out
}

/// A raw item: tag `kind | 0 << 4` with a length, as [`item`] writes it, of
/// a kind code (so a malformed body or an unknown kind can be written).
pub fn raw_item(code: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let len = body.len();
    if len < 15 {
        out.push(code | (len as u8) << 4);
    } else {
        out.push(code | 15 << 4);
        put_varint(&mut out, (len - 15) as u64);
    }
    out.extend_from_slice(body);
    out
}

/// One section's cells: (cell id, its items), cells increasing.
pub type Cells = Vec<(u32, Vec<Vec<u8>>)>;

/// A view frame of sections: (shard, tick, cells).
pub fn frame(sections: &[(u32, u64, Cells)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (shard, tick, cells) in sections {
        let cells: Vec<(u32, Vec<&[u8]>)> =
            cells.iter().map(|(c, items)| (*c, items.iter().map(Vec::as_slice).collect())).collect();
        write_section(&mut out, &Section { shard: *shard, tick: *tick, cells: &cells });
    }
    out
}

/// The candidates of `view` at due exponent `due` in `world` (its grid and
/// stencil): (cell, period), by increasing cell.
pub fn candidates_of(world: usize, view: SectionView, due: u8) -> Vec<(u32, u32)> {
    let w = WORLDS[world];
    let grid = w.grid().expect("a world with a grid");
    let (mut cells, mut room) = (Vec::new(), ViewScratch::default());
    view_cells(&grid, &w.stencil(), (view.key, view.previous), &mut cells, &mut room, |c, t| (c, t));
    let mut out = Vec::new();
    candidates(cells, view.rung, due, |c, p| out.push((c, p))).expect("a rung of the ladder");
    out
}

/// A section with implied cells (protocol 7): `shard` at `tick`, its view
/// `view` (written when `named`) at due exponent `due`; the candidates in
/// `implied` are implied (empty deltas over their periods), `explicit` are
/// its cells; `count_extra` is added to the count written (and the bits
/// grown), for a count that is not the view's.
#[allow(clippy::too_many_arguments)]
pub fn implied_section(
    world: usize,
    (shard, tick): (u32, u64),
    view: SectionView,
    due: u8,
    implied: &[u32],
    explicit: &Cells,
    named: bool,
    count_extra: usize,
) -> Vec<u8> {
    let candidates = candidates_of(world, view, due);
    let count = candidates.len() + count_extra;
    let mut bits = vec![0u8; count.div_ceil(8)];
    for (i, (c, _)) in candidates.iter().enumerate() {
        if implied.contains(c) {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    assert_eq!(
        implied.len(),
        candidates.iter().filter(|(c, _)| implied.contains(c)).count(),
        "every implied cell a candidate"
    );
    let mut out = Vec::new();
    let block = Implied { view, due, count, bits: &bits };
    write_section_header_implied(&mut out, shard, tick, explicit.len(), &block, named);
    let mut previous = 0;
    for (cell, items) in explicit {
        let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
        write_section_cell(&mut out, previous, *cell, &items);
        previous = *cell;
    }
    out
}

/// Protocol 7's implied cells, scripted in the walk game's world with
/// 250-unit cells (a 4 x 4 grid) and a view radius of one cell: walkers
/// advanced by implied empty deltas (one handed off between two implied
/// cells); implied and told cells in one section; a second section taking
/// the view named by the first; a view of two cells at a slower rung; then
/// a count that is not the view's candidates and a cell both implied and
/// told, refused before anything of their section applies.
fn implied_cells() -> Sequence {
    const W: usize = 3;
    let m = WORLDS[W].motion();
    let walked = |e: Entry, ticks: u32| walked(&m, e, ticks);
    // A walks east from cell 1 into cell 2 at the first tick; B stands in
    // 2; C walks south in 6; D stands in cell 5 of shard 8.
    let (a, b, c) =
        (p(1, 16_000, 1000, 0, true, 0), p(2, 20_000, 1000, 0, false, 0), p(3, 20_000, 17_000, 64, true, 0));
    let d = p(4, 1000, 17_000, 0, false, 0);
    let view = |key, previous, rung| SectionView { key, previous, rung };
    let full1 = |e: &[Entry]| vec![full(e)];
    let mut frames = vec![frame(&[
        (7, 10, vec![(1, full1(&[a])), (2, full1(&[b])), (6, full1(&[c]))]),
        (8, 10, vec![(5, full1(&[d]))]),
    ])];
    // Tick 11 (due exponent 0: own and near cells): cells 1, 2 and 6
    // implied; A is handed off from 1 to 2; shard 8's cell 5 implied in a
    // section that takes the view named before it.
    frames.push(
        [
            implied_section(W, (7, 11), view(6, 0, 0), 0, &[1, 2, 6], &vec![], true, 0),
            implied_section(W, (8, 11), view(6, 0, 0), 0, &[5], &vec![], false, 0),
        ]
        .concat(),
    );
    // Tick 12 (due exponent 2): A turns north in cell 2, told; C implied
    // over one tick.
    let a1 = walked(a, 1);
    let a2 = Entry { heading: 192, ..walked(a1, 1) };
    frames.push(implied_section(
        W,
        (7, 12),
        view(6, 0, 0),
        2,
        &[6],
        &vec![(2, vec![delta(&[a1, b], &[a2, b], 1, &m)])],
        true,
        0,
    ));
    // Tick 14: the viewer crossed from 6 into 7 (a view of both) at rung 1:
    // cells 2 and 6 implied over two ticks.
    frames.push(implied_section(W, (7, 14), view(7, 6, 1), 1, &[2, 6], &vec![], true, 0));
    // A count one past the view's candidates, then a cell both implied and
    // told: each refused, the cells held as they were.
    frames.push(implied_section(W, (7, 15), view(6, 0, 0), 0, &[2, 6], &vec![], true, 1));
    frames.push(implied_section(W, (7, 15), view(6, 0, 0), 0, &[2, 6], &vec![(6, full1(&[walked(c, 3)]))], true, 0));
    // And the walk goes on from what is held.
    frames.push(implied_section(W, (7, 15), view(6, 0, 0), 0, &[2, 6], &vec![], true, 0));
    Sequence { name: "implied cells", world: W, frames, delivery: Delivery::InOrder }
}

/// xorshift64*: a tiny deterministic generator, so every run builds the same
/// frames.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `per_mille` / 1000.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

/// Every sequence: the scripted ones, then the random walks.
pub fn sequences() -> Vec<Sequence> {
    vec![
        every_change(),
        spans(),
        long_items(),
        shards_and_several_items(),
        forget_and_return(),
        resets(),
        item_errors(),
        walk("walk: two shards, tiers of 1 to 8 ticks, the walk game's world", 0, 0x5eed_0001, 20, 40),
        walk("walk: the odd world, from a tick near 32-bit wrap", 1, 0x5eed_0002, 14, 36),
        walk("walk: the small world, walls and the player limit", 2, 0x5eed_0003, 10, 36),
        handoffs(),
        implied_cells(),
        handoff_walk("handoff walk: the walk game's world, cells of 250 units", 3, 0x5eed_0004, 24, 60),
        handoff_walk("handoff walk: the odd world, cells that do not divide it", 4, 0x5eed_0005, 24, 60),
        lossy_datagrams(),
        lossy(implied_cells(), "lossy: the implied cells' frames, some lost or late", 0x5eed_000c),
        lossy(
            handoff_walk("lossy: a handoff walk's frames, some lost or late", 3, 0x5eed_0007, 24, 60),
            "lossy: a handoff walk's frames, some lost or late",
            0x5eed_0008,
        ),
    ]
}

/// Every change record: each what-bit combination, residuals of both signs
/// and of several bytes, a walker clamped at a wall, then leaves and enters
/// in the compact counts and past them (the escape).
fn every_change() -> Sequence {
    let m = WORLDS[0].motion();
    let base: Vec<Entry> = (0..12)
        .map(|i| p(10 + i * 7, 5000 + i as u16 * 4000, 30_000, (i * 21) as u8, i % 4 != 3, i as u8))
        .chain([p(200, 65_400, 100, 0, true, 1), p(201, 3, 65_535, 160, true, 2)])
        .collect();
    let walked = |b: &Entry, span: u32| walked(&m, *b, span);
    let mut t1: Vec<Entry> = base.iter().map(|b| walked(b, 1)).collect();
    // 1 heading: a turn, at the new heading's step.
    let turn = |b: &Entry, h: u8| {
        let (x, y) = m.advance((b.x, b.y), h, b.moving(), 1);
        Entry { x, y, heading: h, ..*b }
    };
    t1[0] = turn(&base[0], 77);
    // 2 flags: a new input seq.
    t1[1].flags = flags(true, 100);
    // 3 heading and flags.
    t1[2] = turn(&base[2], 200);
    t1[2].flags = flags(true, 55);
    // 4 position: pushed, residual of both signs, one of several bytes.
    t1[4].x += 3;
    t1[4].y -= 2_000;
    // 5 heading and position.
    t1[5] = turn(&base[5], 1);
    t1[5].y += 70;
    // 6 flags and position: stopped part way.
    t1[6] = Entry { flags: flags(false, 6), x: base[6].x + 100, ..base[6] };
    // 7 all three: started walking somewhere else.
    t1[7] = Entry { heading: 9, flags: flags(true, 7), x: 60_000, y: 1, ..base[7] };
    let mut t2: Vec<Entry> = t1.iter().map(|b| walked(b, 1)).collect();
    t2.remove(9);
    t2.remove(3);
    t2[0].heading = 80;
    t2.push(p(500, 1, 2, 3, true, 4));
    t2.push(p(9, 700, 800, 128, false, 0));
    t2.sort_by_key(|e| e.id);
    let mut t3: Vec<Entry> = t2.iter().map(|b| walked(b, 1)).filter(|e| e.id.0 % 3 != 0).collect();
    for e in t3.iter_mut().step_by(2) {
        e.heading = e.heading.wrapping_add(100);
    }
    t3.extend((0..9).map(|i| p(1000 + i * 1000, i as u16 * 7000, 60_000 - i as u16, i as u8, i % 2 == 0, 0)));
    t3.sort_by_key(|e| e.id);
    let cell = 1;
    let frames = vec![
        frame(&[(1, 100, vec![(cell, vec![full(&base)])])]),
        frame(&[(1, 101, vec![(cell, vec![delta(&base, &t1, 1, &m)])])]),
        frame(&[(1, 102, vec![(cell, vec![delta(&t1, &t2, 1, &m)])])]),
        frame(&[(1, 103, vec![(cell, vec![delta(&t2, &t3, 1, &m)])])]),
        frame(&[(1, 104, vec![(cell, vec![delta(&t3, &[], 1, &m)])])]),
    ];
    Sequence {
        name: "every change record, leaves and enters, the counts' escape",
        world: 0,
        frames,
        delivery: Delivery::InOrder,
    }
}

/// Deltas over every span (kinds 1 to 7): 1, 2, 4 ... 64 ticks, walkers
/// going straight (empty deltas) and one turning between frames.
fn spans() -> Sequence {
    let m = WORLDS[1].motion();
    let mut state: Vec<Entry> =
        (0..6).map(|i| p(3 + i, 30_000 + i as u16 * 11, 30_000 - i as u16 * 13, (i * 40) as u8, true, 0)).collect();
    state.push(p(40, 12, 34, 0, false, 3));
    let mut frames = vec![frame(&[(2, 1000, vec![(5, vec![full(&state)])])])];
    let mut tick = 1000u64;
    for (k, span) in [1u32, 2, 4, 8, 16, 32, 64].into_iter().enumerate() {
        let mut next: Vec<Entry> = state.iter().map(|b| walked(&m, *b, span)).collect();
        if k % 2 == 1 {
            // Turned half way: the rest of the way at the new heading.
            let b = state[k % 6];
            let half = m.advance((b.x, b.y), b.heading, true, span / 2);
            let h = b.heading.wrapping_add(64);
            let (x, y) = m.advance(half, h, true, span - span / 2);
            next[k % 6] = Entry { x, y, heading: h, ..b };
        }
        tick += u64::from(span);
        frames.push(frame(&[(2, tick, vec![(5, vec![delta(&state, &next, span, &m)])])]));
        state = next;
    }
    Sequence { name: "deltas over 1 to 64 ticks", world: 1, frames, delivery: Delivery::InOrder }
}

/// Item lengths in the tag (under 15), at 15 (the tag says 15, a varint 0
/// follows), and long (a varint of two bytes); the biggest ids and cell id.
fn long_items() -> Sequence {
    let m = WORLDS[0].motion();
    // A full form of two players with one-byte ids: 1 + 2 * 7 = 15 bytes.
    let fifteen = [p(1, 2, 3, 4, true, 5), p(2, 6, 7, 8, false, 9)];
    let crowd: Vec<Entry> =
        (0..150u32).map(|i| p(i * 13 + 1, (i * 400) as u16, 65_535 - i as u16, i as u8, true, 0)).collect();
    let big = [p(u32::MAX - 1, 0, 0, 0, false, 0), p(u32::MAX, 65_535, 65_535, 255, true, 127)];
    let mut with_big = fifteen.to_vec();
    with_big.extend_from_slice(&big);
    let frames = vec![
        frame(&[(0, 0, vec![(1, vec![full(&fifteen)]), (2, vec![full(&crowd)]), (u32::MAX, vec![full(&big)])])]),
        frame(&[(0, 1, vec![(1, vec![delta(&fifteen, &with_big, 1, &m)])])]),
        frame(&[(u32::MAX, u64::from(u32::MAX), vec![(9, vec![delta(&[], &fifteen, 1, &m)])])]),
    ];
    Sequence {
        name: "item lengths in the tag, at 15 and long; the largest ids",
        world: 0,
        frames,
        delivery: Delivery::InOrder,
    }
}

/// Several sections and shards in one frame (the same shard twice at two
/// ticks, the same cell id in two shards), cells with several items.
fn shards_and_several_items() -> Sequence {
    let m = WORLDS[0].motion();
    let a = vec![p(5, 100, 100, 0, true, 0), p(6, 200, 200, 64, true, 0)];
    let b: Vec<Entry> = a
        .iter()
        .map(|e| {
            let (x, y) = m.advance((e.x, e.y), e.heading, true, 1);
            Entry { x, y, ..*e }
        })
        .collect();
    let c = vec![p(6, 50_000, 50_000, 3, false, 1)];
    let frames = vec![
        frame(&[
            (7, 50, vec![(3, vec![full(&a)]), (4, vec![full(&c)])]),
            (9, 49, vec![(3, vec![full(&c)])]),
            (7, 51, vec![(4, vec![delta(&c, &c, 1, &m)]), (8, vec![full(&a), delta(&a, &b, 1, &m)])]),
        ]),
        frame(&[
            (9, 50, vec![(3, vec![delta(&c, &[], 1, &m), forget()])]),
            (7, 52, vec![(3, vec![forget(), full(&b)]), (8, vec![delta(&b, &b, 1, &m), delta(&b, &a, 1, &m)])]),
        ]),
    ];
    Sequence {
        name: "sections of several shards, cells of several items",
        world: 0,
        frames,
        delivery: Delivery::InOrder,
    }
}

/// A cell forgotten, then told by a delta (onto the empty state: only
/// enters), then by a full form; a delta onto a cell never held.
fn forget_and_return() -> Sequence {
    let m = WORLDS[2].motion();
    let a = vec![p(1, 10_000, 10_000, 10, true, 0), p(2, 20_000, 20_000, 20, false, 0)];
    let frames = vec![
        frame(&[(3, 10, vec![(12, vec![full(&a)])])]),
        frame(&[(3, 11, vec![(12, vec![forget()]), (13, vec![delta(&[], &a, 1, &m)])])]),
        frame(&[(3, 12, vec![(12, vec![delta(&[], &a[1..], 2, &m)])])]),
        frame(&[(3, 13, vec![(12, vec![full(&a)]), (13, vec![forget()])])]),
    ];
    Sequence {
        name: "forgets, deltas onto cells never held or forgotten",
        world: 2,
        frames,
        delivery: Delivery::InOrder,
    }
}

/// Resets: a section with no cells drops every cell of its shard (a resync,
/// or the shard left), the other shards' cells stay; a reset then the
/// shard's cells anew in one frame; a reset of a shard holding nothing.
fn resets() -> Sequence {
    let m = WORLDS[2].motion();
    let a = vec![p(1, 10_000, 10_000, 10, true, 0), p(2, 20_000, 20_000, 20, false, 0)];
    let frames = vec![
        frame(&[(3, 10, vec![(12, vec![full(&a)]), (13, vec![full(&a[1..])])]), (4, 10, vec![(12, vec![full(&a)])])]),
        frame(&[(3, 11, vec![])]),
        frame(&[(4, 12, vec![]), (4, 12, vec![(12, vec![delta(&[], &a, 1, &m)])]), (5, 12, vec![])]),
    ];
    Sequence { name: "resets of a shard's cells", world: 2, frames, delivery: Delivery::InOrder }
}

/// Frames that verify but carry an item that does not apply to what is held:
/// the items before it stay applied (Held's rule), the frames after apply.
fn item_errors() -> Sequence {
    let m = WORLDS[2].motion();
    let a = vec![p(1, 100, 100, 0, false, 0), p(4, 200, 200, 0, false, 0)];
    let body = |bytes: &[u8]| item(ItemKind::Delta { span: 1 }, bytes);
    let cells = |items: Vec<Vec<u8>>| vec![(2, vec![full(&a)]), (3, items)];
    let too_many: Vec<Entry> = (1..=13).map(|i| p(i, 0, 0, 0, false, 0)).collect();
    let bad = [
        // A delta onto a cell never held that changes a player.
        body(&[0b000_001_00, 1, 7]),
        // An enter of a player already there (cell 2 holds 1 and 4).
        body(&[0b001_000_00, 4, 0, 0, 0, 0, 0, 0]),
        // A leaving player changed.
        body(&[0b000_001_01, 0, 1, 7]),
        // A residual off the grid.
        body(&[0b000_001_00, 4, 0xff, 0xff, 0x07, 0]),
        // More players than the world's limit (12).
        full(&too_many),
        // Ids not increasing.
        raw_item(0, &[2, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        // A counts byte that is neither compact nor the escape.
        body(&[0b111_000_01, 0]),
        // Bytes after the last record.
        body(&[0b000_000_01, 0, 0]),
        // A record cut short.
        body(&[0b000_001_00, 4, 0x80]),
        // A varint of eleven bytes.
        body(&[0b000_000_01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0]),
    ];
    let mut frames = Vec::new();
    for (k, b) in bad.into_iter().enumerate() {
        let tick = 20 + k as u64;
        let items = if k == 0 { vec![b] } else { vec![delta(&[], &a, 1, &m), b] };
        let cells = if k == 0 { vec![(9, items)] } else { cells(items) };
        frames.push(frame(&[(4, tick, cells), (5, tick, vec![(1, vec![full(&a[..1])])])]));
        frames.push(frame(&[(4, tick, vec![(3, vec![forget()])])]));
    }
    // A supplement after a full form (not after a delta), and one of a
    // player the delta before it left there.
    let nine = [p(9, 300, 300, 0, false, 0)];
    for (k, items) in
        [vec![full(&a), supplement(&nine)], vec![delta(&[], &a, 1, &m), supplement(&a[1..])]].into_iter().enumerate()
    {
        let tick = 40 + k as u64;
        frames.push(frame(&[(4, tick, vec![(3, items)])]));
        frames.push(frame(&[(4, tick, vec![(3, vec![forget()])])]));
    }
    // Unchanged items (a lossy client's check of a delta's base, read by
    // every client): one before a delta applies (in order, it checks
    // nothing); one after an item, one before a full form, one alone, and
    // ones whose body is cut short, has a byte left over or is past 32 bits
    // do not (the items before it stay applied).
    let unchanged = |ticks: u32| {
        let mut out = Vec::new();
        write_unchanged(&mut out, ticks);
        out
    };
    let d = || delta(&[], &a, 1, &m);
    for (k, items) in [
        vec![unchanged(300), d()],
        vec![d(), unchanged(2)],
        vec![unchanged(2), full(&a)],
        vec![unchanged(2)],
        vec![raw_item(10, &[0x80]), d()],
        vec![raw_item(10, &[1, 0]), d()],
        vec![raw_item(10, &[0xff, 0xff, 0xff, 0xff, 0x10]), d()],
    ]
    .into_iter()
    .enumerate()
    {
        let tick = 50 + k as u64;
        frames.push(frame(&[(4, tick, vec![(3, items)])]));
        frames.push(frame(&[(4, tick, vec![(3, vec![forget()])])]));
    }
    Sequence { name: "items that do not apply to what is held", world: 2, frames, delivery: Delivery::InOrder }
}

/// Protocol 6's handoff, scripted in the walk game's world with 250-unit
/// cells (a 4 x 4 grid; column borders every 16,384 quantized units, a
/// walker 393 a tick): a walker handed off to the cell it walked into,
/// advanced with its own over the same span; a supplement of a player from a
/// cell not in the frame; a walker whose new cell is advanced over another
/// span (dropped, and brought by that cell's supplement); a walker of a cell
/// told by two items (dropped); a cell of another shard with the same id
/// (nobody moves between shards).
fn handoffs() -> Sequence {
    let m = WORLDS[3].motion();
    let walked = |e: Entry, ticks: u32| walked(&m, e, ticks);
    let (a, b, c) = (p(1, 16_000, 1000, 0, true, 0), p(2, 1000, 1000, 0, false, 0), p(3, 20_000, 1000, 64, false, 0));
    let (e, f) = (p(5, 36_000, 1000, 0, false, 0), p(4, 17_000, 20_000, 192, true, 0));
    let h = p(7, 16_300, 20_000, 0, true, 0);
    let frames = vec![
        frame(&[
            (7, 10, vec![(1, vec![full(&[a, b])]), (2, vec![full(&[c])]), (3, vec![full(&[e])])]),
            (8, 10, vec![(2, vec![full(&[b])])]),
        ]),
        // A walks into cell 2, advanced with cell 1 over one tick: moved.
        frame(&[
            (7, 11, vec![(1, vec![delta(&[a, b], &[walked(a, 1), b], 1, &m)]), (2, vec![delta(&[c], &[c], 1, &m)])]),
            (8, 11, vec![(2, vec![delta(&[b], &[b], 1, &m)])]),
        ]),
        // F walks in from cell 6, not in the frame: a supplement.
        frame(&[(
            7,
            12,
            vec![(2, vec![delta(&[walked(a, 1), c], &[walked(a, 2), c], 1, &m), supplement(&[walked(f, 1)])])],
        )]),
        // Over 64 ticks A walks into cell 3, advanced over 32: dropped from
        // cell 2, brought by cell 3's supplement.
        frame(&[(
            7,
            76,
            vec![
                (2, vec![delta(&[walked(a, 2), c, walked(f, 1)], &[walked(a, 66), c, walked(f, 65)], 64, &m)]),
                (3, vec![delta(&[e], &[e], 32, &m), supplement(&[walked(a, 66)])]),
            ],
        )]),
        // H is told whole then walks into cell 6 by a delta: two items, so
        // it is dropped (cell 6 is advanced over the same tick).
        frame(&[(7, 77, vec![(5, vec![full(&[h]), delta(&[h], &[walked(h, 1)], 1, &m)]), (6, vec![full(&[])])])]),
        frame(&[(7, 78, vec![(6, vec![delta(&[], &[], 1, &m)])])]),
    ];
    Sequence { name: "handoffs between cells", world: 3, frames, delivery: Delivery::InOrder }
}

/// The lossy rule ([`Delivery::Lossy`]), scripted in the walk game's world
/// with 250-unit cells as a server sends deltas over datagrams: a delta onto
/// the step it starts from; one whose base was lost (broken, the cell left
/// as it is), then the chain of deltas that mends it; an unchanged item that
/// reaches back to what is held, and one that falls short; a late frame
/// (skipped), a whole item of the tick held (applied) and of an older one
/// (skipped); an empty cell said empty before the base (applied, held or
/// not) and said so while it holds someone (broken); a delta of a cell
/// never held (broken); a cell held at a step between a delta's base and
/// its tick; a walker crossing cells (not handed off: the supplement brings
/// it); a forget; ticks across the 32-bit wrap (shard 9); and chains that
/// repeat the delta before (passed over where held, with its supplement;
/// applied where it was lost).
fn lossy_datagrams() -> Sequence {
    const W: usize = 3;
    let m = WORLDS[W].motion();
    let walked = |e: Entry, ticks: u32| walked(&m, e, ticks);
    let unchanged = |ticks: u32| {
        let mut out = Vec::new();
        write_unchanged(&mut out, ticks);
        out
    };
    let ever = || unchanged(mino_protocol::view::UNCHANGED_EVER);
    // A walks east in cell 1, B stands there; C stands in cell 2; cell 3 is
    // empty; E stands in cell 5, sets off east at 13 and crosses into cell
    // 6 at 17.
    let (a, b, c) = (p(1, 1000, 1000, 0, true, 0), p(2, 2000, 2000, 0, false, 0), p(3, 20_000, 1000, 64, false, 0));
    let d = p(4, 40_000, 2000, 0, false, 0);
    let e = p(5, 16_384 - 393 * 4 - 200, 17_000, 0, false, 0);
    let at = |t: u32| walked(a, t);
    // E from tick 12 on: walking, `t` ticks after 12.
    let w = |t: u32| walked(Entry { flags: flags(true, 0), ..e }, t);
    let wrap = u64::from(u32::MAX);
    let frames = vec![
        frame(&[
            (7, 10, vec![(1, vec![full(&[a, b])]), (2, vec![full(&[c])]), (3, vec![full(&[])]), (5, vec![full(&[e])])]),
            (9, wrap, vec![(1, vec![full(&[a])])]),
        ]),
        // The next step, from 10: applies.
        frame(&[(7, 11, vec![(1, vec![delta(&[a, b], &[at(1), b], 1, &m)])])]),
        // Step 12 lost: 13's delta of cell 1 starts from 12, not held
        // (broken); cell 2, still since 10, applies by its unchanged item.
        frame(&[(
            7,
            13,
            vec![(1, vec![delta(&[at(2), b], &[at(3), b], 1, &m)]), (2, vec![unchanged(2), delta(&[c], &[c], 1, &m)])],
        )]),
        // The chain from 11 mends cell 1; cell 3, empty before 12, takes D.
        frame(&[(
            7,
            13,
            vec![
                (1, vec![delta(&[at(1), b], &[at(2), b], 1, &m), delta(&[at(2), b], &[at(3), b], 1, &m)]),
                (3, vec![ever(), delta(&[], &[d], 1, &m)]),
            ],
        )]),
        // Step 12's frame, late: skipped, and so is a whole item of 12.
        frame(&[(7, 12, vec![(1, vec![delta(&[at(1), b], &[at(2), b], 1, &m)]), (2, vec![full(&[c])])])]),
        // A whole item of the tick held applies; a delta of a cell never
        // held is broken.
        frame(&[(7, 14, vec![(1, vec![full(&[at(4), b])]), (4, vec![delta(&[], &[], 1, &m)])])]),
        // Cell 2's unchanged item falls a tick short of 13, what it holds:
        // broken; cell 3 said empty before the base while it holds D:
        // broken; shard 9 over the wrap: applies.
        frame(&[
            (
                7,
                15,
                vec![(2, vec![unchanged(0), delta(&[c], &[c], 1, &m)]), (3, vec![ever(), delta(&[], &[d], 1, &m)])],
            ),
            (9, wrap + 1, vec![(1, vec![delta(&[a], &[at(1)], 1, &m)])]),
        ]),
        // Cell 5 is due every 4 ticks: 16's delta over 4 ticks starts from
        // 12, and the cell had not changed for 2 ticks before: since 10,
        // which it holds. Cell 2 forgotten. Shard 9 skipped a step over the
        // wrap: broken.
        frame(&[
            (7, 16, vec![(2, vec![forget()]), (5, vec![unchanged(2), delta(&[e], &[w(4)], 4, &m)])]),
            (9, wrap + 3, vec![(1, vec![delta(&[at(2)], &[at(3)], 1, &m)])]),
        ]),
        // E crosses into cell 6 over a step: cell 5 keeps it no more (not
        // handed off), cell 6's supplement brings it.
        frame(&[(
            7,
            17,
            vec![
                (5, vec![delta(&[w(4)], &[w(5)], 1, &m)]),
                (6, vec![ever(), delta(&[], &[], 1, &m), supplement(&[w(5)])]),
            ],
        )]),
        // Cell 1, held as of 14 (a whole item), takes 20's delta over 8
        // ticks: its base, 12, is before what is held.
        frame(&[(7, 20, vec![(1, vec![delta(&[at(4), b], &[at(12), b], 8, &m)])])]),
        frame(&[(7, 21, vec![(1, vec![delta(&[at(12), b], &[at(13), b], 1, &m)])])]),
        // 22's chain repeats 21's delta (and its supplement): held as of
        // 21, the client passes over them.
        frame(&[(
            7,
            22,
            vec![(
                1,
                vec![
                    delta(&[at(12), b], &[at(13), b], 1, &m),
                    supplement(&[]),
                    delta(&[at(13), b], &[at(14), b], 1, &m),
                ],
            )],
        )]),
        // 24's chain from 21 (over 1 then 2 ticks), held as of 22: its
        // second base.
        frame(&[(
            7,
            24,
            vec![(1, vec![delta(&[at(13), b], &[at(14), b], 1, &m), delta(&[at(14), b], &[at(16), b], 2, &m)])],
        )]),
        // Items that start whole have no base: a full form and two deltas
        // after it all apply, though the cell is held a tick before.
        frame(&[(
            7,
            25,
            vec![(
                1,
                vec![
                    full(&[at(17), b]),
                    delta(&[at(17), b], &[at(18), b], 1, &m),
                    delta(&[at(18), b], &[at(19), b], 1, &m),
                ],
            )],
        )]),
    ];
    Sequence { name: "lossy: datagrams lost, late and out of order", world: W, frames, delivery: Delivery::Lossy }
}

/// `seq`'s frames as datagrams reach a lossy client, renamed `name`: the
/// first, then of the others one in six lost and one in six late (after the
/// next), by a generator seeded `seed`.
fn lossy(seq: Sequence, name: &'static str, seed: u64) -> Sequence {
    let mut rng = Rng(seed);
    let mut rest = seq.frames.into_iter();
    let mut frames: Vec<Vec<u8>> = rest.next().into_iter().collect();
    let mut late: Option<Vec<u8>> = None;
    for f in rest {
        match rng.below(6) {
            0 => {}
            1 if late.is_none() => late = Some(f),
            _ => {
                frames.push(f);
                frames.extend(late.take());
            }
        }
    }
    frames.extend(late);
    Sequence { name, world: seq.world, frames, delivery: Delivery::Lossy }
}

/// A random walk as [`walk`]'s, told with protocol 6's handoff deltas as a
/// server would (the rule's reference): a cell's delta over `(h, t]` keeps
/// every player of the shard that was in it at `h` and is still there at
/// `t`, wherever it went, and enters only players new since `h`; a player
/// that came from cell O is brought by a supplement of O's, sent unless O is
/// advanced by one delta over the same span in the same section (the client
/// moves it then). Cells are due every 1, 2, 4 or 8 ticks, all cells of a
/// period on the same ticks. After every frame a client's [`Held`] must hold
/// exactly each told cell's players (asserted here, so the fixture records
/// the rule, not a bug of it).
pub fn handoff_walk(name: &'static str, world: usize, seed: u64, players: u32, ticks: u64) -> Sequence {
    let w = WORLDS[world];
    let (m, grid) = (w.motion(), w.grid().expect("a world with a grid"));
    let mut rng = Rng(seed);
    let shards = [11u32, 0x8000_0001];
    let shard_of = |e: &Entry| shards[(e.id.0 % 2) as usize];
    let mut next_id = 100u32;
    let mut spawn = |rng: &mut Rng| {
        next_id += 1 + rng.below(50) as u32;
        let (x, y) = (rng.next() as u16, rng.next() as u16);
        p(next_id, x, y, rng.next() as u8, rng.chance(900), rng.next() as u8 & 127)
    };
    let mut all: Vec<Entry> = (0..players).map(|_| spawn(&mut rng)).collect();
    // Per tick: each player's cell then.
    let mut past: BTreeMap<u64, BTreeMap<u32, u32>> = BTreeMap::new();
    let mut told: BTreeMap<(u32, u32), Chain> = BTreeMap::new();
    let mut away: BTreeSet<(u32, u32)> = BTreeSet::new();
    let mut client = w.held();
    let mut frames = Vec::new();
    for tick in 1..=ticks {
        if tick > 1 {
            step(&mut all, &m, &mut rng);
            if rng.chance(100) {
                all.push(spawn(&mut rng));
            }
            if rng.chance(80) && !all.is_empty() {
                let i = rng.below(all.len() as u64) as usize;
                all.remove(i);
            }
        }
        let cells: BTreeMap<u32, u32> = all.iter().map(|e| (e.id.0, grid.cell_of_q(e.x, e.y))).collect();
        past.insert(tick, cells.clone());
        let mut now: BTreeMap<(u32, u32), Vec<Entry>> = BTreeMap::new();
        for e in &all {
            now.entry((shard_of(e), cells[&e.id.0])).or_default().push(*e);
        }
        now.values_mut().for_each(|v| v.sort_by_key(|e| e.id));
        if rng.chance(80) {
            if let Some(&key) = told.keys().nth(rng.below(told.len().max(1) as u64) as usize) {
                away.insert(key);
            }
        }
        if rng.chance(150) {
            if let Some(&key) = away.iter().next() {
                away.remove(&key);
            }
        }
        // Each due cell's items, and its delta's supplements by origin.
        let mut sections: BTreeMap<u32, Vec<Told>> = BTreeMap::new();
        let keys: BTreeSet<(u32, u32)> = now.keys().chain(told.keys()).copied().collect();
        for key in keys {
            let (shard, cell) = key;
            let entries = now.get(&key).cloned().unwrap_or_default();
            let mut sups = BTreeMap::new();
            let mut span = 0;
            let items = if away.contains(&key) {
                if told.remove(&key).is_none() {
                    continue;
                }
                vec![forget()]
            } else {
                let period = [1u64, 1, 2, 4, 8][(cell % 5) as usize];
                if tick % period != 0 {
                    continue;
                }
                match told.get(&key) {
                    Some(chain) if (tick - chain.tick).is_power_of_two() && tick - chain.tick <= 64 => {
                        let h = chain.tick;
                        span = (tick - h) as u32;
                        let then = &past[&h];
                        let kept: Vec<Entry> = all
                            .iter()
                            .filter(|e| shard_of(e) == shard)
                            .filter(|e| match then.get(&e.id.0) {
                                Some(&c) => c == cell,
                                None => cells[&e.id.0] == cell,
                            })
                            .copied()
                            .collect();
                        let mut kept = kept;
                        kept.sort_by_key(|e| e.id);
                        for e in &entries {
                            if let Some(&o) = then.get(&e.id.0).filter(|&&o| o != cell) {
                                sups.entry(o).or_insert_with(Vec::new).push(*e);
                            }
                        }
                        if rng.chance(40) {
                            span = 0;
                            vec![full(&chain.entries), delta(&chain.entries, &kept, (tick - h) as u32, &m)]
                        } else {
                            vec![delta(&chain.entries, &kept, (tick - h) as u32, &m)]
                        }
                    }
                    Some(_) => vec![full(&entries)],
                    None if entries.is_empty() => continue,
                    None => vec![full(&entries)],
                }
            };
            if items.iter().any(|i| i[0] & 0x0f == 8) {
                told.remove(&key);
            } else {
                told.insert(key, Chain { tick, entries });
            }
            sections.entry(shard).or_default().push((cell, items, sups, span));
        }
        // Supplements: all of them after a delta of several items; for a
        // cell advanced by one delta, those whose origin is not advanced by
        // one delta over the same span.
        let mut out: Vec<(u32, u64, Cells)> = Vec::new();
        for (shard, cells) in sections {
            let single: BTreeMap<u32, u32> = cells.iter().filter(|c| c.3 > 0).map(|c| (c.0, c.3)).collect();
            let cells: Cells = cells
                .into_iter()
                .map(|(cell, mut items, sups, span)| {
                    for (origin, entries) in sups {
                        if span == 0 || single.get(&origin) != Some(&span) {
                            items.push(supplement(&entries));
                        }
                    }
                    (cell, items)
                })
                .collect();
            out.push((shard, tick, cells));
        }
        past.retain(|&t, _| t + 64 >= tick);
        if out.is_empty() {
            continue;
        }
        if rng.chance(300) {
            out.reverse();
        }
        let bytes = frame(&out);
        let parsed = mino_protocol::view::ViewFrame::parse(&bytes).expect("verifies");
        client.apply(&parsed).unwrap_or_else(|e| panic!("{name}, tick {tick}: {e}"));
        let held: BTreeMap<(u32, u32), Vec<Entry>> = client.cells().map(|(k, c)| (*k, c.entries.to_vec())).collect();
        let want: BTreeMap<(u32, u32), Vec<Entry>> = told.iter().map(|(k, c)| (*k, c.entries.clone())).collect();
        assert_eq!(held, want, "{name}, tick {tick}: the client holds each cell's players");
        frames.push(bytes);
    }
    Sequence { name, world, frames, delivery: Delivery::InOrder }
}

/// A cell told in a handoff walk's tick: its id, items, its delta's
/// supplements by origin, and the span of its one delta (0: not one delta).
type Told = (u32, Vec<Vec<u8>>, BTreeMap<u32, Vec<Entry>>, u32);

/// What a walk's client holds of one cell: the tick it was last told and the
/// players then.
struct Chain {
    tick: u64,
    entries: Vec<Entry>,
}

/// A random walk of `players` players over a grid of cells of two shards for
/// `ticks` ticks, told as a server would: cells due by their tier (every 1,
/// 2, 4 or 8 ticks), a delta over the ticks since the cell was last told
/// (a full form when the span is not a power of two or the client holds
/// nothing), an emptied cell's delta, forgets of cells leaving the view and
/// full forms when they return; now and then a delta onto a cell never held,
/// or a full form and a delta in one cell.
pub fn walk(name: &'static str, world: usize, seed: u64, players: u32, ticks: u64) -> Sequence {
    let m = WORLDS[world].motion();
    let mut rng = Rng(seed);
    let shards = [11u32, 0x8000_0001];
    // Cells of a 4 x 4 grid over the 16-bit square.
    let cell_of = |e: &Entry| 1 + u32::from(e.y >> 14) * 4 + u32::from(e.x >> 14);
    let mut next_id = 100u32;
    let mut spawn = |rng: &mut Rng| {
        next_id += 1 + rng.below(50) as u32;
        let (x, y) = (rng.next() as u16, rng.next() as u16);
        p(next_id, x, y, rng.next() as u8, rng.chance(800), rng.next() as u8 & 127)
    };
    let mut all: Vec<Entry> = (0..players).map(|_| spawn(&mut rng)).collect();
    let mut held: BTreeMap<(u32, u32), Chain> = BTreeMap::new();
    let mut away: BTreeSet<(u32, u32)> = BTreeSet::new();
    let start = if world == 1 { u64::from(u32::MAX) - 20 } else { 1 };
    let mut frames = Vec::new();
    for tick in start..start + ticks {
        if tick > start {
            step(&mut all, &m, &mut rng);
            if rng.chance(150) {
                all.push(spawn(&mut rng));
            }
            if rng.chance(120) && !all.is_empty() {
                let i = rng.below(all.len() as u64) as usize;
                all.remove(i);
            }
        }
        // Each (shard, cell)'s players now, sorted by id.
        let mut now: BTreeMap<(u32, u32), Vec<Entry>> = BTreeMap::new();
        for e in &all {
            now.entry((shards[(e.id.0 % 2) as usize], cell_of(e))).or_default().push(*e);
        }
        now.values_mut().for_each(|v| v.sort_by_key(|e| e.id));
        // Cells leave the view and come back now and then.
        if rng.chance(100) {
            if let Some(&key) = held.keys().nth(rng.below(held.len().max(1) as u64) as usize) {
                away.insert(key);
            }
        }
        if rng.chance(150) {
            if let Some(&key) = away.iter().next() {
                away.remove(&key);
            }
        }
        let keys: BTreeSet<(u32, u32)> = now.keys().chain(held.keys()).copied().collect();
        let mut sections: BTreeMap<u32, Cells> = BTreeMap::new();
        for key in keys {
            let entries = now.get(&key).cloned().unwrap_or_default();
            let items = if away.contains(&key) {
                if held.remove(&key).is_none() {
                    continue;
                }
                vec![forget()]
            } else {
                let period = [1u64, 1, 2, 4, 8][(key.1 % 5) as usize];
                if tick % period != 0 {
                    continue;
                }
                match held.get(&key) {
                    Some(chain) if (tick - chain.tick).is_power_of_two() && tick - chain.tick <= 64 => {
                        let span = (tick - chain.tick) as u32;
                        if rng.chance(40) {
                            vec![full(&chain.entries), delta(&chain.entries, &entries, span, &m)]
                        } else {
                            vec![delta(&chain.entries, &entries, span, &m)]
                        }
                    }
                    Some(_) => vec![full(&entries)],
                    None if entries.is_empty() => continue,
                    None if rng.chance(200) => vec![delta(&[], &entries, 1, &m)],
                    None => vec![full(&entries)],
                }
            };
            if !items.iter().any(|i| i[0] & 0x0f == 8) {
                held.insert(key, Chain { tick, entries });
            }
            sections.entry(key.0).or_default().push((key.1, items));
        }
        let mut sections: Vec<(u32, u64, Cells)> = sections.into_iter().map(|(s, c)| (s, tick, c)).collect();
        if sections.is_empty() {
            continue;
        }
        if rng.chance(300) {
            sections.reverse();
        }
        frames.push(frame(&sections));
    }
    Sequence { name, world, frames, delivery: Delivery::InOrder }
}

/// One tick of a walk: turns, stops and starts, new inputs, pushes, each
/// walker its heading's step.
fn step(all: &mut [Entry], m: &Motion, rng: &mut Rng) {
    for e in all.iter_mut() {
        if rng.chance(60) {
            e.heading = rng.next() as u8;
        }
        if rng.chance(30) {
            e.flags ^= 1;
        }
        if rng.chance(30) {
            e.flags = (e.flags & 1) | (rng.next() as u8 & 0xfe);
        }
        (e.x, e.y) = m.advance((e.x, e.y), e.heading, e.moving(), 1);
        if rng.chance(20) {
            e.x = e.x.saturating_add(rng.below(600) as u16).saturating_sub(300);
        }
    }
}

/// View frames that do not verify, each with the error Rust's
/// `ViewFrame::parse` gives (its Debug form).
pub fn bad_frames() -> Vec<(&'static str, Vec<u8>)> {
    let d1 = item(ItemKind::Delta { span: 1 }, &[]);
    let good = frame(&[(1, 2, vec![(5, vec![d1.clone()]), (9, vec![d1.clone(), d1.clone()])])]);
    let with = |at: usize, b: u8| {
        let mut f = good.clone();
        f[at] = b;
        f
    };
    let section = |rest: &[u8]| {
        let mut f = vec![1, 0, 0, 0, 2, 0, 0, 0];
        f.extend_from_slice(rest);
        f
    };
    vec![
        ("empty", Vec::new()),
        ("a section cut in its header", good[..6].to_vec()),
        // good: the header (8), the cell count (8), cell 5's reference (9:
        // an empty delta, no item), cell 9's (10: several), the item count
        // (11) and its two items (12, 13).
        ("cut between cells", good[..10].to_vec()),
        ("cut inside the second cell's items", good[..good.len() - 1].to_vec()),
        ("more cells than bytes", section(&[9 << 2, 8, 1])),
        ("a cell count of eleven bytes", section(&[0xff; 11])),
        ("an unknown item kind", with(12, 0x0b)),
        ("item kind 15", with(13, 0x0f)),
        ("a cell id not increasing", with(10, 0x01)),
        ("an empty delta's cell id not increasing", with(9, 0x02)),
        ("several items, but one", with(11, 1)),
        ("several items, but none", with(11, 0)),
        ("a cell past 32 bits", section(&[4, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x01])),
        ("a forget with a body", section(&[4, 8, 0x18, 0])),
        ("a long item cut short", section(&[4, 8, 0xf0, 0x02, 1, 2, 3])),
        ("a long item's length past the frame", section(&[4, 8, 0xf1, 0xff, 0xff, 0xff, 0x0f])),
        ("a second section cut short", [good.clone(), vec![3, 0, 0, 0]].concat()),
        // Implied cells (protocol 7): the head's form, the due byte, the
        // view, the count and the bits.
        ("section form 3", section(&[3])),
        ("implied cells of a view never named", section(&[2, 0, 1, 0x01])),
        ("a due exponent of 7", section(&[1, 7, 5, 0, 1, 0x01])),
        ("rung 10", section(&[1, 10 << 3, 5, 0, 1, 0x01])),
        ("the due byte's top bit", section(&[1, 0x80, 5, 0, 1, 0x01])),
        ("a previous cell of 0", section(&[1, 0, 5, 10, 1, 0x01])),
        ("a key past 32 bits", section(&[1, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 1, 0x01])),
        ("bits set past the count", section(&[1, 0, 5, 0, 3, 0b1000])),
        ("a count past the bytes", section(&[1, 0, 5, 0, 200, 1])),
        ("implied bits cut short", section(&[1, 0, 5, 0, 9, 0xff])),
        ("a key of 0", section(&[1, 0, 0, 0, 1, 0x01])),
        (
            "a previous cell's code past 64 bits of difference",
            section(&[1, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 1, 0x01]),
        ),
        (
            "a second section cut in its bits",
            [good.clone(), vec![3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 5, 0, 9, 0xff]].concat(),
        ),
    ]
}

/// A delta that does not apply.
pub struct BadDelta {
    /// What is wrong.
    pub name: &'static str,
    /// Index into [`WORLDS`].
    pub world: usize,
    /// What it applies to.
    pub base: Vec<Entry>,
    /// Its span, ticks.
    pub span: u32,
    /// Its bytes.
    pub body: Vec<u8>,
    /// The most players the result may have.
    pub max_players: usize,
}

/// Deltas that do not apply, each refused by `delta::apply`.
pub fn bad_deltas() -> Vec<BadDelta> {
    let base = vec![p(1, 0, 0, 0, false, 0), p(2, 0, 0, 0, false, 0)];
    let esc = 0b111_000_00;
    let bad = |name, base: &[Entry], span, body: &[u8], max_players| BadDelta {
        name,
        world: 0,
        base: base.to_vec(),
        span,
        body: body.to_vec(),
        max_players,
    };
    let case = |name, body: &[u8]| bad(name, &base, 1, body, 100);
    vec![
        case("a change record cut", &[0b000_001_00]),
        case("a leave past the base", &[0b000_000_01, 2]),
        case("leaves not increasing", &[0b000_000_10, 1, 0]),
        case("a change of nothing", &[0b000_001_00, 0]),
        case("a change of a player that left", &[0b000_001_01, 0, 1]),
        case("a residual off the grid", &[0b000_001_00, 4, 0xff, 0xff, 0xff, 0xff, 0x0f, 0]),
        case("a residual below the grid", &[0b000_001_00, 4, 1, 0]),
        case("an enter of a player there", &[0b001_000_00, 1, 0, 0, 0, 0, 0, 0]),
        case("a byte after the records", &[0, 0]),
        case(
            "an escaped count of eleven bytes",
            &[esc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        ),
        case("more leaves than the base", &[esc, 3, 0, 0]),
        case("more enters than bytes", &[esc, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0]),
        case("changes past the base", &[0b000_011_00, 4, 4, 4]),
        case("leaves and changes past the base", &[0b000_010_01, 0, 4, 4]),
        case("two changes of one player", &[0b000_010_00, 12, 0, 0, 0, 4, 0, 0]),
        case("a second change at the base's end", &[0b000_010_00, 12, 0, 0, 12, 0, 0]),
        case("enters out of order", &[0b010_000_00, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        case("a counts byte of 7 enters and more", &[0b111_001_00]),
        case("an enter's id past 32 bits", &[0b001_000_00, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 0, 0, 0]),
        bad("an enter past the player limit", &base, 1, &[0b001_000_00, 9, 0, 0, 0, 0, 0, 0], 2),
        bad("a span of 3 ticks", &base, 3, &[], 100),
        bad("a span of 128 ticks", &base, 128, &[], 100),
        bad("a span of 0", &base, 0, &[], 100),
        bad("a change onto the empty state", &[], 1, &[0b000_001_00, 1, 7], 100),
    ]
}

/// Full forms that do not decode: (what, body, max players).
pub fn bad_fulls() -> Vec<(&'static str, Vec<u8>, usize)> {
    // One player, id 5 (protocol 8: no count; the players run to the end).
    let one = [5u8, 0, 0, 0, 0, 0, 0];
    vec![
        ("an id of eleven bytes", vec![0xff; 11], 10),
        ("a player cut short", one[..6].to_vec(), 10),
        ("a player past the limit", one.to_vec(), 0),
        ("a byte after the players", [&one[..], &[1]].concat(), 10),
        ("ids not increasing", [&one[..], &[0, 0, 0, 0, 0, 0, 0]].concat(), 10),
        ("an id past 32 bits", vec![0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 0, 0, 0], 10),
    ]
}

/// What a client holds, as a view frame of full forms (one section a shard
/// and tick): a client that applies it to nothing holds what `held` holds.
/// `None` when `held` holds nothing (a frame has at least one section).
pub fn held_frame(held: &Held) -> Option<Vec<u8>> {
    let mut cells: Vec<_> = held.cells().collect();
    cells.sort_by_key(|((shard, cell), c)| (*shard, c.tick, *cell));
    let mut sections: Vec<(u32, u64, Cells)> = Vec::new();
    for ((shard, cell), c) in cells {
        match sections.last_mut() {
            Some((s, t, list)) if *s == *shard && *t == u64::from(c.tick) => list.push((*cell, vec![full(c.entries)])),
            _ => sections.push((*shard, u64::from(c.tick), vec![(*cell, vec![full(c.entries)])])),
        }
    }
    (!sections.is_empty()).then(|| frame(&sections))
}

/// A mutant of the valid view frame `frame`, sent to a client holding
/// `held`: bytes flipped, set, cut, inserted, deleted or repeated; or, read
/// as sections, an item's body mutated (its length kept right), its kind
/// changed, its body replaced by a delta from a state near what is held (so
/// that it applies, or fits nearly), an item dropped or repeated, a cell
/// moved, or cells swapped; or both.
pub fn mutate(frame: &[u8], held: &Held, rng: &mut Rng) -> Vec<u8> {
    match rng.below(10) {
        0..=2 => mutate_bytes(frame, rng),
        3..=8 => mutate_items(frame, held, rng),
        _ => {
            let m = mutate_items(frame, held, rng);
            mutate_bytes(&m, rng)
        }
    }
}

/// Bytes that matter to varints, tags and counts.
const INTERESTING: [u8; 10] = [0x00, 0x01, 0x07, 0x08, 0x0f, 0x7f, 0x80, 0xe0, 0xf0, 0xff];

/// One to four byte edits.
pub fn mutate_bytes(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..1 + rng.below(4) {
        if out.is_empty() {
            out.push(rng.next() as u8);
            continue;
        }
        let i = rng.below(out.len() as u64) as usize;
        match rng.below(9) {
            0 => out[i] ^= 1 << rng.below(8),
            1 => out[i] = rng.next() as u8,
            2 => out[i] = INTERESTING[rng.below(INTERESTING.len() as u64) as usize],
            3 => out.truncate(i),
            4 => out.insert(i, rng.next() as u8),
            5 => {
                out.remove(i);
            }
            6 => {
                let j = (i + 1 + rng.below(8) as usize).min(out.len());
                let piece = out[i..j].to_vec();
                let at = rng.below(out.len() as u64 + 1) as usize;
                out.splice(at..at, piece);
            }
            7 => {
                let n = 1 + rng.below(10) as usize;
                out.splice(i..i, std::iter::repeat_n(0xff, n));
            }
            _ => out[i] = out[i].wrapping_add(1 + rng.below(3) as u8),
        }
    }
    out
}

/// A section's implied block as read: its view, due exponent, count and bits.
type ImpliedBlock = (SectionView, u8, usize, Vec<u8>);

/// A frame's sections as read: (shard, tick, implied block, cells of (cell,
/// items of (kind, body))).
type Sections = Vec<(u32, u64, Option<ImpliedBlock>, Vec<(u32, Vec<(ItemKind, Vec<u8>)>)>)>;

fn sections_of(frame: &[u8]) -> Sections {
    let Ok(f) = mino_protocol::view::ViewFrame::parse(frame) else { return Vec::new() };
    f.sections()
        .map(|s| {
            let cells = s.cells().map(|c| (c.cell, c.items().map(|i| (i.kind, i.body.to_vec())).collect())).collect();
            let implied = s.implied.map(|i| (i.view, i.due, i.count, i.bits.to_vec()));
            (s.shard, u64::from(s.tick), implied, cells)
        })
        .collect()
}

/// Writes sections as `write_section` does, but for cells in any order (a
/// cell not after the one before it gets the gap that wraps 32 bits, which
/// no reader accepts).
fn write_sections(sections: &Sections) -> Vec<u8> {
    let mut out = Vec::new();
    for (shard, tick, implied, cells) in sections {
        match implied {
            Some((view, due, count, bits)) => {
                let block = Implied { view: *view, due: *due, count: *count, bits };
                write_section_header_implied(&mut out, *shard, *tick, cells.len(), &block, true);
            }
            None => {
                out.extend_from_slice(&shard.to_le_bytes());
                out.extend_from_slice(&(*tick as u32).to_le_bytes());
                put_varint(&mut out, (cells.len() as u64) << 2);
            }
        }
        let mut previous = 0u32;
        for (cell, items) in cells {
            let several = items.len() > 1;
            // An empty delta of up to 32 ticks alone is said by the reference (modes 2-7).
            let said = match &items[..] {
                [(ItemKind::Delta { span }, body)] if *span <= 32 && body.is_empty() => {
                    Some(2 + u64::from(span.trailing_zeros()))
                }
                _ => None,
            };
            let mode = said.unwrap_or(u64::from(several));
            put_varint(&mut out, u64::from(cell.wrapping_sub(previous)) << 3 | mode);
            previous = *cell;
            if several {
                put_varint(&mut out, items.len() as u64);
            }
            if said.is_some() {
                continue;
            }
            for (kind, body) in items {
                out.extend(match kind {
                    ItemKind::Forget if !body.is_empty() => raw_item(8, body),
                    _ => item(*kind, body),
                });
            }
        }
    }
    out
}

/// A state near `entries`: a player gone, one come, one moved, turned or stopped.
fn near(entries: &[Entry], rng: &mut Rng) -> Vec<Entry> {
    let mut out = entries.to_vec();
    for _ in 0..1 + rng.below(3) {
        let i = if out.is_empty() { 0 } else { rng.below(out.len() as u64) as usize };
        match rng.below(6) {
            0 if !out.is_empty() => {
                out.remove(i);
            }
            1 | 0 => {
                let id = match rng.below(3) {
                    0 => rng.next() as u32,
                    1 => out.get(i).map_or(1, |e| e.id.0.wrapping_add(1)),
                    _ => rng.below(200) as u32,
                };
                if !out.iter().any(|e| e.id.0 == id) {
                    out.push(p(id, rng.next() as u16, rng.next() as u16, rng.next() as u8, rng.chance(700), 0));
                    out.sort_by_key(|e| e.id);
                }
            }
            2 if !out.is_empty() => out[i].x = out[i].x.wrapping_add(rng.below(5000) as u16),
            3 if !out.is_empty() => out[i].heading = rng.next() as u8,
            4 if !out.is_empty() => out[i].flags ^= 1 | (rng.next() as u8 & 0xfe),
            _ if !out.is_empty() => out[i].y = if rng.chance(500) { 0 } else { 65_535 },
            _ => {}
        }
    }
    out
}

/// One edit of the frame's sections, cells or items, written back well
/// framed (unless the edit is of the framing itself).
pub fn mutate_items(frame: &[u8], held: &Held, rng: &mut Rng) -> Vec<u8> {
    let mut sections = sections_of(frame);
    if sections.is_empty() {
        return mutate_bytes(frame, rng);
    }
    let s = rng.below(sections.len() as u64) as usize;
    let (shard, _, implied, cells) = &mut sections[s];
    let shard = *shard;
    if let Some((_, _, _, bits)) = implied.as_mut().filter(|_| rng.chance(300)) {
        // An implied block's bit flipped: a cell implied or not, a clash
        // with a told cell, or a bit past the count.
        let at = rng.below(bits.len().max(1) as u64) as usize;
        if let Some(b) = bits.get_mut(at) {
            *b ^= 1 << rng.below(8);
        }
        return write_sections(&sections);
    }
    if cells.is_empty() {
        // A reset: give it a cell (or leave its bytes to the byte edits).
        if rng.chance(500) {
            cells.push((1 + rng.below(40) as u32, vec![(ItemKind::Forget, Vec::new())]));
            return write_sections(&sections);
        }
        return mutate_bytes(frame, rng);
    }
    let c = rng.below(cells.len() as u64) as usize;
    let op = rng.below(9);
    if op == 7 && cells.len() > 1 {
        let n = cells.len();
        cells.swap(c, (c + 1) % n);
        return write_sections(&sections);
    }
    let (cell, items) = &mut cells[c];
    let k = rng.below(items.len() as u64) as usize;
    let base: Vec<Entry> = held.cell(shard, *cell).map(|h| h.entries.to_vec()).unwrap_or_default();
    match op {
        0 | 1 => items[k].1 = mutate_bytes(&items[k].1, rng),
        2 => {
            items[k].0 = match rng.below(4) {
                0 => ItemKind::Full,
                1 => ItemKind::Forget,
                _ => ItemKind::Delta { span: 1 << rng.below(7) },
            }
        }
        3 | 4 => {
            // A delta from a state near the one held (or from it), to one
            // near it.
            let from = if rng.chance(500) { base.clone() } else { near(&base, rng) };
            let to = near(&from, rng);
            let span = 1 << rng.below(7);
            let mut body = Vec::new();
            encode_delta(&from, &to, span, &WORLDS[rng.below(3) as usize].motion(), &mut body);
            items[k] = (ItemKind::Delta { span }, body);
        }
        5 => {
            let again = items[k].clone();
            if items.len() > 1 && rng.chance(500) {
                items.remove(k);
            } else {
                items.insert(k, again);
            }
        }
        6 => *cell = cell.wrapping_add(1 + rng.below(2) as u32),
        _ => {
            let mut body = Vec::new();
            encode_full(&near(&base, rng), &mut body);
            items[k] = (ItemKind::Full, body);
        }
    }
    write_sections(&sections)
}
