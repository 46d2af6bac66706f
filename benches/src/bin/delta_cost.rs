//! `delta_cost`: the tick thread's work of section 15's area-of-interest run
//! without sockets, for a profiler: two clustered shards
//! ([`mino_server::shard::Shard`], I/O-free) of walkers (the loadgen's walker
//! profile: a new random direction every 1-3 s, steered back in at the
//! world's edge), every player a socket taking deltas or (`--frames full`)
//! full forms, `--cell-size 100 --view-radius 400` over a world of 4 players
//! a cell, each shard's region bundles encoded, verified and relayed to the
//! other one at the next tick (as Redis would). It runs `--warmup` ticks,
//! then `--ticks` more inside `measured` (the function to give callgrind's
//! `--toggle-collect`), and prints the wall time a tick, the view-frame
//! bytes a socket a tick, the views the shards assembled a tick (a view
//! serves the sockets of one form that share a key, their cell and the cell
//! still seen after they left one, if any; a socket catching up has a view
//! of its own: in this walk about one view a socket), and the wall time
//! by the tick's number modulo 4 (with deltas a view's outer tiers are due
//! on the same ticks for every view: every 2nd tick, and every 4th, carry
//! more of the work), then each shard's own tick by its number mod 4. Shard 2
//! ticks after shard 1, so it hears shard 1's step of the same tick and
//! shard 1 hears shard 2's of the tick before; `--step-offset N` starts
//! shard 2's steps N ahead, as shards started at different times are (the
//! relay's lag, `server/src/shard/lag.rs`, is measured so).
//!
//! With `--clients N` the first N sockets' frames are also read as the
//! loadgen's bot reads them, inside `clients_measured` (from the first
//! tick, warm-up included): decoded, applied to what the client holds
//! ([`ViewReader`], the bot's own), and each updated cell handed to the
//! bot's [`CellMeter`]. It prints the client frames read and digests of
//! what the clients hold, of the walk's cells, and of what the meters
//! recorded (two builds that read the same frames alike print the same).
//!
//! `--frames datagram-deltas` takes the sockets as WebTransport sessions
//! whose clients check each delta's base (nothing lost), and `--breakdown`
//! prints what the measured ticks' view-frame bytes carry, by kind
//! ([`FrameBytes`]).
//!
//! `--scenario crowd` runs section 15's crowd instead: a world of 2,000
//! units of cells of 100 (no `--view-radius`, as `mino-loadgen crowd` is
//! run there), every player steered by the loadgen's own [`Steering`] to
//! the middle of the cell past the world's centre, `--shuffle` of them
//! stepping out now and then once there (1 to 3 s apart, as the loadgen's
//! bots do); the measured ticks start after `--warmup` (400: the farthest
//! spawn is about 250 ticks away). It also prints how many gathered and,
//! across every socket, the gaps between its frames that carry a section
//! of its own shard and of the other one (the bots' own and relayed gaps,
//! as the shards decide them: no socket, no machine's delays), and with
//! `--json FILE` writes them (`mino_benches::raw::CrowdCore`).
//!
//! ```sh
//! cargo build --release -p mino-benches --bin delta_cost
//! target/release/delta_cost --frames deltas
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*delta_cost*measured*' \
//!     target/release/delta_cost --frames deltas --ticks 40
//! # A client's instructions a frame: clients_measured's inclusive count
//! # over the client frames printed.
//! valgrind --tool=callgrind --callgrind-out-file=X target/release/delta_cost \
//!     --frames deltas --ticks 40 --warmup 100 --clients 50
//! callgrind_annotate --inclusive=yes X | grep clients_measured
//! target/release/delta_cost --scenario crowd --players 2000 --shuffle 0.05 --frames deltas
//! target/release/delta_cost --players 200 --frames datagram-deltas --breakdown
//! ```

