//! `delta_trace`: measures candidate encodings of the cells' entries offline,
//! before the wire changes (issue 25, "measure before choosing"; the method of
//! Glenn Fiedler's "Snapshot Compression": record a real trace, then count
//! the bytes of each scheme over it).
//!
//! It runs the server's own simulation ([`mino_server::sim::World`], the
//! integer movement rule), grid and view stencil for some seconds of a game,
//! records every cell's entries every tick, and counts, for every socket's
//! view (own and near cells every tick, mid every 2nd, prefetch every 4th),
//! what each encoding would send: the entries' bytes, the cells' item
//! headers and the frames' headers, separately.
//!
//! Games: `walk` (the loadgen's walker profile: a new random direction every
//! 1-3 s, steered back in at the world's edge; `--density` players a cell
//! over a square world) and `crowd` (every player standing within 48 units
//! of one point, in one cell; `--shuffle` of them taking a step now and then).
//!
//! ```sh
//! cargo run --release -p mino-benches --bin delta_trace -- walk --players 1000
//! cargo run --release -p mino-benches --bin delta_trace -- crowd --players 2000
//! cargo run --release -p mino-benches --bin delta_trace -- walk --json /tmp/walk.json
//! ```

use clap::{Parser, Subcommand};
use mino_benches::raw::{self, DeltaTrace, TraceRow, CHOSEN_ENCODING, PROTOCOL_5_FRAMING as PROTOCOL_5};
use mino_protocol::client::Direction;
use mino_protocol::entry::Entry;
use mino_protocol::motion::Motion;
use mino_protocol::wire::Bounds;
use mino_protocol::PlayerId;
use mino_server::shard::grid::{CellId, Grid};
use mino_server::shard::interest::{self, Stencil, Tier};
use mino_server::sim::World;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};

#[derive(Parser)]
#[command(about = "Bytes of candidate delta encodings over a recorded trace of the walk game and a crowd")]
struct Cli {
    #[command(subcommand)]
    game: Game,
    /// Players.
    #[arg(long, global = true, default_value_t = 1000)]
    players: u32,
    /// Shards the players are spread over (a socket gets every shard's cells).
    #[arg(long, global = true, default_value_t = 2)]
    shards: u32,
    /// Ticks recorded (20 Hz), after 60 ticks of warm-up.
    #[arg(long, global = true, default_value_t = 400)]
    ticks: u64,
    /// Cell size, world units.
    #[arg(long, global = true, default_value_t = 100.0)]
    cell_size: f32,
    /// View radius, world units.
    #[arg(long, global = true, default_value_t = 400.0)]
    view_radius: f32,
    /// Random seed.
    #[arg(long, global = true, default_value_t = 1)]
    seed: u64,
    /// When a cell is due at a period: `spread` (the server's rule before
    /// protocol 6, a cell's column + 2 x row shifting its phase, so
    /// neighbours take turns) or `uniform` (every cell of a period due on the
    /// same ticks: the server's rule since protocol 6).
    #[arg(long, global = true, value_enum, default_value_t = Phase::Spread)]
    phase: Phase,
    /// Also write the figures as JSON to FILE (the scale runner's
    /// `deltas-trace-GAME.json`, which RESULTS.md renders).
    #[arg(long, global = true, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
}

#[derive(Subcommand, Clone, Copy)]
enum Game {
    /// Walkers: a new random direction every 1-3 s.
    Walk {
        /// Players a cell (the world is sized for it).
        #[arg(long, default_value_t = 4.0)]
        density: f32,
    },
    /// Everyone standing near one point.
    Crowd {
        /// Share of the crowd taking a step now and then (0 to 1).
        #[arg(long, default_value_t = 0.0)]
        shuffle: f64,
    },
}

impl Game {
    /// `walk` or `crowd`.
    fn label(self) -> &'static str {
        match self {
            Game::Walk { .. } => "walk",
            Game::Crowd { .. } => "crowd",
        }
    }
}

/// The rule of which ticks a cell is due on at a period.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before protocol 6 (and a full-form view's today): at the cell's
    /// phase, `column + 2 × row` ([`interest::spread_phase`]).
    Spread,
    /// Every cell on the multiples of the period.
    Uniform,
}

impl Phase {
    fn due(self, tick: u64, column: u32, row: u32, period: u32) -> bool {
        match self {
            Phase::Spread => (tick + interest::spread_phase(column, row)).is_multiple_of(u64::from(period.max(1))),
            Phase::Uniform => tick.is_multiple_of(u64::from(period.max(1))),
        }
    }
}

const TICK_HZ: u16 = 20;
/// The trace's last rows: a next step measured, not built.
const CROSSINGS: &str =
    "predicted crossings (a straight walk from one cell of the view to another: no leave, no enter)";
/// A measured alternative, not built: see [`Totals::movein_bytes`].
const MOVE_INS: &str =
    "move-ins (an enter from a neighbouring cell the view advances over the same span: its id and 1 byte)";
