//! Snapshot encoding at 100, 1,000 and 5,000 players: the one encode a tick.
//! `cargo bench -p mino-benches --bench snapshot`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mino_protocol::snapshot::{PlayerEntry, SnapshotEncoder, SnapshotHeader};
use mino_protocol::wire::Bounds;
use mino_protocol::{PlayerId, ShardId, Tick};
use std::hint::black_box;

fn players(n: u32) -> Vec<PlayerEntry> {
    (0..n)
        .map(|i| PlayerEntry {
            id: PlayerId(i + 1),
            x: (i * 7 % 1000) as f32,
            y: (i * 13 % 1000) as f32,
            heading: i as u8,
            moving: i % 2 == 0,
            input_seq: 0,
        })
        .collect()
}

fn encode(c: &mut Criterion) {
    let header = SnapshotHeader {
        shard_id: ShardId(1),
        tick: Tick(1),
        server_time_ms: 0,
        tick_hz: 20,
        bounds: Bounds::new(0.0, 0.0, 1000.0, 1000.0),
        cell: 0,
    };
    let mut group = c.benchmark_group("snapshot_encode");
    for n in [100u32, 1_000, 5_000] {
        let ps = players(n);
        let mut enc = SnapshotEncoder::new();
        group.throughput(Throughput::Elements(u64::from(n)));
        group.bench_with_input(BenchmarkId::from_parameter(n), &ps, |b, ps| {
            b.iter(|| black_box(enc.encode(&header, ps.iter().copied())))
        });
    }
    group.finish();
}

criterion_group!(benches, encode);
criterion_main!(benches);