use bytes::Bytes;
use clap::{Parser, ValueEnum};
use mino_benches::frame_bytes::FrameBytes;
use mino_benches::raw::{CoreGaps, CrowdCore};
use mino_loadgen::cells::CellMeter;
use mino_loadgen::event::CellFrame;
use mino_loadgen::reader::ViewReader;
use mino_loadgen::scenario::plan::GATHER_STEPS;
use mino_loadgen::stats::Tally;
use mino_loadgen::steer::{Gathering, Movement, Steering, SHUFFLE_EVERY};
use mino_loadgen::world::World;
use mino_loadgen::{Metric, ServerEvent, Stats};
use mino_protocol::client::{Capabilities, Direction};
use mino_protocol::server::{decode, ServerMsg};
use mino_protocol::view::{encode_bundle, FrameStamp};
use mino_protocol::{PlayerId, ShardId, Tick};
use mino_server::clock::Instant;
use mino_server::shard::{Carrier, ClusterEvent, LinkId, Relayed, Shard, TickAt, TickOutput};
use mino_server::{clock, Config};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    about = "The tick thread's work of two shards of walkers (or a crowd) with area of interest, without sockets"
)]
struct Cli {
    /// What the players do.
    #[arg(long, value_enum, default_value_t = Scenario::Walk)]
    scenario: Scenario,
    /// Players, over the two shards.
    #[arg(long, default_value_t = 1000)]
    players: u32,
    /// What the sockets take.
    #[arg(long, value_enum, default_value_t = Frames::Deltas)]
    frames: Frames,
    /// Ticks before the measured ones (default: 200 walking; a crowd's
    /// gathering, 400: the farthest spawn is about 250 ticks from the point).
    #[arg(long)]
    warmup: Option<u64>,
    /// Ticks measured.
    #[arg(long, default_value_t = 400)]
    ticks: u64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Sockets (the first to join) whose frames a client also reads as the
    /// loadgen's bot does.
    #[arg(long, default_value_t = 0)]
    clients: usize,
    /// Steps the second shard runs alone before the players join, so its
    /// steps lead the first's by this many (shards started at different
    /// times: their tiers come due on different ticks).
    #[arg(long, default_value_t = 0)]
    step_offset: u64,
    /// The crowd's share (0 to 1) that, once gathered, takes a short step
    /// now and then and walks back, as `mino-loadgen crowd --shuffle`.
    #[arg(long, default_value_t = 0.05)]
    shuffle: f32,
    /// Also prints what the measured ticks' view-frame bytes carry, by kind,
    /// a socket a tick (`mino_benches::frame_bytes`; each frame decoded
    /// inside the measured ticks, so their time is not the tick's then).
    #[arg(long)]
    breakdown: bool,
    /// Also writes the crowd's figures to this file as JSON
    /// (`benches/src/raw.rs`, `CrowdCore`).
    #[arg(long)]
    json: Option<PathBuf>,
}

/// What the players do.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Scenario {
    /// Section 15's walk: 4 walkers a cell, `--view-radius 400`.
    Walk,
    /// Section 15's crowd: everyone walks to one cell's middle and stands
    /// there (`--shuffle` of it stepping now and then), world 2,000 units,
    /// no `--view-radius` (the shard's default), as `mino-loadgen crowd`.
    Crowd,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Frames {
    Deltas,
    Full,
    /// Deltas over datagrams (a WebTransport session whose client checks
    /// each delta's base: every item standing alone, with the repeats that
    /// let a client that lost one find out); nothing is lost here.
    DatagramDeltas,
}

/// Cell side, world units.
const CELL: f32 = 100.0;

/// The crowd's world, units a side (as section 15's crowd).
const CROWD_SIDE: f32 = 2000.0;

/// How a player moves.
enum Mover {
    /// The loadgen's walker: ticks until its next turn.
    Walker(u32),
    /// A crowd bot: its steering to the point, and the tick of its next
    /// shuffle (None: it does not shuffle).
    Gatherer(Steering, Option<u64>),
}

/// One shard and its players: (id, link, how it moves).
struct One {
    shard: Shard,
    players: Vec<(PlayerId, LinkId, Mover)>,
    /// Its ticks' wall time by the tick's number mod 4: (ms summed, ticks).
    ms: [(f64, u32); 4],
}

/// Both shards, the tick number and the bundles in flight.
struct Place {
    shards: [One; 2],
    t: u64,
    start: Instant,
    rng: StdRng,
    in_flight: [Vec<ClusterEvent>; 2],
    side: f32,
    /// View-frame bytes delivered to sockets, and frames, since the start.
    bytes: u64,
    frames: u64,
    /// Views whose frames the shards' ticks assembled (`views_assembled`).
    views: u64,
    /// What the measured ticks' frames carry (`--breakdown`).
    breakdown: Option<FrameBytes>,
    /// A hash of every socket's frames, in order (two builds that send the
    /// same bytes print the same digest).
    digest: DefaultHasher,
    /// The clients (`--clients`), and per shard the links they read (link,
    /// client).
    clients: Clients,
    watched: [Vec<(LinkId, usize)>; 2],
    /// The tick's frames for the clients: (client, websocket frame).
    inbox: Vec<(usize, Bytes)>,
    /// A crowd's point, and a tick's walk (world units).
    point: Option<(f32, f32)>,
    step: f32,
    /// Each socket's gaps between view frames, ticks, while `gaps.on`.
    gaps: Gaps,
}