/// A measured alternative, not built: see [`Totals::handoff_bytes`].
const HANDOFF: &str = "handoff (a player that changed cells stays in its old cell's item, moved by the rule; a full entry where the view does not advance that cell with the new one)";
const SPEED: f32 = 120.0;
const WARMUP: u64 = 60;

/// One player's walking plan.
struct Walker {
    next_turn: u64,
    seq: u32,
}

/// A cell's entries of one shard at one tick, sorted by id.
type Cells = HashMap<(u32, CellId), Vec<Entry>>;

fn main() {
    let cli = Cli::parse();
    let mut rng = StdRng::seed_from_u64(cli.seed);
    let side = match cli.game {
        Game::Walk { density } => ((cli.players as f32 / density).sqrt() * cli.cell_size).max(cli.cell_size),
        Game::Crowd { .. } => 2000.0,
    };
    let bounds = Bounds::new(0.0, 0.0, side, side);
    let grid = Grid::new(&bounds, cli.cell_size).expect("a grid");
    let stencil = Stencil::new(cli.view_radius / cli.cell_size);
    let mut world = World::new(bounds, SPEED, TICK_HZ);
    let mut walkers = Vec::new();
    let centre = (1050.0f32, 1050.0f32);
    for i in 0..cli.players {
        let (x, y) = match cli.game {
            Game::Walk { .. } => (rng.random_range(0.0..side), rng.random_range(0.0..side)),
            Game::Crowd { .. } => {
                let (a, r) = (rng.random_range(0.0..std::f32::consts::TAU), 48.0 * rng.random::<f32>().sqrt());
                (centre.0 + r * a.cos(), centre.1 + r * a.sin())
            }
        };
        world.add(PlayerId(i + 1), "p".into(), x, y);
        walkers.push(Walker { next_turn: 0, seq: 0 });
    }
    let motion = world.motion().clone();
    let mut history: Vec<Cells> = Vec::new();
    let mut viewers: Vec<Vec<CellId>> = Vec::new();
    for tick in 0..WARMUP + cli.ticks {
        steer(&mut world, &mut walkers, cli.game, tick, &mut rng, side);
        world.step();
        if tick >= WARMUP {
            history.push(record(&world, &grid, cli.shards));
            viewers.push(world.players().iter().map(|p| cell_of(&world, &grid, p.x, p.y)).collect());
        }
    }
    let totals = measure(&history, &viewers, &grid, &stencil, &motion, cli.shards, cli.phase);
    let trace = totals.trace(cli.game.label(), cli.players, side, cli.shards, cli.ticks, cli.phase);
    println!("{}", trace.markdown(false));
    if let Some(path) = &cli.json {
        if let Err(e) = raw::write(path, &trace) {
            eprintln!("delta_trace: {e}");
            std::process::exit(1);
        }
    }
}

fn cell_of(world: &World, grid: &Grid, x: u16, y: u16) -> CellId {
    let (x, y) = mino_protocol::quantize::world_position(world.bounds(), x, y);
    grid.cell_of(x, y)
}

/// The loadgen's walker (and crowd) behaviour for one tick.
fn steer(world: &mut World, walkers: &mut [Walker], game: Game, tick: u64, rng: &mut StdRng, side: f32) {
    let ids: Vec<(PlayerId, (f32, f32))> = world.players().iter().map(|p| (p.id, world.position(p))).collect();
    for (id, (x, y)) in ids {
        let w = &mut walkers[(id.0 - 1) as usize];
        let turn = match game {
            Game::Walk { .. } => {
                let out = x <= 0.5 || y <= 0.5 || x >= side - 0.5 || y >= side - 0.5;
                tick >= w.next_turn || (out && tick.is_multiple_of(20))
            }
            Game::Crowd { shuffle } => rng.random_bool(shuffle / 40.0) || tick == w.next_turn,
        };
        if !turn {
            continue;
        }
        let dir = match game {
            Game::Walk { .. } => {
                w.next_turn = tick + rng.random_range(20..=60);
                let mut a = rng.random_range(0.0..std::f32::consts::TAU);
                // Steered back in, as loadgen's --density region does.
                let (cx, cy) = (side / 2.0 - x, side / 2.0 - y);
                if (x <= 0.5 || y <= 0.5 || x >= side - 0.5 || y >= side - 0.5) && (a.cos() * cx + a.sin() * cy) < 0.0 {
                    a += std::f32::consts::PI;
                }
                Direction::new(a.cos(), a.sin())
            }
            // A shuffling member takes one step and stops the next tick.
            Game::Crowd { .. } if w.next_turn == tick => Some(Direction::STILL),
            Game::Crowd { .. } => {
                w.next_turn = tick + 1;
                let a = rng.random_range(0.0..std::f32::consts::TAU);
                Direction::new(a.cos(), a.sin())
            }
        };
        w.seq += 1;
        if let Some(dir) = dir {
            world.set_direction(id, dir, w.seq);
        }
    }
}

