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
//! bytes a socket a tick.
//!
//! ```sh
//! cargo build --release -p mino-benches --bin delta_cost
//! target/release/delta_cost --frames deltas
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*delta_cost*measured*' \
//!     target/release/delta_cost --frames deltas --ticks 40
//! ```

use clap::{Parser, ValueEnum};
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
        let shards = [1u32, 2].map(|id| {
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
            One { shard, players: Vec::new() }
        });
        let mut place = Place {
            shards,
            t: 0,
            start: clock::now(),
            rng: StdRng::seed_from_u64(cli.seed),
            in_flight: Default::default(),
            side,
            bytes: 0,
            frames: 0,
            digest: DefaultHasher::new(),
        };
        for i in 0..cli.players {
            let one = &mut place.shards[(i % 2) as usize];
            let a = one.shard.join("bot", None, 0, caps, Carrier::Stream).expect("admitted");
            let wait = rng.random_range(0..60);
            one.players.push((a.player, a.link, wait));
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
            let out = one.shard.tick(at(self.start, t));
            for (_, link, _) in &one.players {
                for f in out.frame.views.get(one.shard.view_of(*link)).map_or(&[][..], |v| &v.frames[..]) {
                    self.bytes += f.len() as u64;
                    self.frames += 1;
                    link.0.hash(&mut self.digest);
                    f.hash(&mut self.digest);
                }
            }
            self.in_flight[1 - i] = bundles(&one.shard, &out, t);
            one.shard.effects().for_each(drop);
        }
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
            let (stamp, step, items) = (b.stamp(), b.step(), bytes::Bytes::copy_from_slice(b.items()));
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

/// The measured ticks (callgrind's `--toggle-collect` names this).
#[inline(never)]
fn measured(place: &mut Place, ticks: u64) {
    for _ in 0..ticks {
        place.tick();
        black_box(&place.bytes);
    }
}

fn main() {
    let cli = Cli::parse();
    let mut place = Place::new(&cli);
    for _ in 0..cli.warmup {
        place.tick();
    }
    let (bytes, frames) = (place.bytes, place.frames);
    let start = std::time::Instant::now();
    measured(&mut place, cli.ticks);
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
}