/// Gaps between each socket's view frames of each shard (a crowd's
/// figure: the loadgen's own and relayed gaps, in ticks).
#[derive(Default)]
struct Gaps {
    /// The measured ticks (after the warm-up): a crowd's gaps are recorded
    /// then, and `--breakdown` tallies their frames.
    on: bool,
    /// The last tick a socket had a section of a shard, by (the socket's
    /// shard, 0 or 1; its link; the section's shard).
    last: std::collections::HashMap<(usize, LinkId, ShardId), u64>,
    /// The gaps between sections of the socket's own shard, and of the
    /// other one, ticks.
    own: Vec<u64>,
    relayed: Vec<u64>,
    /// The shards whose sections each view's frames of the tick carry, by
    /// view (the sockets of a view share its frames: read once).
    views: std::collections::HashMap<usize, Vec<ShardId>>,
}

impl Gaps {
    /// The frames `frames` of view `view` of tick `t` for `link` of shard
    /// `i` (id `own`); [`Gaps::views`] is cleared at each shard's tick.
    fn frames(&mut self, i: usize, own: ShardId, link: LinkId, (view, frames): (usize, &[Bytes]), t: u64) {
        let shards = self.views.entry(view).or_insert_with(|| {
            let mut shards = Vec::new();
            for f in frames {
                let Ok(ServerMsg::View(v)) = decode(mino_server::ws_payload(f)) else { panic!("a view frame") };
                shards.extend(v.sections().map(|s| ShardId(s.shard)));
            }
            shards.sort_unstable();
            shards.dedup();
            shards
        });
        for &shard in shards.iter() {
            if let Some(last) = self.last.insert((i, link, shard), t).filter(|_| self.on) {
                if shard == own { &mut self.own } else { &mut self.relayed }.push(t - last);
            }
        }
    }
}

/// One socket read as the loadgen's bot reads it.
struct Client {
    /// What it holds and the walk over a frame's cells.
    reader: ViewReader,
    /// What it measures of its cells.
    meter: CellMeter,
}

/// Every client, what they share, and what they did.
struct Clients {
    all: Vec<Client>,
    /// Where their meters record.
    stats: Stats,
    /// The clock their frames arrive on: tick `t` at `epoch + 50 t` ms.
    epoch: tokio::time::Instant,
    /// Frames read, since the start.
    frames: u64,
    /// A fold of every cell the walks handed on and every own position
    /// the meters found ([`fold`]).
    walk: u64,
}

/// Tick `n` on time, on a clock of its own: a run under a profiler, 50
/// times slower, must not look like a stall (which fences a clustered shard).
fn at(start: Instant, n: u64) -> TickAt {
    let now = start + Duration::from_millis(50 * n);
    TickAt { tick: Tick(n), lateness: Duration::ZERO, now, wall_ms: 50 * n, redis_up: true }
}