/// Every cell's entries of every shard (players spread over the shards by id).
fn record(world: &World, grid: &Grid, shards: u32) -> Cells {
    let mut cells: Cells = HashMap::new();
    for p in world.players() {
        let shard = p.id.0 % shards.max(1);
        cells.entry((shard, cell_of(world, grid, p.x, p.y))).or_default().push(p.entry());
    }
    for entries in cells.values_mut() {
        entries.sort_unstable_by_key(|e| e.id);
    }
    cells
}

/// What an item of a cell is, against the holder's baseline.
#[derive(Default, Clone, Copy)]
struct Change {
    leaves: usize,
    /// Players that stayed with heading or flags changed.
    turns: usize,
    /// Players that stayed whose position is not the prediction.
    residuals: usize,
    enters: usize,
    stays: usize,
    /// Anyone walking (a cell with a walker changes every tick).
    walking: bool,
}

/// Bytes of the candidate encodings of one item, entries only.
#[derive(Default, Clone, Copy, Debug)]
struct Sizes {
    /// Today: every player, 10 bytes (full state, fixed width).
    full_fixed: usize,
    /// Every player: ids as gaps (varint), positions u16, heading, flags.
    full_compact: usize,
    /// Delta against the baseline: every changed player's full new entry
    /// (no prediction): leaves and enters as below.
    delta_changed: usize,
    /// Delta against the heading-step prediction, byte-aligned records: the
    /// chosen encoding, `mino_protocol::delta::encode_delta`.
    delta_predicted: usize,
    /// The same information bit-packed (indices in ceil(log2 n) bits, counts
    /// and residuals Elias-gamma).
    delta_bits: usize,
}

