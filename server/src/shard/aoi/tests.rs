//! The area's frames against a client that applies them: two shards' areas
//! driven tick by tick with walkers crossing cells, region bundles relayed
//! between them, sockets taking deltas and sockets taking full forms; after
//! every tick each socket must hold, of every cell it holds, exactly the
//! server's state of that cell at the tick its section named.

use super::*;
use crate::ws_frame;
use mino_protocol::client::Direction;
use mino_protocol::entry::Entry;
use mino_protocol::held::Held;
use mino_protocol::server::{decode, ServerMsg};
use mino_protocol::view::Bundle;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const SIDE: f32 = 1600.0;

/// Every cell's players of one shard at one tick.
type Truth = HashMap<(u32, u32), Vec<Entry>>;

struct Shard {
    id: ShardId,
    world: World,
    area: Aoi,
}

struct Socket {
    shard: usize,
    link: LinkId,
    form: Form,
    held: Held,
    /// Frames are not delivered until this tick (a blocked socket whose
    /// frames were dropped), then it is resynced.
    blocked: Option<u64>,
}

/// One shard's bundles of a tick: its id, its step, each region's items.
type Published = (ShardId, u64, Vec<(RegionId, Bytes)>);

fn settings() -> AreaSettings {
    AreaSettings { cell_size: 100.0, view_radius: 300.0, hysteresis_ticks: 10, budget_bytes: 8192 }
}

fn shard(id: u32, players: u32, seed: u64, settings: AreaSettings) -> Shard {
    let bounds = Bounds::new(0.0, 0.0, SIDE, SIDE);
    let mut world = World::new(bounds, 120.0, 20);
    let mut rng = StdRng::seed_from_u64(seed);
    for i in 0..players {
        let (x, y) = (rng.random_range(0.0..SIDE), rng.random_range(0.0..SIDE));
        world.add(PlayerId(id * 10_000 + i + 1), "p".into(), x, y);
    }
    let area = Aoi::new(settings, &bounds, ShardId(id)).expect("area");
    Shard { id: ShardId(id), world, area }
}

/// Every cell's state of `s` now, keyed (shard, cell).
fn truth(s: &Shard) -> Truth {
    let mut t: Truth = HashMap::new();
    for p in s.world.players() {
        let (x, y) = s.world.position(p);
        t.entry((s.id.0, s.area.grid().cell_of(x, y).0)).or_default().push(p.entry());
    }
    for v in t.values_mut() {
        v.sort_unstable_by_key(|e| e.id);
    }
    t
}

/// Turns some walkers (a new direction every 2 s on average), some stop.
fn steer(s: &mut Shard, rng: &mut StdRng, seq: &mut u32) {
    let ids: Vec<PlayerId> = s.world.players().iter().map(|p| p.id).collect();
    for id in ids {
        if rng.random_bool(1.0 / 40.0) {
            *seq += 1;
            let a = rng.random_range(0.0..std::f32::consts::TAU);
            let dir =
                if rng.random_bool(0.1) { Direction::STILL } else { Direction::new(a.cos(), a.sin()).expect("dir") };
            s.world.set_direction(id, dir, *seq);
        }
    }
}

/// Applies a frame's bytes to `held`.
fn apply(held: &mut Held, framed: &Bytes) {
    let Ok(ServerMsg::View(frame)) = decode(ws_frame::payload(framed)) else { panic!("a view frame") };
    held.apply(&frame).expect("every item applies");
}

fn relayed(b: &Bundle<'_>) -> Relayed {
    Relayed { stamp: b.stamp(), step: b.step(), items: Bytes::copy_from_slice(b.items()), cells: b.cells().to_vec() }
}

/// Every cell `socket` holds is the true state of that cell at its tick.
fn check(socket: &Socket, shards: &[Shard], history: &[HashMap<u64, Truth>], t: u64) {
    for (&(shard, cell), held) in socket.held.cells() {
        let Some(i) = shards.iter().position(|s| s.id.0 == shard) else { panic!("a cell of shard {shard}, gone") };
        let tick = u64::from(held.tick);
        assert!(tick <= t, "held at a future tick");
        let truth = history[i].get(&tick).expect("a recorded tick");
        let want = truth.get(&(shard, cell)).cloned().unwrap_or_default();
        assert_eq!(
            held.entries, want,
            "tick {t}: a socket of shard {} holds cell {cell} of shard {shard} as of tick {tick}",
            shards[socket.shard].id.0
        );
    }
}

fn socket(shards: &mut [Shard], shard: usize, player: usize, form: Form) -> Socket {
    let s = &mut shards[shard];
    let p = s.world.players()[player].id;
    let link = LinkId(u64::from(p.0));
    s.area.add_viewer(link, p, form);
    let held = Held::new(s.world.motion().clone(), usize::MAX);
    Socket { shard, link, form, held, blocked: None }
}

