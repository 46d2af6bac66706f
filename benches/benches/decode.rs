//! Verified decoding of client messages (what the server does to every
//! message it receives) and of a server snapshot (what a bot or relay does).
//! `cargo bench -p mino-benches --bench decode`

use criterion::{criterion_group, criterion_main, Criterion};
use mino_protocol::client;
use mino_protocol::snapshot::{PlayerEntry, SnapshotEncoder, SnapshotHeader};
use mino_protocol::wire::Bounds;
use mino_protocol::{PlayerId, ShardId, Tick};
use std::hint::black_box;

fn decode(c: &mut Criterion) {
    let input = client::encode_input(7, 0.6, 0.8);
    let hello = client::encode_hello("Ada Lovelace", Some("token"), Some(&[1; 16]));
    let chat = client::encode_chat("hello, everyone in the place");
    let mut g = c.benchmark_group("client_decode");
    g.bench_function("input", |b| b.iter(|| black_box(client::decode(black_box(&input)))));
    g.bench_function("hello", |b| b.iter(|| black_box(client::decode(black_box(&hello)))));
    g.bench_function("chat", |b| b.iter(|| black_box(client::decode(black_box(&chat)))));
    g.finish();

    let header = SnapshotHeader {
        shard_id: ShardId(1),
        tick: Tick(1),
        server_time_ms: 0,
        tick_hz: 20,
        bounds: Bounds::new(0.0, 0.0, 1000.0, 1000.0),
        cell: 0,
    };
    let snap = SnapshotEncoder::new().encode(
        &header,
        (0..1000).map(|i| PlayerEntry { id: PlayerId(i + 1), x: 1.0, y: 2.0, heading: 0, moving: true, input_seq: 0 }),
    );
    c.bench_function("snapshot_verify_1000", |b| {
        b.iter(|| black_box(mino_protocol::snapshot::peek_header(black_box(&snap))))
    });
}

criterion_group!(benches, decode);
criterion_main!(benches);