fn varint(v: u64) -> usize {
    mino_protocol::delta::varint_len(v)
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn gamma_bits(v: u64) -> usize {
    2 * (64 - (v + 1).leading_zeros() as usize) - 1
}

fn ids_bytes(entries: &[Entry]) -> usize {
    let mut last = 0u64;
    entries
        .iter()
        .map(|e| {
            let gap = u64::from(e.id.0) - last;
            last = u64::from(e.id.0);
            varint(gap)
        })
        .sum()
}

/// The item of `new` against `base` over `span` ticks, and its sizes; the
/// predicted delta's bytes go to `body` (leave gaps, change records, enters).
fn item(
    base: Option<&[Entry]>,
    new: &[Entry],
    span: u32,
    motion: &Motion,
    body: &mut Vec<u8>,
    entered: &mut Vec<PlayerId>,
) -> (Change, Sizes) {
    entered.clear();
    let full_fixed = 10 * new.len();
    let full_compact = varint(new.len() as u64) + ids_bytes(new) + 6 * new.len();
    let Some(base) = base else {
        let change = Change { enters: new.len(), walking: true, ..Change::default() };
        let s = Sizes {
            full_fixed,
            full_compact,
            delta_changed: full_compact,
            delta_predicted: full_compact,
            delta_bits: full_compact,
        };
        return (change, s);
    };
    let mut c =
        Change { walking: new.iter().any(Entry::moving) || base.iter().any(Entry::moving), ..Change::default() };
    let (mut changed, mut bits) = (0usize, 0usize);
    let index_bits = (usize::BITS - base.len().max(1).leading_zeros()) as usize;
    let (mut i, mut j, mut last_index_b) = (0, 0, 0usize);
    let mut entries_in = Vec::new();
    while i < base.len() || j < new.len() {
        match (base.get(i), new.get(j)) {
            (Some(b), Some(n)) if b.id == n.id => {
                c.stays += 1;
                let turned = b.heading != n.heading || b.flags != n.flags;
                let at = motion.advance((b.x, b.y), n.heading, n.moving(), span);
                let residual = (i64::from(n.x) - i64::from(at.0), i64::from(n.y) - i64::from(at.1));
                let moved = (b.x, b.y) != (n.x, n.y);
                if turned || moved {
                    changed += varint((i - last_index_b) as u64) + 6;
                    last_index_b = i;
                }
                if turned || residual != (0, 0) {
                    c.turns += usize::from(turned);
                    c.residuals += usize::from(residual != (0, 0));
                    let fields = usize::from(b.heading != n.heading) + usize::from(b.flags != n.flags);

                    bits += index_bits + 2 + 8 * fields;
                    if residual != (0, 0) {
                        bits += gamma_bits(zigzag(residual.0)) + gamma_bits(zigzag(residual.1));
                    }
                }
                i += 1;
                j += 1;
            }
            (Some(b), n) if n.is_none_or(|n| b.id < n.id) => {
                c.leaves += 1;
                changed += 1;
                bits += index_bits;
                i += 1;
            }
            (_, Some(n)) => {
                c.enters += 1;
                entries_in.push(*n);
                entered.push(n.id);
                j += 1;
            }
            _ => break,
        }
    }
    let enters = ids_bytes(&entries_in) + 6 * entries_in.len();
    // The chosen encoding, for real: mino_protocol::delta.
    body.clear();
    mino_protocol::delta::encode_delta(base, new, span, motion, body);
    let counts = if c.leaves < 4 && c.turns + c.residuals < 8 && c.enters < 8 {
        1
    } else {
        varint(c.leaves as u64) + varint((c.turns + c.residuals) as u64) + varint(c.enters as u64)
    };
    let any = c.leaves + c.turns + c.residuals + c.enters > 0;
    let counts = if any { counts } else { 0 };
    let bit_counts = if any {
        gamma_bits(c.leaves as u64) + gamma_bits((c.turns + c.residuals) as u64) + gamma_bits(c.enters as u64)
    } else {
        0
    };
    let s = Sizes {
        full_fixed,
        full_compact,
        delta_changed: if changed + enters > 0 { counts + changed + enters } else { 0 },
        delta_predicted: body.len(),
        delta_bits: (bit_counts + bits).div_ceil(8) + enters,
    };
    (c, s)
}

/// What the sockets were sent, summed over the trace.
struct Totals {
    socket_ticks: u64,
    players_in_view: u64,
    /// Items sent by the delta schemes (changed cells) and by full frames (every due cell).
    delta_items: u64,
    full_items: u64,
    /// Frames (one a shard with something to send) and messages (one a tick).
    delta_sections: u64,
    delta_messages: u64,
    full_frames: u64,
    /// Items the delta schemes sent as the full form (the cell was new to the view).
    keyframes: u64,
    sizes: Sizes,
    /// Bytes of the delta items' cell references and tags (lean framing).
    delta_item_headers: u64,
    /// Of those, the items of empty deltas (walkers going straight): the
    /// bytes of their cell references and tags.
    empty_item_headers: u64,
    /// Enters of players the view held in another of its cells at the
    /// delta's base step (moves between cells of the view).
    moves_in_view: u64,
    /// Entry bytes with predicted crossings: no leave for a player whose
    /// straight walk took it out of the cell, no enter for one the view
    /// held at the base step that walked straight in (the client moves
    /// both by the rule), a held mover that turned as its id and 1 byte
    /// plus its change.
    crossing_bytes: u64,
    /// Of the items, those predicted crossings leave empty: their headers.
    crossing_empty_headers: u64,
    /// Entry bytes with move-ins (a measured alternative, not built): an
    /// enter of a player that was in a neighbouring cell of its shard at
    /// the delta's base step, when the view advances that cell over the
    /// same span in the same section, sent as its id gap, 1 byte (the
    /// origin's direction and what follows) and its change if it turned,
    /// in place of its id gap and 6 bytes. A cell's delta then has two
    /// forms; a view takes the one with moves only when it advances the
    /// origin of every mover of the item with it, else the one without.
    movein_bytes: u64,
    /// Entry bytes with handoff (a measured alternative, not built): a
    /// player that left a cell for another of its shard stays in the
    /// cell's item (the client moves it by the rule into the cell its
    /// position is in, when the view advances that cell in the same section
    /// over the same span; else drops it); one that came from another cell
    /// is in no record of the cell it came to, and a view that does not
    /// advance its origin with that cell takes its full entry in a
    /// supplement keyed by the origin.
    handoff_bytes: u64,
    /// Of the items, those handoff leaves empty: their headers.
    handoff_empty_headers: u64,
    /// Supplements sent (one an item and origin).
    supplements: u64,
    /// Enters from a neighbouring cell of the same shard (movers).
    movers: u64,
    /// Of those, the ones sent as moves.
    moveins: u64,
    /// Header bytes saved by sending each run of empty deltas of one span
    /// in consecutive cells (ids one apart) as one reference, one tag and a
    /// count (3 bytes) instead of a reference and a tag each.
    run_saved_headers: u64,
    turns: u64,
    residuals: u64,
    enters: u64,
    leaves: u64,
    bytes_by_value: [u64; 256],
}

impl Default for Totals {
    fn default() -> Totals {
        Totals {
            socket_ticks: 0,
            players_in_view: 0,
            delta_items: 0,
            full_items: 0,
            delta_sections: 0,
            delta_messages: 0,
            full_frames: 0,
            keyframes: 0,
            sizes: Sizes::default(),
            delta_item_headers: 0,
            empty_item_headers: 0,
            moves_in_view: 0,
            crossing_bytes: 0,
            crossing_empty_headers: 0,
            run_saved_headers: 0,
            movein_bytes: 0,
            handoff_bytes: 0,
            handoff_empty_headers: 0,
            supplements: 0,
            movers: 0,
            moveins: 0,
            turns: 0,
            residuals: 0,
            enters: 0,
            leaves: 0,
            bytes_by_value: [0; 256],
        }
    }
}

fn measure(
    history: &[Cells],
    viewers: &[Vec<CellId>],
    grid: &Grid,
    stencil: &Stencil,
    motion: &Motion,
    shards: u32,
    phase: Phase,
) -> Totals {
    let mut t = Totals::default();
    let ladder = interest::LADDER[0];
    let mut body = Vec::new();
    let mut crossing = Vec::new();
    let mut entered = Vec::new();
    // Every player's entry a tick, by id (a player's shard is fixed).
    let by_id: Vec<HashMap<PlayerId, Entry>> =
        history.iter().map(|cells| cells.values().flatten().map(|e| (e.id, *e)).collect()).collect();
    // Whether `id` walked straight over the `span` ticks to `k`: its heading
    // and flags unchanged, its position the rule's.
    let straight = |id: PlayerId, k: usize, span: u32| -> bool {
        match (by_id[k - span as usize].get(&id), by_id[k].get(&id)) {
            (Some(b), Some(n)) => {
                b.heading == n.heading
                    && b.flags == n.flags
                    && motion.advance((b.x, b.y), b.heading, b.moving(), span) == (n.x, n.y)
            }
            _ => false,
        }
    };
    // Every player's cell a tick (ids are unique across shards).
    let cell_at: Vec<HashMap<PlayerId, CellId>> = history
        .iter()
        .map(|cells| cells.iter().flat_map(|((_, c), es)| es.iter().map(move |e| (e.id, *c))).collect())
        .collect();
    // A viewer cell's stencil: cell -> its tier.
    let mut tiers_of: HashMap<CellId, HashMap<CellId, Tier>> = HashMap::new();
    // The bytes a turned mover's change costs: heading, flags, residual.
    let change_bytes = |n: &Entry, k: usize, period: u32| -> usize {
        by_id[k - period as usize].get(&n.id).map_or(0, |h| {
            let at = motion.advance((h.x, h.y), n.heading, n.moving(), period);
            let r = (i64::from(n.x) - i64::from(at.0), i64::from(n.y) - i64::from(at.1));
            usize::from(h.heading != n.heading)
                + usize::from(h.flags != n.flags)
                + if r != (0, 0) { varint(zigzag(r.0)) + varint(zigzag(r.1)) } else { 0 }
        })
    };
    // Per tick: (a socket's viewer cell, span) -> the players in its view's
    // cells `span` ticks before.
    let mut seen: HashMap<(CellId, u32), HashSet<PlayerId>> = HashMap::new();
    for (k, cells) in history.iter().enumerate().skip(4) {
        seen.clear();
        let tick = k as u64;
        for (socket, &own) in viewers[k].iter().enumerate() {
            let previous_own = viewers[k - 1][socket];
            // Whether the view advances `origin` over `period` ticks this
            // tick: in its stencil at that period, due now, and held (in the
            // view a tick ago, or its own cell).
            let tiers = &*tiers_of.entry(own).or_insert_with(|| stencil.cells(grid, own).collect());
            let advanced = |origin: CellId, period: u32| -> bool {
                let Some((oc, or)) = grid.position(origin) else { return false };
                tiers.get(&origin).is_some_and(|&ot| {
                    ladder[ot as usize] == period
                        && phase.due(tick, oc, or, period)
                        && (ot == Tier::Own || stencil.cells(grid, previous_own).any(|(c, _)| c == origin))
                })
            };
            t.socket_ticks += 1;
            let mut sent = vec![false; shards as usize];
            let mut any_full = vec![false; shards as usize];
            // Each shard's items: (cell id, the span of an empty delta).
            let mut listed: Vec<Vec<(u32, Option<u32>)>> = vec![Vec::new(); shards as usize];
            for (cell, tier) in stencil.cells(grid, own) {
                let Some((column, row)) = grid.position(cell) else { continue };
                let period = ladder[tier as usize];
                for shard in 0..shards {
                    let new = cells.get(&(shard, cell));
                    t.players_in_view += new.map_or(0, Vec::len) as u64;
                    if !phase.due(tick, column, row, period) {
                        continue;
                    }
                    let new = new.map_or(&[][..], Vec::as_slice);
                    let was_seen = stencil.cells(grid, previous_own).any(|(c, _)| c == cell);
                    let base = if was_seen || tier == Tier::Own {
                        Some(history[k - period as usize].get(&(shard, cell)).map_or(&[][..], Vec::as_slice))
                    } else {
                        None
                    };
                    if !new.is_empty() {
                        t.full_items += 1;
                        any_full[shard as usize] = true;
                        t.sizes.full_fixed += 10 * new.len();
                        t.sizes.full_compact +=
                            item(None, new, period, motion, &mut Vec::new(), &mut entered).1.full_compact;
                    }
                    body.clear();
                    let (change, sizes) = item(base, new, period, motion, &mut body, &mut entered);
                    let static_cell = base.is_some()
                        && !change.walking
                        && change.leaves + change.turns + change.residuals + change.enters == 0;
                    if static_cell || (base.is_none() && new.is_empty()) {
                        continue;
                    }
                    t.delta_items += 1;
                    t.keyframes += u64::from(base.is_none());
                    sent[shard as usize] = true;
                    t.sizes.delta_changed += sizes.delta_changed;
                    t.sizes.delta_predicted += sizes.delta_predicted;
                    t.sizes.delta_bits += sizes.delta_bits;
                    // A cell reference (a varint gap, about a byte) and a tag
                    // (one byte, plus a varint length past 14 bytes of body).
                    let len = sizes.delta_predicted;
                    t.delta_item_headers += 2 + if len >= 15 { varint((len - 15) as u64) as u64 } else { 0 };
                    if base.is_some() && len == 0 {
                        t.empty_item_headers += 2;
                    }
                    listed[shard as usize].push((cell.0, (base.is_some() && len == 0).then_some(period)));
                    if let Some(base) = base {
                        let held = held_at(&mut seen, history, viewers, grid, stencil, k, socket, period, shards);
                        t.moves_in_view += entered.iter().filter(|id| held.contains(id)).count() as u64;
                        let has = |list: &[Entry], id: PlayerId| list.binary_search_by_key(&id, |e| e.id).is_ok();
                        // Straight since the client last heard of the player:
                        // over the span, and over the slowest tier's period
                        // (the cell it came from may be held that far back).
                        let slowest = *ladder.iter().max().unwrap_or(&1);
                        let walked = |id: PlayerId| {
                            straight(id, k, period) && (k < slowest as usize + 1 || straight(id, k, slowest))
                        };
                        let kept_base: Vec<Entry> =
                            base.iter().filter(|b| has(new, b.id) || !walked(b.id)).copied().collect();
                        // A held mover that turned: its id and 1 byte, plus its
                        // change against the state the view held.
                        let mut turned_movers = 0usize;
                        let mut turned_change = 0usize;
                        let kept_new: Vec<Entry> = new
                            .iter()
                            .filter(|n| {
                                if has(base, n.id) || !held.contains(&n.id) {
                                    return true;
                                }
                                if walked(n.id) {
                                    return false;
                                }
                                turned_movers += 1;
                                turned_change += change_bytes(n, k, period);
                                true
                            })
                            .copied()
                            .collect();
                        // Move-ins: this item's movers, and whether the view
                        // advances every mover's origin over the same span.
                        let mut saved = 0usize;
                        let mut all_advanced = true;
                        let mut movers = 0u64;
                        for n in new.iter().filter(|n| !has(base, n.id)) {
                            let Some(&origin) = cell_at[k - period as usize].get(&n.id) else { continue };
                            let Some((oc, or)) = grid.position(origin) else { continue };
                            if oc.abs_diff(column) > 1 || or.abs_diff(row) > 1 || origin == cell {
                                continue;
                            }
                            movers += 1;
                            all_advanced &= advanced(origin, period);
                            saved += 5usize.saturating_sub(change_bytes(n, k, period));
                        }
                        t.movers += movers;
                        if all_advanced && movers > 0 {
                            t.moveins += movers;
                            t.movein_bytes += (sizes.delta_predicted - saved) as u64;
                        } else {
                            t.movein_bytes += sizes.delta_predicted as u64;
                        }
                        // Handoff: a player that left the cell for another of
                        // its shard stays in this item (no leave; a change if
                        // it turned); one that came from another cell is not
                        // in it: the view that advances its origin over the
                        // same span has it by the rule, any other takes its
                        // full entry in a supplement (keyed by origin: a tag
                        // and a count, 2 bytes, and id gap and 6 bytes each).
                        let on_shard = |id: PlayerId| by_id[k].contains_key(&id);
                        let mut extra = 0usize;
                        let stay_base: Vec<Entry> = base
                            .iter()
                            .filter(|b| {
                                if has(new, b.id) || !on_shard(b.id) {
                                    return true;
                                }
                                if let Some(n) = by_id[k].get(&b.id) {
                                    let c = change_bytes(n, k, period);
                                    extra += if c > 0 { 1 + c } else { 0 };
                                }
                                false
                            })
                            .copied()
                            .collect();
                        let mut supplements: HashMap<CellId, (usize, PlayerId)> = HashMap::new();
                        let stay_new: Vec<Entry> = new
                            .iter()
                            .filter(|n| {
                                if has(base, n.id) {
                                    return true;
                                }
                                let Some(&origin) = cell_at[k - period as usize].get(&n.id) else { return true };
                                if !advanced(origin, period) {
                                    let s = supplements.entry(origin).or_insert((2, PlayerId(0)));
                                    s.0 += varint(u64::from(n.id.0 - s.1 .0)) + 6;
                                    s.1 = n.id;
                                }
                                false
                            })
                            .copied()
                            .collect();
                        crossing.clear();
                        mino_protocol::delta::encode_delta(&stay_base, &stay_new, period, motion, &mut crossing);
                        let supplemented: usize = supplements.values().map(|s| s.0).sum();
                        t.handoff_bytes += (crossing.len() + extra + supplemented) as u64;
                        if crossing.is_empty() && extra == 0 {
                            t.handoff_empty_headers += 2;
                        }
                        t.supplements += supplements.len() as u64;
                        crossing.clear();
                        mino_protocol::delta::encode_delta(&kept_base, &kept_new, period, motion, &mut crossing);
                        t.crossing_bytes += (crossing.len().saturating_sub(5 * turned_movers) + turned_change) as u64;
                        if crossing.is_empty() {
                            t.crossing_empty_headers += 2;
                        }
                    } else {
                        // A cell new to the view: its full form, as today.
                        t.crossing_bytes += sizes.delta_predicted as u64;
                        t.movein_bytes += sizes.delta_predicted as u64;
                        t.handoff_bytes += sizes.delta_predicted as u64;
                    }
                    t.turns += change.turns as u64;
                    t.residuals += change.residuals as u64;
                    t.enters += change.enters as u64;
                    t.leaves += change.leaves as u64;
                    for &b in &body {
                        t.bytes_by_value[usize::from(b)] += 1;
                    }
                }
            }
            for items in &mut listed {
                t.run_saved_headers += run_savings(items);
            }
            let sections = sent.iter().filter(|s| **s).count() as u64;
            t.delta_sections += sections;
            t.delta_messages += u64::from(sections > 0);
            t.full_frames += any_full.iter().filter(|s| **s).count() as u64;
        }
    }
    t
}

/// Header bytes saved in one section's `items` ((cell id, the span of an
/// empty delta), sorted here) by runs: `n` empty deltas of one span in
/// cells one id apart cost 3 bytes (a reference, a tag, a count) instead of
/// `2 n`.
fn run_savings(items: &mut [(u32, Option<u32>)]) -> u64 {
    items.sort_unstable();
    let (mut saved, mut run) = (0u64, 1u64);
    for i in 1..=items.len() {
        let joins = i < items.len() && {
            let ((a, sa), (b, sb)) = (items[i - 1], items[i]);
            sa.is_some() && sa == sb && b == a + 1
        };
        if joins {
            run += 1;
        } else {
            if run >= 2 {
                saved += 2 * run - 3;
            }
            run = 1;
        }
    }
    saved
}

/// The players socket `socket` held in its view's cells at tick `k - span`
/// (its view then), made once a tick for each viewer cell and span.
#[allow(clippy::too_many_arguments)]
fn held_at<'a>(
    seen: &'a mut HashMap<(CellId, u32), HashSet<PlayerId>>,
    history: &[Cells],
    viewers: &[Vec<CellId>],
    grid: &Grid,
    stencil: &Stencil,
    k: usize,
    socket: usize,
    span: u32,
    shards: u32,
) -> &'a HashSet<PlayerId> {
    let then = k - span as usize;
    let own = viewers[then][socket];
    seen.entry((own, span)).or_insert_with(|| {
        let mut ids = HashSet::new();
        for (cell, _) in stencil.cells(grid, own) {
            for shard in 0..shards {
                ids.extend(history[then].get(&(shard, cell)).into_iter().flatten().map(|e| e.id));
            }
        }
        ids
    })
}