fn everyone_walks(shards: &mut [Shard]) {
    for s in shards {
        let ids: Vec<PlayerId> = s.world.players().iter().map(|p| p.id).collect();
        for (k, id) in ids.into_iter().enumerate() {
            let a = k as f32;
            s.world.set_direction(id, Direction::new(a.cos(), a.sin()).expect("dir"), 1);
        }
    }
}

/// Runs `ticks` ticks of `shards` (relaying each one's bundles to the
/// others before their next tick) with `sockets`, calling `each` first and
/// checking every socket after every tick; returns the bytes the deltas'
/// and the full forms' sockets got.
fn run(
    shards: &mut [Shard],
    sockets: &mut Vec<Socket>,
    ticks: std::ops::RangeInclusive<u64>,
    seed: u64,
    each: impl FnMut(u64, &mut [Shard], &mut Vec<Socket>),
) -> [u64; 2] {
    run_lossy(shards, sockets, ticks, seed, 0.0, each)
}

/// [`run`], losing each region bundle on the way with probability `loss`.
fn run_lossy(
    shards: &mut [Shard],
    sockets: &mut Vec<Socket>,
    ticks: std::ops::RangeInclusive<u64>,
    seed: u64,
    loss: f64,
    mut each: impl FnMut(u64, &mut [Shard], &mut Vec<Socket>),
) -> [u64; 2] {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut seq = 0;
    let mut history: Vec<HashMap<u64, Truth>> = vec![HashMap::new(); shards.len()];
    let mut bytes = [0u64; 2];
    for t in ticks {
        each(t, shards, sockets);
        for s in shards.iter_mut() {
            steer(s, &mut rng, &mut seq);
            s.world.step();
        }
        for (i, s) in shards.iter_mut().enumerate() {
            s.area.tick(&s.world, Tick(t), true);
            history[i].insert(t, truth(s));
        }
        let bundles: Vec<Published> = shards.iter().map(|s| (s.id, s.area.step(), s.area.bundles())).collect();
        for (from, step, regions) in &bundles {
            let stamp = FrameStamp { shard: *from, tick: Tick(t), server_time_ms: t * 50 };
            for (region, items) in regions {
                let encoded = mino_protocol::view::encode_bundle(&stamp, *step, region.0, items);
                let Ok(ServerMsg::CellBundle(b)) = decode(&encoded) else { panic!("a bundle") };
                for s in shards.iter_mut().filter(|s| s.id != *from) {
                    if !rng.random_bool(loss) {
                        s.area.relay(relayed(&b));
                    }
                }
            }
        }
        for socket in sockets.iter_mut() {
            if socket.blocked.is_some_and(|until| t < until) {
                continue;
            }
            if socket.blocked.take().is_some() {
                // Its frames were dropped: it holds what it can no longer trust.
                shards[socket.shard].area.resync(socket.link);
                continue;
            }
            let area = &shards[socket.shard].area;
            let Some(view) = area.view_of(socket.link) else { continue };
            for framed in area.frames_of(view) {
                bytes[usize::from(socket.form == Form::Full)] += framed.len() as u64;
                apply(&mut socket.held, framed);
            }
            check(socket, shards, &history, t);
        }
    }
    bytes
}

#[test]
fn every_socket_holds_exactly_the_state_it_was_told_own_and_relayed_deltas_and_full() {
    let mut shards = vec![shard(1, 250, 1, settings()), shard(2, 250, 2, settings())];
    let mut sockets = Vec::new();
    for i in 0..12 {
        let form = if i % 2 == 0 { Form::Deltas } else { Form::Full };
        sockets.push(socket(&mut shards, i % 2, i * 7, form));
    }
    everyone_walks(&mut shards);
    let [deltas, full] = run(&mut shards, &mut sockets, 1..=300, 9, |_, _, _| {});
    assert!(deltas > 0 && deltas * 3 < full, "deltas {deltas} bytes against full forms {full}");
}

#[test]
fn a_socket_that_joins_late_or_is_resynced_holds_exactly_what_it_is_told() {
    let mut shards = vec![shard(1, 200, 3, settings()), shard(2, 200, 4, settings())];
    let mut sockets = vec![socket(&mut shards, 0, 0, Form::Deltas)];
    everyone_walks(&mut shards);
    run(&mut shards, &mut sockets, 1..=200, 5, |t, shards, sockets| {
        if t == 50 {
            sockets.push(socket(shards, 1, 3, Form::Deltas));
        }
        if t == 80 {
            sockets[0].blocked = Some(100);
        }
    });
}

