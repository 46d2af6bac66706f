//! One shard tick at 100, 1,000 and 5,000 players: move everyone, encode the
//! snapshot, stage presence. `cargo bench -p mino-benches --bench tick`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mino_protocol::client::Direction;
use mino_server::shard::Shard;
use mino_server::Config;
use std::hint::black_box;
use std::time::Duration;

fn tick(c: &mut Criterion) {
    let mut group = c.benchmark_group("shard_tick");
    for n in [100u32, 1_000, 5_000] {
        let config = Config { max_players: n, busy_lateness: None, ..Config::default() };
        let mut shard = Shard::new(&config);
        for i in 0..n {
            let ticket = mino_server::resume::Ticket::issue(0, &mut rand::rng());
            let a = shard.join("bot", ((i % 1000) as f32, (i / 10) as f32), ticket, 0).expect("admitted");
            let angle = i as f32;
            shard.input(a.player, Direction::new(angle.cos(), angle.sin()).expect("finite"));
        }
        shard.tick(Duration::from_millis(50), Duration::ZERO, 0);
        group.throughput(Throughput::Elements(u64::from(n)));
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| black_box(shard.tick(Duration::from_millis(50), Duration::ZERO, 0)))
        });
    }
    group.finish();
}

criterion_group!(benches, tick);
criterion_main!(benches);