impl Place {
    fn new(cli: &Cli) -> Place {
        let side = match cli.scenario {
            Scenario::Walk => ((f64::from(cli.players) / 4.0).sqrt().ceil() as f32) * CELL,
            Scenario::Crowd => CROWD_SIDE,
        };
        let (caps, carrier) = match cli.frames {
            Frames::Deltas => (Capabilities::DELTAS, Carrier::Stream),
            Frames::Full => (Capabilities::NONE, Carrier::Stream),
            Frames::DatagramDeltas => (Capabilities::KNOWN, Carrier::Datagrams),
        };
        let mut rng = StdRng::seed_from_u64(cli.seed);
        let mut shards = [1u32, 2].map(|id| {
            // The shard's own flags, as section 15 passes them.
            let mut flags = vec![
                "mino-server".to_owned(),
                "--shard-id".into(),
                id.to_string(),
                "--redis-url".into(),
                "redis://127.0.0.1:1".into(),
                "--cell-size".into(),
                CELL.to_string(),
                "--world-size".into(),
                side.to_string(),
                "--max-players".into(),
                cli.players.to_string(),
            ];
            if cli.scenario == Scenario::Walk {
                flags.extend(["--view-radius".to_owned(), (4.0 * CELL).to_string()]);
            }
            let mut config = Config::from_cli(&mino_server::Cli::parse_from(flags)).expect("a configuration");
            config.busy_lateness = None;
            let mut shard = Shard::new(&config, StdRng::seed_from_u64(cli.seed + u64::from(id)), 0).expect("a shard");
            shard.cluster_event(ClusterEvent::Ids { start: id * 1_000_000, len: 1_000_000 });
            shard.cluster_event(ClusterEvent::Live(vec![ShardId(1), ShardId(2)]));
            One { shard, players: Vec::new(), ms: [(0.0, 0); 4] }
        });
        let start = clock::now();
        for _ in 0..cli.step_offset {
            shards[1].shard.tick(at(start, 0));
            shards[1].shard.effects().for_each(drop);
        }
        let clients =
            Clients { all: Vec::new(), stats: Stats::new(), epoch: tokio::time::Instant::now(), frames: 0, walk: 0 };
        let mut place = Place {
            shards,
            t: 0,
            start,
            rng: StdRng::seed_from_u64(cli.seed),
            in_flight: Default::default(),
            side,
            bytes: 0,
            frames: 0,
            breakdown: cli.breakdown.then(FrameBytes::default),
            views: 0,
            digest: DefaultHasher::new(),
            clients,
            watched: Default::default(),
            inbox: Vec::new(),
            // The middle of the cell just past the world's centre, as the
            // section puts the loadgen's crowd.
            point: (cli.scenario == Scenario::Crowd).then_some((side / 2.0 + CELL / 2.0, side / 2.0 + CELL / 2.0)),
            step: 0.0,
            gaps: Gaps::default(),
        };
        for i in 0..cli.players {
            let s = (i % 2) as usize;
            let one = &mut place.shards[s];
            let a = one.shard.join("bot", None, 0, caps, carrier).expect("admitted");
            let mover = match place.point {
                None => Mover::Walker(rng.random_range(0..60)),
                Some(point) => {
                    let Ok(ServerEvent::Welcome(w)) = ServerEvent::decode(&a.welcome) else { panic!("a welcome") };
                    let gathering = Gathering { point, shuffle: cli.shuffle };
                    place.step = World::of(&w).step();
                    let steering = Steering::new(Movement::Gather(gathering), place.step);
                    let shuffles = rng.random_bool(f64::from(cli.shuffle.clamp(0.0, 1.0)));
                    Mover::Gatherer(steering, shuffles.then(|| shuffle_after(&mut rng)))
                }
            };
            one.players.push((a.player, a.link, mover));
            if (i as usize) < cli.clients {
                place.watched[s].push((a.link, place.clients.all.len()));
                place.clients.all.push(Client::of(&a.welcome));
            }
        }
        place
    }

    /// One tick of both shards: steering, the ticks, the bundles relayed.
    fn tick(&mut self) {
        self.t += 1;
        let t = self.t;
        for (i, one) in self.shards.iter_mut().enumerate() {
            for event in self.in_flight[i].drain(..) {
                one.shard.cluster_event(event);
            }
            steer(one, &mut self.rng, self.side, t, self.clients.epoch);
            let started = std::time::Instant::now();
            let out = one.shard.tick(at(self.start, t));
            let ms = &mut one.ms[(t % 4) as usize];
            ms.0 += started.elapsed().as_secs_f64() * 1e3;
            ms.1 += 1;
            self.views += out.views_assembled as u64;
            self.gaps.views.clear();
            for (_, link, _) in &one.players {
                let client = self.watched[i].iter().find(|w| w.0 == *link).map(|w| w.1);
                let view = one.shard.view_of(*link);
                let frames = out.frame.views.get(view).map_or(&[][..], |v| &v.frames[..]);
                if self.point.is_some() {
                    self.gaps.frames(i, one.shard.id(), *link, (view, frames), t);
                }
                for f in frames {
                    self.bytes += f.len() as u64;
                    self.frames += 1;
                    if let Some(b) = self.breakdown.as_mut().filter(|_| self.gaps.on) {
                        b.add(mino_server::ws_payload(f)).expect("the shard's view frames verify");
                    }
                    link.0.hash(&mut self.digest);
                    f.hash(&mut self.digest);
                    if let Some(c) = client {
                        self.inbox.push((c, f.clone()));
                    }
                }
            }
            self.in_flight[1 - i] = bundles(&one.shard, &out, t);
            one.shard.effects().for_each(drop);
        }
        if !self.inbox.is_empty() {
            clients_measured(&mut self.clients, &self.inbox, t);
            self.inbox.clear();
        }
    }
}