impl Totals {
    /// The trace's figures, as `--json` writes them and the table prints them.
    fn trace(&self, game: &str, players: u32, side: f32, shards: u32, ticks: u64, phase: Phase) -> DeltaTrace {
        let st = self.socket_ticks.max(1) as f64;
        let in_view = self.players_in_view as f64 / st;
        let per = |bytes: usize| bytes as f64 / st / in_view.max(1e-9);
        // Today: a 52-byte FlatBuffers header a shard frame, 6 bytes a run,
        // 4 of websocket header a frame.
        let today_headers = (self.full_frames * (52 + 4) + self.full_items * 6) as f64 / st;
        // Lean: one message a tick (a FlatBuffers envelope of 36 bytes and
        // 2 of websocket header), 6 bytes a shard section.
        let lean_headers = (self.delta_messages * 38 + self.delta_sections * 6) as f64 / st;
        let items = self.delta_item_headers as f64 / st;
        let full = self.sizes.full_fixed as f64 / st;
        let row = |name: &str, entries: usize, runs: f64, frames: f64| {
            let e = entries as f64 / st;
            TraceRow {
                encoding: name.to_owned(),
                entry_bytes_per_player_tick: per(entries),
                entry_bytes_per_socket_tick: e,
                item_bytes_per_socket_tick: runs,
                frame_bytes_per_socket_tick: frames,
                bytes_per_socket_s: (e + runs + frames) * f64::from(TICK_HZ),
            }
        };
        let entropy = self.entropy_bound();
        // Next steps measured (not built): an empty delta's item left out
        // (the client advancing a cell not sent by the rule), and a move
        // between two cells of the view sent as one (an enter's 6 bytes of
        // position, heading and flags replaced by 1: at best, since a player
        // that turned since the step the view holds needs its residual).
        let empty = self.empty_item_headers as f64 / st;
        let moves = self.sizes.delta_predicted - 5 * self.moves_in_view as usize;
        let rows = vec![
            row(
                "full, fixed 10 B (today: 6 B runs, 52 B frames)",
                self.sizes.full_fixed,
                (self.full_items * 6) as f64 / st,
                today_headers - (self.full_items * 6) as f64 / st,
            ),
            row(
                "full, compact (id gaps, lean framing)",
                self.sizes.full_compact,
                (self.full_items * 2) as f64 / st,
                lean_headers,
            ),
            row("delta vs last frame, changed entries", self.sizes.delta_changed, items, lean_headers),
            row(CHOSEN_ENCODING, self.sizes.delta_predicted, items, lean_headers),
            // Protocol 5: an empty delta (over up to 32 ticks: every tier's
            // period but the budget ladder's floor) is its cell's reference
            // alone, a byte instead of the reference and the tag.
            row(
                &format!("{CHOSEN_ENCODING}, {PROTOCOL_5}"),
                self.sizes.delta_predicted,
                items - empty / 2.0,
                lean_headers,
            ),
            row("delta vs prediction, bit-packed", self.sizes.delta_bits, items, lean_headers),
            row(
                "delta vs prediction, order-0 entropy bound (ideal small coder)",
                entropy as usize,
                items,
                lean_headers,
            ),
            row(
                &format!("{CHOSEN_ENCODING}, no item for an empty delta"),
                self.sizes.delta_predicted,
                items - empty,
                lean_headers,
            ),
            row(
                &format!(
                    "{CHOSEN_ENCODING}, an enter of a player held in another cell of the view as its id and 1 byte"
                ),
                moves,
                items,
                lean_headers,
            ),
            row(&format!("{CHOSEN_ENCODING}, both"), moves, items - empty, lean_headers),
            row(
                &format!("{CHOSEN_ENCODING}, runs of empty deltas (consecutive cells: one reference, tag and count)"),
                self.sizes.delta_predicted,
                items - self.run_saved_headers as f64 / st,
                lean_headers,
            ),
            row(&format!("{CHOSEN_ENCODING}, {CROSSINGS}"), self.crossing_bytes as usize, items, lean_headers),
            row(
                &format!("{CHOSEN_ENCODING}, {CROSSINGS}, {PROTOCOL_5}"),
                self.crossing_bytes as usize,
                items - self.crossing_empty_headers as f64 / st / 2.0,
                lean_headers,
            ),
            row(
                &format!("{CHOSEN_ENCODING}, {CROSSINGS}, no item for an empty delta"),
                self.crossing_bytes as usize,
                items - self.crossing_empty_headers as f64 / st,
                lean_headers,
            ),
            row(
                &format!("{CHOSEN_ENCODING}, {MOVE_INS}, {PROTOCOL_5}"),
                self.movein_bytes as usize,
                items - empty / 2.0,
                lean_headers,
            ),
            row(
                &format!("{CHOSEN_ENCODING}, {HANDOFF}, {PROTOCOL_5}"),
                self.handoff_bytes as usize,
                items - self.handoff_empty_headers as f64 / st / 2.0,
                lean_headers,
            ),
            row(
                &format!("{CHOSEN_ENCODING}, {HANDOFF}, no item for an empty delta"),
                self.handoff_bytes as usize,
                items - self.handoff_empty_headers as f64 / st,
                lean_headers,
            ),
        ];
        let d = self.delta_items.max(1) as f64;
        DeltaTrace {
            game: game.to_owned(),
            players,
            shards,
            side: f64::from(side),
            ticks,
            players_in_view: in_view,
            rows,
            full_cells_per_socket_tick: self.full_items as f64 / st,
            delta_items_per_socket_tick: self.delta_items as f64 / st,
            full_form_pct: 100.0 * self.keyframes as f64 / d,
            turns: self.turns as f64 / st,
            residuals: self.residuals as f64 / st,
            enters: self.enters as f64 / st,
            leaves: self.leaves as f64 / st,
            full_entry_bytes_per_s: full * f64::from(TICK_HZ),
            phase: match phase {
                Phase::Spread => "spread",
                Phase::Uniform => "uniform",
            }
            .to_owned(),
            movers: self.movers as f64 / st,
            moveins: self.moveins as f64 / st,
        }
    }

