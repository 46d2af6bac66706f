//! `delta_cost`: the tick thread's work of section 15's area-of-interest run
//! without sockets, for a profiler: two clustered shards
//! ([`mino_server::shard::Shard`], I/O-free) of walkers (the loadgen's walker
//! profile: a new random direction every 1-3 s, steered back in at the
//! world's edge), every player a socket taking deltas or (`--frames full`)
//! full forms, `--cell-size 100 --view-radius 400` over a world of 4 players
//! a cell, each shard's region bundles encoded, verified and relayed to the
//! other one at the next tick (as Redis would). It runs `--warmup` ticks,
//! then `--ticks` more inside `measured` (the function to give callgrind's
//! `--toggle-collect`), and prints the wall time a tick and the view-frame
//! bytes a socket a tick, and the wall time by the tick's number modulo 4
//! (with deltas a view's outer tiers are due on the same ticks for every
//! view: every 2nd tick, and every 4th, carry more of the work), then each
//! shard's own tick by its number mod 4. Shard 2 ticks after shard 1, so
//! it hears shard 1's step of the same tick and shard 1 hears shard 2's of
//! the tick before; `--step-offset N` starts shard 2's steps N ahead, as
//! shards started at different times are (the relay's lag,
//! `server/src/shard/lag.rs`, is measured so).
//!
//! With `--clients N` the first N sockets' frames are also read as the
//! loadgen's bot reads them, inside `clients_measured` (from the first
//! tick, warm-up included): decoded, applied to what the client holds
//! ([`ViewReader`], the bot's own), and each updated cell handed to the
//! bot's [`CellMeter`]. It prints the client frames read and digests of
//! what the clients hold, of the walk's cells, and of what the meters
//! recorded (two builds that read the same frames alike print the same).
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
//! ```

use bytes::Bytes;
use clap::{Parser, ValueEnum};
use mino_loadgen::cells::CellMeter;
use mino_loadgen::event::CellFrame;
use mino_loadgen::reader::ViewReader;
use mino_loadgen::stats::Tally;
use mino_loadgen::world::World;
use mino_loadgen::{Metric, ServerEvent, Stats};
use mino_protocol::client::{Capabilities, Direction};
use mino_protocol::entry::Entry;
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
use std::time::Duration;

