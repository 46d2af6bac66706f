//! Area of interest: encoding every occupied cell's full form, at 1,000, 5,000
//! and 10,000 players spread at a constant density (4 a cell of 100 world
//! units, so the world grows with the players), and the whole tick of a shard
//! with area of interest at those sizes, every player a viewer (step the
//! world, encode every occupied cell once, place the viewers, pick each view
//! group's frames): with everyone standing (`shard_tick_aoi`), and with
//! everyone walking back and forth over 600 units, turning every 100 ticks
//! so that the spread stays the same however many ticks a size runs
//! (`shard_tick_aoi_walking`: walkers change cells, and a viewer that just
//! left a cell sees both for the hysteresis, which makes more view groups).
//! The time per player should stay flat: the work grows with the players,
//! not with players times viewers. `cargo bench -p mino-benches --bench cells`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mino_protocol::client::{Capabilities, Direction};
use mino_protocol::delta::encode_full;
use mino_protocol::entry::PlayerEntry;
use mino_protocol::wire::Bounds;
use mino_protocol::{PlayerId, Tick};
use mino_server::config::AoiConfig;
use mino_server::shard::{Carrier, Shard, TickAt};
use mino_server::{clock, Config};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use std::time::Duration;

/// Cell side, world units.
const CELL: f32 = 100.0;

/// Players a cell, on average.
const DENSITY: f32 = 4.0;

/// The sizes measured, players.
const SIZES: [u32; 3] = [1_000, 5_000, 10_000];

/// The side of a square world holding `n` players at [`DENSITY`], world units.
fn world_side(n: u32) -> f32 {
    (n as f32 / DENSITY).sqrt().ceil() * CELL
}

/// `n` players spread uniformly over the world of [`world_side`].
fn players(n: u32) -> Vec<PlayerEntry> {
    let side = world_side(n);
    let mut rng = StdRng::seed_from_u64(u64::from(n));
    (0..n)
        .map(|i| PlayerEntry {
            id: PlayerId(i + 1),
            x: rng.random_range(0.0..side),
            y: rng.random_range(0.0..side),
            heading: i as u8,
            moving: i % 2 == 0,
            input_seq: 0,
        })
        .collect()
}

/// Every occupied cell's full form: players sorted into cells (by cell, then
/// id), each cell's full form encoded into one buffer (what the shard does
/// for every cell that changed in a tick). Returns the bytes encoded.
fn encode_cells(buffer: &mut Vec<u8>, order: &mut Vec<(u32, u32)>, ps: &[PlayerEntry], side: f32) -> usize {
    let columns = (side / CELL).ceil() as u32;
    let bounds = Bounds::new(0.0, 0.0, side, side);
    order.clear();
    order.extend(ps.iter().enumerate().map(|(i, p)| {
        let (c, r) = ((p.x / CELL) as u32, (p.y / CELL) as u32);
        (1 + r.min(columns - 1) * columns + c.min(columns - 1), i as u32)
    }));
    order.sort_unstable_by_key(|&(cell, i)| (cell, ps[i as usize].id));
    buffer.clear();
    let mut cells = 0;
    let mut entries = Vec::new();
    for run in order.chunk_by(|a, b| a.0 == b.0) {
        entries.clear();
        entries.extend(run.iter().map(|&(_, i)| ps[i as usize].quantized(&bounds)));
        encode_full(&entries, buffer);
        cells += 1;
    }
    buffer.len() + cells
}

fn cells_encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("cells_encode");
    for n in SIZES {
        let ps = players(n);
        let side = world_side(n);
        let (mut enc, mut order) = (Vec::new(), Vec::new());
        group.throughput(Throughput::Elements(u64::from(n)));
        group.bench_with_input(BenchmarkId::from_parameter(n), &ps, |b, ps| {
            b.iter(|| black_box(encode_cells(&mut enc, &mut order, ps, side)))
        });
    }
    group.finish();
}

/// The tick after `n` ticks on time.
fn at(n: u64) -> TickAt {
    TickAt { tick: Tick(n), lateness: Duration::ZERO, now: clock::now(), wall_ms: 50 * n, redis_up: true }
}

/// Ticks between two turns of the walkers (100 ticks at 6 units: 600 units).
const TURN_TICKS: u64 = 100;

/// A shard with area of interest and `n` players spread at [`DENSITY`], every
/// one a viewer; their ids.
fn aoi_shard(n: u32) -> (Shard, Vec<PlayerId>) {
    let aoi = AoiConfig { cell_size: CELL, view_radius: 2.0 * CELL, hysteresis_ticks: 10, budget_bytes: 8192 };
    let config =
        Config { max_players: n, busy_lateness: None, world_size: world_side(n), aoi: Some(aoi), ..Config::default() };
    let mut shard = Shard::new(&config, StdRng::seed_from_u64(1), 0).expect("a shard");
    let ids = (0..n)
        .map(|_| shard.join("bot", None, 0, Capabilities::DELTAS, Carrier::Stream).expect("admitted").player)
        .collect();
    (shard, ids)
}

fn shard_tick_aoi(c: &mut Criterion) {
    let mut group = c.benchmark_group("shard_tick_aoi");
    for n in SIZES {
        let (mut shard, _) = aoi_shard(n);
        let mut t = 1;
        shard.tick(at(t));
        group.throughput(Throughput::Elements(u64::from(n)));
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                t += 1;
                black_box(shard.tick(at(t)))
            })
        });
    }
    group.finish();
}

/// Every player walks its own direction, reversed every [`TURN_TICKS`].
fn turn(shard: &mut Shard, ids: &[PlayerId], t: u64) {
    let sign = if (t / TURN_TICKS).is_multiple_of(2) { 1.0 } else { -1.0 };
    for (i, &id) in ids.iter().enumerate() {
        let a = i as f32;
        shard.input(id, Direction::new(sign * a.cos(), sign * a.sin()).expect("finite"), t as u32);
    }
}

fn shard_tick_aoi_walking(c: &mut Criterion) {
    let mut group = c.benchmark_group("shard_tick_aoi_walking");
    for n in SIZES {
        let (mut shard, ids) = aoi_shard(n);
        let mut t = 1;
        turn(&mut shard, &ids, t);
        shard.tick(at(t));
        group.throughput(Throughput::Elements(u64::from(n)));
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                t += 1;
                if t.is_multiple_of(TURN_TICKS) {
                    turn(&mut shard, &ids, t);
                }
                black_box(shard.tick(at(t)))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, cells_encode, shard_tick_aoi, shard_tick_aoi_walking);
criterion_main!(benches);