#[test]
fn a_shard_that_leaves_is_dropped_by_every_socket() {
    let mut shards = vec![shard(1, 100, 6, settings()), shard(2, 100, 7, settings())];
    everyone_walks(&mut shards);
    let mut sockets = vec![socket(&mut shards, 0, 0, Form::Deltas)];
    run(&mut shards, &mut sockets, 1..=40, 8, |_, _, _| {});
    assert!(sockets[0].held.cells().any(|((s, _), _)| *s == 2), "it sees the other shard");
    shards[0].area.shard_left(ShardId(2));
    let s = &mut shards[0];
    s.world.step();
    s.area.tick(&s.world, Tick(41), true);
    let view = s.area.view_of(sockets[0].link).expect("placed");
    for framed in s.area.frames_of(view) {
        apply(&mut sockets[0].held, framed);
    }
    assert!(sockets[0].held.cells().all(|((s, _), _)| *s == 1), "the other shard's cells are gone");
}

#[test]
fn the_whole_world_as_one_cell_sends_deltas_and_nothing_while_everyone_stands() {
    let bounds = Bounds::new(0.0, 0.0, SIDE, SIDE);
    let mut shards = vec![shard(1, 300, 10, AreaSettings::whole(&bounds))];
    everyone_walks(&mut shards);
    let mut sockets = vec![socket(&mut shards, 0, 0, Form::Deltas), socket(&mut shards, 0, 1, Form::Full)];
    let [deltas, full] = run(&mut shards, &mut sockets, 1..=100, 11, |_, _, _| {});
    assert!(deltas > 0 && deltas * 5 < full, "{deltas} against {full}");
    let ids: Vec<PlayerId> = shards[0].world.players().iter().map(|p| p.id).collect();
    for p in ids {
        shards[0].world.stop(p);
    }
    // Stopping is news once; then nothing is.
    let view = shards[0].area.view_of(sockets[0].link).expect("placed");
    for t in 101..110 {
        let s = &mut shards[0];
        s.world.step();
        s.area.tick(&s.world, Tick(t), false);
        if t > 102 {
            assert!(s.area.frames_of(view).is_empty(), "nothing new at tick {t}");
        }
    }
}

#[test]
fn lost_bundles_and_a_budget_that_slows_the_tiers_never_leave_a_wrong_position() {
    // A small budget moves views up and down the ladder; a crowd walking in
    // one corner makes its cells heavy.
    let tight = AreaSettings { budget_bytes: 1200, ..settings() };
    let mut shards = vec![shard(1, 300, 13, tight), shard(2, 300, 14, tight)];
    for s in &mut shards {
        let ids: Vec<PlayerId> = s.world.players().iter().map(|p| p.id).take(120).collect();
        for (k, id) in ids.into_iter().enumerate() {
            let a = k as f32 * 0.7;
            s.world.add(
                PlayerId(id.0 + 5000),
                "c".into(),
                420.0 + (k % 11) as f32 * 7.0,
                420.0 + (k / 11) as f32 * 7.0,
            );
            s.world.set_direction(PlayerId(id.0 + 5000), Direction::new(a.cos(), a.sin()).expect("dir"), 1);
        }
    }
    everyone_walks(&mut shards);
    let mut sockets = Vec::new();
    for i in 0..10 {
        let form = if i % 3 == 2 { Form::Full } else { Form::Deltas };
        sockets.push(socket(&mut shards, i % 2, i * 13, form));
    }
    run_lossy(&mut shards, &mut sockets, 1..=300, 15, 0.05, |t, shards, sockets| {
        if t == 120 {
            sockets[1].blocked = Some(140);
        }
        if t == 200 {
            sockets.push(socket(shards, 0, 200, Form::Deltas));
        }
    });
}

#[test]
fn a_full_form_socket_is_sent_its_cells_every_due_tick_standing_or_not() {
    let mut shards = vec![shard(1, 80, 16, settings())];
    let mut sockets = vec![socket(&mut shards, 0, 0, Form::Full), socket(&mut shards, 0, 1, Form::Deltas)];
    run(&mut shards, &mut sockets, 1..=5, 17, |_, _, _| {});
    let ids: Vec<PlayerId> = shards[0].world.players().iter().map(|p| p.id).collect();
    for p in ids {
        shards[0].world.stop(p);
    }
    let s = &mut shards[0];
    let (full, deltas) = (s.area.view_of(sockets[0].link), s.area.view_of(sockets[1].link));
    let mut sent = [0, 0];
    for t in 6..=150 {
        s.world.step();
        s.area.tick(&s.world, Tick(t), false);
        if t > 80 {
            sent[0] += usize::from(!s.area.frames_of(full.expect("placed")).is_empty());
            sent[1] += usize::from(!s.area.frames_of(deltas.expect("placed")).is_empty());
        }
    }
    assert_eq!(sent, [70, 0], "full forms every tick (the own cell is due every tick); nothing new for deltas");
}
