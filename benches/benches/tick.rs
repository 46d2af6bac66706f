//! One shard tick at 100, 1,000 and 5,000 players without area of interest
//! (the whole world one cell): move everyone, encode the cell's full form
//! and deltas, assemble the view frames, stage presence. `cargo bench -p mino-benches --bench tick`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mino_protocol::client::{Capabilities, Direction};
use mino_protocol::Tick;
use mino_server::shard::{Carrier, Shard, TickAt};
use mino_server::{clock, Config};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::hint::black_box;
use std::time::Duration;

/// The tick after `n` ticks on time.
fn at(n: u64) -> TickAt {
    TickAt { tick: Tick(n), lateness: Duration::ZERO, now: clock::now(), wall_ms: 50 * n, redis_up: true }
}

fn tick(c: &mut Criterion) {
    let mut group = c.benchmark_group("shard_tick");
    for n in [100u32, 1_000, 5_000] {
        let config = Config { max_players: n, busy_lateness: None, ..Config::default() };
        let mut shard = Shard::new(&config, StdRng::seed_from_u64(1), 0).expect("a shard");
        for i in 0..n {
            let a = shard.join("bot", None, 0, Capabilities::DELTAS, Carrier::Stream).expect("admitted");
            let angle = i as f32;
            shard.input(a.player, Direction::new(angle.cos(), angle.sin()).expect("finite"), 0);
        }
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

criterion_group!(benches, tick);
criterion_main!(benches);