impl Client {
    /// The bot a Welcome message (`welcome`, as the shard encoded it) made.
    fn of(welcome: &[u8]) -> Client {
        let Ok(ServerEvent::Welcome(w)) = ServerEvent::decode(welcome) else { panic!("a welcome") };
        let grid = World::of(&w).grid.expect("area of interest");
        Client { reader: ViewReader::new(&w), meter: CellMeter::new(grid, w.bounds, w.shard_id.0, w.player_id) }
    }
}

/// The clients' work of tick `t`: each frame of `inbox` (client, websocket
/// frame) read as the loadgen's bot reads it (the session's `on_view` with
/// a cell meter: decoded, applied, each updated cell measured).
#[inline(never)]
fn clients_measured(clients: &mut Clients, inbox: &[(usize, Bytes)], t: u64) {
    let now = clients.epoch + Duration::from_millis(50 * t);
    let stats = &clients.stats;
    for (c, frame) in inbox {
        let client = &mut clients.all[*c];
        let message = mino_server::ws_payload(frame);
        let Ok(ServerMsg::View(v)) = decode(message) else { panic!("a view frame") };
        client.reader.apply(&v, message.len(), 50 * t).expect("the frame applies");
        while let Some((u, players)) = client.reader.next_cell() {
            let cell = CellFrame::held(u.shard, u.cell, u.tick, u.time_ms, players);
            let walked = [u.shard.into(), u.cell.into(), u.tick.into(), u.time_ms, u.len as u64, u.bodies as u64];
            clients.walk = walked.iter().fold(clients.walk, |d, &v| fold(d, v));
            clients.walk = fold(clients.walk, players.len() as u64);
            if let Some(own) = client.meter.on_frame(&cell, u.len, u.bodies, now, stats, *c) {
                let seen = [own.position.0.to_bits(), own.position.1.to_bits(), own.time_ms, u32::from(own.new_tick)];
                clients.walk = seen.iter().fold(clients.walk, |a, &w| fold(a, w.into()));
            }
        }
        clients.frames += 1;
    }
}

/// `digest` with `value` folded in (FNV-1a's step on a whole word: cheap
/// beside the work it checks).
fn fold(digest: u64, value: u64) -> u64 {
    (digest ^ value).wrapping_mul(0x0000_0100_0000_01b3)
}

impl Clients {
    /// What the clients hold and measured, as a line: frames read, a
    /// digest of every held cell, the walk's fold, and the meters' tallies
    /// and gaps.
    fn summary(&mut self) -> String {
        for c in &mut self.all {
            c.meter.flush(&self.stats);
        }
        let mut held = DefaultHasher::new();
        for c in &self.all {
            for (key, cell) in c.reader.held().cells() {
                (key, cell.tick, cell.heard_ms, cell.entries).hash(&mut held);
            }
        }
        let w = self.stats.take_window();
        let (own, near) = (w.latencies.summary(Metric::OwnCellGap), w.latencies.summary(Metric::NeighbourGap));
        format!(
            "{} clients, {} frames read (whole run); held digest {:016x}, walk digest {:016x}; cell frames {}, bytes {}, entry bytes {}; own-cell gaps {} (p50 {} ms, max {} ms), neighbour gaps {} (p50 {} ms, max {} ms)",
            self.all.len(),
            self.frames,
            held.finish(),
            self.walk,
            w.counters.tally(Tally::CellFrames),
            w.counters.tally(Tally::CellBytes),
            w.counters.tally(Tally::CellEntryBytes),
            own.count,
            own.p50,
            own.max,
            near.count,
            near.p50,
            near.max,
        )
    }
}

