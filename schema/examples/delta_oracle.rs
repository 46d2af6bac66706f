//! The Rust side of the differential test of protocol 8's view frame decoders
//! (client-web/test/delta-differential.test.ts): prints valid view frames
//! and many mutants of them, each with what Rust's `ViewFrame::parse` and
//! `Held::apply` make of it; the test feeds the same bytes to the browser's
//! decoder and fails unless it does exactly the same.
//!
//! ```text
//! cargo run -q -p mino-protocol --example delta_oracle -- --cases 20000 --seed 1
//! ```
//!
//! Output, one record a line, fields separated by spaces (hex for bytes, `-`
//! for none):
//!
//! ```text
//! W world min_x min_y max_x max_y speed tick_hz max_players cell_size view_radius
//! S seed world delivery setup-frame frame digest-after-setup verdict digest
//! C seed mutant verdict digest
//! ```
//!
//! A world's `cell_size` is its grid's cell side in world units (0: no
//! grid; otherwise the client hands players off between its cells, as
//! `delta_cases::World::held` does).
//!
//! A seed is a frame of the shared cases (`tests/delta_cases`) and the
//! frame of full forms that sets up what a client held before it (`-`:
//! nothing), with the verdict on the frame itself; its delivery is its
//! sequence's, `in-order` or `lossy` (the client holds the seed's frame and
//! its mutants by the lossy rule of datagrams, `Delivery::Lossy`). A case is a mutant of a seed's frame, applied after its setup;
//! its verdict is `ok`, `frame:<ViewError>` (refused whole) or
//! `item:<shard>:<cell>:<DeltaError>` (refused at an item, the earlier ones
//! applied), errors as Rust's Debug prints them; the digest is FNV-1a (32
//! bits) of what the client then holds and, for `ok`, the updates (see
//! [`digest`]).

#[path = "../tests/delta_cases/mod.rs"]
mod delta_cases;

use clap::Parser;
use delta_cases::{held_frame, mutate, sequences, walk, Rng, WORLDS};
use mino_protocol::held::{Delivery, Held, HeldError, Update};
use mino_protocol::view::ViewFrame;
use std::fmt::Write as _;
use std::io::Write as _;

/// Prints protocol 8 view frames, mutants of them and Rust's verdicts.
#[derive(Parser)]
struct Cli {
    /// Mutants to print.
    #[arg(long, default_value_t = 20_000)]
    cases: usize,
    /// Seed of the mutations (the same seed prints the same cases).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// FNV-1a over little-endian u32 words.
struct Fnv(u32);

impl Fnv {
    fn word(&mut self, w: u32) {
        for b in w.to_le_bytes() {
            self.0 ^= u32::from(b);
            self.0 = self.0.wrapping_mul(16_777_619);
        }
    }
}

/// What a client holds, and the updates of the last frame (when it applied):
/// every cell by (shard, cell): shard, cell, tick, players, then each player
/// id, x | y << 16, heading | flags << 8; then each update: 1 (a cell) or 2
/// (forgot), 3 (reset) or 4 (broken), shard, cell, tick.
fn digest(held: &Held, updates: Option<&[Update]>) -> String {
    let mut h = Fnv(0x811c_9dc5);
    let mut cells: Vec<_> = held.cells().collect();
    cells.sort_by_key(|(k, _)| **k);
    for ((shard, cell), c) in cells {
        for w in [*shard, *cell, c.tick, c.entries.len() as u32] {
            h.word(w);
        }
        for e in c.entries {
            h.word(e.id.0);
            h.word(u32::from(e.x) | u32::from(e.y) << 16);
            h.word(u32::from(e.heading) | u32::from(e.flags) << 8);
        }
    }
    for u in updates.unwrap_or_default() {
        let words = match *u {
            Update::Cell { shard, cell, tick } => [1, shard, cell, tick],
            Update::Forgot { shard, cell, tick } => [2, shard, cell, tick],
            Update::Reset { shard, tick } => [3, shard, 0, tick],
            Update::Broken { shard, cell, tick } => [4, shard, cell, tick],
        };
        words.into_iter().for_each(|w| h.word(w));
    }
    format!("{:08x}", h.0)
}

/// Applies `frame` to `held`: the verdict and the digest after.
fn verdict(held: &mut Held, frame: &[u8]) -> (String, String) {
    let parsed = match ViewFrame::parse(frame) {
        Ok(f) => f,
        Err(e) => return (format!("frame:{e:?}"), digest(held, None)),
    };
    match held.apply(&parsed) {
        Ok(updates) => ("ok".to_string(), digest(held, Some(&updates))),
        Err(HeldError::Item { shard, cell, error }) => (format!("item:{shard}:{cell}:{error:?}"), digest(held, None)),
        Err(HeldError::Frame(e)) => (format!("frame:{e:?}"), digest(held, None)),
    }
}

/// A seed: its world, the setup frame, the frame, and what the client holds
/// after the setup.
struct Seed {
    world: usize,
    delivery: Delivery,
    setup: Option<Vec<u8>>,
    frame: Vec<u8>,
}

fn seeds() -> Vec<Seed> {
    let mut all = sequences();
    all.push(walk("a longer walk", 0, 0x0dd_5eed, 40, 80));
    all.push(walk("a longer walk near the wrap", 1, 0x0dd_5eee, 30, 70));
    let mut out = Vec::new();
    for seq in all {
        let mut held = WORLDS[seq.world].held_by(seq.delivery);
        for frame in seq.frames {
            let (world, delivery) = (seq.world, seq.delivery);
            out.push(Seed { world, delivery, setup: held_frame(&held), frame: frame.clone() });
            if let Ok(f) = ViewFrame::parse(&frame) {
                let _ = held.apply(&f);
            }
        }
    }
    out
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (i, w) in WORLDS.iter().enumerate() {
        let [a, b, c, d] = w.bounds.map(f64::from);
        let (speed, size) = (f64::from(w.speed), f64::from(w.cell_size));
        let radius = f64::from(w.view_radius);
        writeln!(out, "W {i} {a} {b} {c} {d} {speed} {} {} {size} {radius}", w.tick_hz, w.max_players)?;
    }
    let seeds = seeds();
    for (i, s) in seeds.iter().enumerate() {
        let mut held = WORLDS[s.world].held_by(s.delivery);
        if let Some(setup) = &s.setup {
            let (v, _) = verdict(&mut held, setup);
            assert_eq!(v, "ok", "seed {i}'s setup applies");
        }
        let setup = s.setup.as_deref().map_or("-".to_string(), hex);
        let ready = digest(&held, None);
        let (v, d) = verdict(&mut held, &s.frame);
        let delivery = match s.delivery {
            Delivery::InOrder => "in-order",
            Delivery::Lossy => "lossy",
        };
        writeln!(out, "S {i} {} {delivery} {setup} {} {ready} {v} {d}", s.world, hex(&s.frame))?;
    }
    let mut rng = Rng(cli.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    for _ in 0..cli.cases {
        let i = rng.below(seeds.len() as u64) as usize;
        let mut held = WORLDS[seeds[i].world].held_by(seeds[i].delivery);
        if let Some(setup) = &seeds[i].setup {
            let _ = verdict(&mut held, setup);
        }
        let mutant = mutate(&seeds[i].frame, &held, &mut rng);
        let (v, d) = verdict(&mut held, &mutant);
        let mutant = if mutant.is_empty() { "-".to_string() } else { hex(&mutant) };
        writeln!(out, "C {i} {mutant} {v} {d}")?;
    }
    out.flush()
}