    /// The predicted deltas' bytes at the order-0 entropy of their byte
    /// values over the whole trace: what a static entropy coder (Huffman or
    /// rANS with a table shipped in the client) would reach at best.
    fn entropy_bound(&self) -> f64 {
        let n: u64 = self.bytes_by_value.iter().sum();
        if n == 0 {
            return 0.0;
        }
        let h: f64 = self
            .bytes_by_value
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| {
                let p = c as f64 / n as f64;
                -p * p.log2()
            })
            .sum();
        let counts = self.sizes.delta_predicted as f64 - n as f64;
        counts + n as f64 * h / 8.0
    }
}

#[cfg(test)]
mod tests {
    use super::run_savings;

    #[test]
    fn runs_join_only_empty_deltas_of_one_span_in_cells_one_apart() {
        // Cells 1-3 empty over 1 tick (a run of 3: 6 bytes become 3); 5 alone;
        // 6 not empty; 7 and 8 empty over different spans; 10 and 11 (given
        // out of order) a run of 2 (4 bytes become 3).
        let mut items = [
            (11, Some(4)),
            (1, Some(1)),
            (2, Some(1)),
            (3, Some(1)),
            (5, Some(1)),
            (6, None),
            (7, Some(2)),
            (8, Some(1)),
            (10, Some(4)),
        ];
        assert_eq!(run_savings(&mut items), 3 + 1);
        assert_eq!(run_savings(&mut [(4, None), (5, None)]), 0, "non-empty items never join");
        assert_eq!(run_savings(&mut []), 0);
    }
}