/// The bundles of a tick, as the other shard's subscriber hands them on.
fn bundles(shard: &Shard, out: &TickOutput, t: u64) -> Vec<ClusterEvent> {
    let stamp = FrameStamp { shard: shard.id(), tick: Tick(t), server_time_ms: 50 * t };
    out.publish_cells
        .iter()
        .map(|(region, items)| {
            let encoded = encode_bundle(&stamp, out.step, region.0, items);
            let Ok(ServerMsg::CellBundle(b)) = decode(&encoded) else { panic!("a bundle") };
            let (stamp, step, items) = (b.stamp(), b.step(), Bytes::copy_from_slice(b.items()));
            ClusterEvent::Bundle(Relayed { stamp, step, items, cells: b.into_cells() })
        })
        .collect()
}

/// Ticks until a shuffling crowd bot's next step out: the loadgen's
/// [`SHUFFLE_EVERY`], 1 to 3 s.
fn shuffle_after(rng: &mut StdRng) -> u64 {
    let ms = rng.random_range(SHUFFLE_EVERY).as_millis() as u64;
    ms.div_ceil(50)
}

/// Each player's input of tick `t`: a walker's (the loadgen's walker: a new
/// random direction every 1-3 s (20-60 ticks), back towards the middle when
/// at the world's edge), or a crowd bot's (the loadgen's [`Steering`] on the
/// position the shard holds, on a clock of `epoch` + 50 ms a tick).
fn steer(one: &mut One, rng: &mut StdRng, side: f32, t: u64, epoch: tokio::time::Instant) {
    let world = one.shard.world();
    let mut turns = Vec::new();
    let now = epoch + Duration::from_millis(50 * t);
    for (id, _, mover) in &mut one.players {
        let Some(p) = world.player(*id) else { continue };
        let (x, y) = world.position(p);
        let wait = match mover {
            Mover::Walker(wait) => wait,
            Mover::Gatherer(steering, shuffle_at) => {
                let mut dir = steering.on_position((x, y), now, rng);
                if *shuffle_at == Some(t) {
                    *shuffle_at = Some(t + shuffle_after(rng));
                    dir = steering.shuffle((x, y), now, rng).or(dir);
                }
                if let Some(dir) = dir.and_then(|(dx, dy)| Direction::new(dx, dy)) {
                    turns.push((*id, dir));
                }
                continue;
            }
        };
        let edge = x < 10.0 || y < 10.0 || x > side - 10.0 || y > side - 10.0;
        if *wait == 0 || (edge && t.is_multiple_of(5)) {
            *wait = rng.random_range(20..=60);
            let (dx, dy) = if edge {
                (side / 2.0 - x + rng.random_range(-200.0..200.0), side / 2.0 - y + rng.random_range(-200.0..200.0))
            } else {
                let a = rng.random_range(0.0..std::f32::consts::TAU);
                (a.cos(), a.sin())
            };
            if let Some(dir) = Direction::new(dx, dy) {
                turns.push((*id, dir));
            }
        } else {
            *wait -= 1;
        }
    }
    for (id, dir) in turns {
        one.shard.input(id, dir, t as u32);
    }
}

/// The measured ticks (callgrind's `--toggle-collect` names this). Returns
/// the wall time of the ticks by their number modulo 4, (ms summed, ticks):
/// a view's outer tiers are due every 2nd and every 4th tick, on the same
/// ticks for every view, so those ticks carry more of the work.
#[inline(never)]
fn measured(place: &mut Place, ticks: u64) -> [(f64, u32); 4] {
    let mut by_phase = [(0.0, 0); 4];
    for _ in 0..ticks {
        let start = std::time::Instant::now();
        place.tick();
        let phase = &mut by_phase[(place.t % 4) as usize];
        phase.0 += start.elapsed().as_secs_f64() * 1e3;
        phase.1 += 1;
        black_box(&place.bytes);
    }
    by_phase
}