#[derive(Parser)]
#[command(about = "The tick thread's work of two shards of walkers with area of interest, without sockets")]
struct Cli {
    /// Players, over the two shards.
    #[arg(long, default_value_t = 1000)]
    players: u32,
    /// What the sockets take.
    #[arg(long, value_enum, default_value_t = Frames::Deltas)]
    frames: Frames,
    /// Ticks before the measured ones.
    #[arg(long, default_value_t = 200)]
    warmup: u64,
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
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Frames {
    Deltas,
    Full,
}

/// Cell side, world units.
const CELL: f32 = 100.0;

/// One shard and its players: (id, link, ticks until its next turn).
struct One {
    shard: Shard,
    players: Vec<(PlayerId, LinkId, u32)>,
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
    /// A hash of every socket's frames, in order (two builds that send the
    /// same bytes print the same digest).
    digest: DefaultHasher,
    /// The clients (`--clients`), and per shard the links they read (link,
    /// client).
    clients: Clients,
    watched: [Vec<(LinkId, usize)>; 2],
    /// The tick's frames for the clients: (client, websocket frame).
    inbox: Vec<(usize, Bytes)>,
}

/// One socket read as the loadgen's bot reads it.
struct Client {
    /// What it holds and the walk over a frame's cells.
    reader: ViewReader,
    /// What it measures of its cells.
    meter: CellMeter,
    /// Scratch: the entries of the cell handed on.
    entries: Vec<Entry>,
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
        let side = ((f64::from(cli.players) / 4.0).sqrt().ceil() as f32) * CELL;
        let caps = match cli.frames {
            Frames::Deltas => Capabilities::DELTAS,
            Frames::Full => Capabilities::NONE,
        };
        let mut rng = StdRng::seed_from_u64(cli.seed);
        let mut shards = [1u32, 2].map(|id| {
            // The shard's own flags, as section 15 passes them.
            let flags = [
                "mino-server".to_owned(),
                "--shard-id".into(),
                id.to_string(),
                "--redis-url".into(),
                "redis://127.0.0.1:1".into(),
                "--cell-size".into(),
                CELL.to_string(),
                "--view-radius".into(),
                (4.0 * CELL).to_string(),
                "--world-size".into(),
                side.to_string(),
                "--max-players".into(),
                cli.players.to_string(),
            ];
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
            digest: DefaultHasher::new(),
            clients,
            watched: Default::default(),
            inbox: Vec::new(),
        };
        for i in 0..cli.players {
            let s = (i % 2) as usize;
            let one = &mut place.shards[s];
            let a = one.shard.join("bot", None, 0, caps, Carrier::Stream).expect("admitted");
            let wait = rng.random_range(0..60);
            one.players.push((a.player, a.link, wait));
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
            steer(one, &mut self.rng, self.side, t);
            let started = std::time::Instant::now();
            let out = one.shard.tick(at(self.start, t));
            let ms = &mut one.ms[(t % 4) as usize];
            ms.0 += started.elapsed().as_secs_f64() * 1e3;
            ms.1 += 1;
            for (_, link, _) in &one.players {
                let client = self.watched[i].iter().find(|w| w.0 == *link).map(|w| w.1);
                for f in out.frame.views.get(one.shard.view_of(*link)).map_or(&[][..], |v| &v.frames[..]) {
                    self.bytes += f.len() as u64;
                    self.frames += 1;
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
        Client {
            reader: ViewReader::new(&w),
            meter: CellMeter::new(grid, w.bounds, w.shard_id.0, w.player_id),
            entries: Vec::new(),
        }
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
        while let Some(u) = client.reader.next_cell(&mut client.entries) {
            let cell = CellFrame::held(u.shard, u.cell, u.tick, u.time_ms, &client.entries);
            let walked = [u.shard.into(), u.cell.into(), u.tick.into(), u.time_ms, u.len as u64, u.bodies as u64];
            clients.walk = walked.iter().fold(clients.walk, |d, &v| fold(d, v));
            clients.walk = fold(clients.walk, client.entries.len() as u64);
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

/// The loadgen's walker: a new random direction every 1-3 s (20-60 ticks),
/// back towards the middle when at the world's edge.
fn steer(one: &mut One, rng: &mut StdRng, side: f32, t: u64) {
    let world = one.shard.world();
    let mut turns = Vec::new();
    for (id, _, wait) in &mut one.players {
        let Some(p) = world.player(*id) else { continue };
        let (x, y) = world.position(p);
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
    for _ in 0..cli.warmup {
        place.tick();
    }
    let (bytes, frames) = (place.bytes, place.frames);
    place.shards.iter_mut().for_each(|one| one.ms = [(0.0, 0); 4]);
    let start = std::time::Instant::now();
    let by_phase = measured(&mut place, cli.ticks);
    let took = start.elapsed();
    let sockets = f64::from(cli.players);
    let ticks = cli.ticks as f64;
    println!(
        "{} players, {} ticks: {:.1} us a tick (both shards), {:.2} us a player a tick; {:.1} view-frame bytes a socket a tick, {:.3} frames a socket a tick; digest {:016x}",
        cli.players,
        cli.ticks,
        took.as_secs_f64() * 1e6 / ticks,
        took.as_secs_f64() * 1e6 / ticks / sockets,
        (place.bytes - bytes) as f64 / ticks / sockets,
        (place.frames - frames) as f64 / ticks / sockets,
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
    if !place.clients.all.is_empty() {
        println!("{}", place.clients.summary());
    }
}