fn main() {
    let cli = Cli::parse();
    let mut place = Place::new(&cli);
    let warmup = cli.warmup.unwrap_or(match cli.scenario {
        Scenario::Walk => 200,
        Scenario::Crowd => 400,
    });
    for _ in 0..warmup {
        place.tick();
    }
    let gathered = place.gathered();
    place.gaps.on = true;
    let (bytes, frames, views) = (place.bytes, place.frames, place.views);
    place.shards.iter_mut().for_each(|one| one.ms = [(0.0, 0); 4]);
    let start = std::time::Instant::now();
    let by_phase = measured(&mut place, cli.ticks);
    let took = start.elapsed();
    let sockets = f64::from(cli.players);
    let ticks = cli.ticks as f64;
    println!(
        "{} players, {} ticks: {:.1} us a tick (both shards), {:.2} us a player a tick; {:.1} view-frame bytes a socket a tick, {:.3} frames a socket a tick, {:.1} views assembled a tick (both shards); digest {:016x}",
        cli.players,
        cli.ticks,
        took.as_secs_f64() * 1e6 / ticks,
        took.as_secs_f64() * 1e6 / ticks / sockets,
        (place.bytes - bytes) as f64 / ticks / sockets,
        (place.frames - frames) as f64 / ticks / sockets,
        (place.views - views) as f64 / ticks,
        place.digest.finish(),
    );
    let phases = by_phase.map(|(ms, n)| format!("{:.2}", ms / f64::from(n.max(1))));
    println!("ms a tick (both shards) by the tick's number mod 4, 0 to 3: {}", phases.join(" / "));
    for (i, one) in place.shards.iter().enumerate() {
        let phases = one.ms.map(|(ms, n)| format!("{:.2}", ms / f64::from(n.max(1))));
        println!(
            "  shard {}'s own tick (its step {} ahead): {}",
            i + 1,
            i as u64 * cli.step_offset,
            phases.join(" / ")
        );
    }
    if let Some(b) = &place.breakdown {
        println!("a socket a tick: {}", b.line(ticks * sockets));
    }
    if !place.clients.all.is_empty() {
        println!("{}", place.clients.summary());
    }
    if let Some((gathered, radius)) = gathered {
        let core = CrowdCore {
            frames: cli.frames.to_possible_value().map_or_else(String::new, |v| v.get_name().to_owned()),
            players: cli.players,
            shuffle: cli.shuffle,
            warmup,
            ticks: cli.ticks,
            gathered,
            gather_radius: radius,
            gap_ms: gaps_ms(&mut place.gaps.own),
            relayed_gap_ms: gaps_ms(&mut place.gaps.relayed),
            bytes_per_socket_tick: (place.bytes - bytes) as f64 / ticks / sockets,
            frames_per_socket_tick: (place.frames - frames) as f64 / ticks / sockets,
            ms_per_tick: place.shards.iter().flat_map(|one| one.ms).map(|(ms, _)| ms).sum::<f64>() / ticks,
        };
        println!(
            "crowd: {} of {} gathered within {} units; a socket's gaps between sections of its own shard ({}): p50 {} ms, p95 {} ms, max {} ms; of the other shard ({}): p50 {} ms, p95 {} ms, max {} ms",
            core.gathered,
            core.players,
            core.gather_radius,
            core.gap_ms.count,
            core.gap_ms.p50,
            core.gap_ms.p95,
            core.gap_ms.max,
            core.relayed_gap_ms.count,
            core.relayed_gap_ms.p50,
            core.relayed_gap_ms.p95,
            core.relayed_gap_ms.max,
        );
        if let Some(path) = &cli.json {
            let json = serde_json::to_string_pretty(&core).expect("figures as JSON");
            if let Err(e) = std::fs::write(path, json + "\n") {
                eprintln!("delta_cost: cannot write {}: {e}", path.display());
                std::process::exit(1);
            }
        }
    }
}

/// The gaps' figures in ms (50 a tick); `ticks` is sorted.
fn gaps_ms(ticks: &mut [u64]) -> CoreGaps {
    ticks.sort_unstable();
    let at = |q: f64| {
        ticks.get(((ticks.len() as f64 * q).ceil() as usize).saturating_sub(1)).map_or(0.0, |&t| 50.0 * t as f64)
    };
    CoreGaps { count: ticks.len() as u64, p50: at(0.5), p95: at(0.95), max: at(1.0) }
}

impl Place {
    /// A crowd's players within the loadgen's gather radius of its point,
    /// and that radius (world units); None walking.
    fn gathered(&self) -> Option<(u32, f32)> {
        let point = self.point?;
        let radius = GATHER_STEPS * self.step;
        let mut inside = 0;
        for one in &self.shards {
            let world = one.shard.world();
            for (id, _, _) in &one.players {
                let Some(p) = world.player(*id) else { continue };
                let (x, y) = world.position(p);
                inside += u32::from((x - point.0).hypot(y - point.1) <= radius);
            }
        }
        Some((inside, radius))
    }
}
