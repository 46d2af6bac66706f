//! What the `view_frame` fuzz target checks of protocol 8's view frame reader and
//! Held, shared with its replay in `cargo test` (schema/tests/fuzz_corpus.rs
//! includes this file, and `tests/delta_cases` as `crate::delta_cases`).
//!
//! Input: byte 0 picks a world of `delta_cases::WORLDS`; then view frames,
//! each a u16 little-endian length and that many bytes (the last takes what
//! is left if shorter), applied in order to one client. For each frame:
//!
//! - `ViewFrame::parse` gives a frame or an error, never a panic; a frame
//!   reads back as exactly its sections, cells and items, each item's bytes
//!   in place in the frame, in order, and written out again it parses to the
//!   same;
//! - `Held::apply` applies it (an update an item but an unchanged one,
//!   implied cells too) or names
//!   a cell of the frame, or refuses a section's implied cells that are not
//!   the view's (or in a world without a grid); after it, every
//!   held cell is sorted by id with at most the world's players, and every
//!   cell it changed (and still holds) survives the encoders: its full form decodes to it, and
//!   a delta to it from what was held before applies back to it;
//! - a second client whose cells expire ([`Held::expiring`], as a WebTransport
//!   session's), given the frames [`STEP_MS`] apart, never panics and never
//!   holds a cell told nothing for longer than the expiry and two scans;
//! - a third client whose frames may be lost ([`Delivery::Lossy`]) never
//!   panics, names a cell of the frame when it refuses one, and holds every
//!   cell sorted with at most the world's players.

use crate::delta_cases::WORLDS;
use mino_protocol::delta::{self, encode_delta, encode_full};
use mino_protocol::entry::Entry;
use mino_protocol::held::{Delivery, HeldError, Update, EXPIRY_SCAN_MS};
use mino_protocol::stencil::ViewScratch;
use mino_protocol::view::{write_section, ItemKind, Section, ViewError, ViewFrame};
use std::collections::BTreeMap;

/// The expiring client's cell expiry, ms.
const EXPIRY_MS: u32 = 2_000;

/// Time between two frames on the expiring client's clock, ms.
const STEP_MS: u64 = 700;

/// The frames of a fuzz input, and its world.
pub fn split(data: &[u8]) -> (usize, Vec<&[u8]>) {
    let Some((&world, mut rest)) = data.split_first() else { return (0, Vec::new()) };
    let mut frames = Vec::new();
    while rest.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
        let (frame, tail) = rest[2..].split_at(len.min(rest.len() - 2));
        frames.push(frame);
        rest = tail;
    }
    (usize::from(world) % WORLDS.len(), frames)
}

/// A fuzz input of `world` and `frames`.
#[allow(dead_code)] // the replay writes seeds; the target only reads
pub fn join(world: u8, frames: &[&[u8]]) -> Vec<u8> {
    let mut out = vec![world];
    for f in frames {
        let len = f.len().min(usize::from(u16::MAX));
        out.extend_from_slice(&(len as u16).to_le_bytes());
        out.extend_from_slice(&f[..len]);
    }
    out
}

/// Checks every property above; panics at the first that fails.
pub fn check(data: &[u8]) {
    let (world, frames) = split(data);
    let world = &WORLDS[world];
    let motion = world.motion();
    let mut held = world.held();
    let mut expiring = world.held().expiring(EXPIRY_MS);
    let mut lossy = world.held().delivered(Delivery::Lossy);
    // When each cell was last told to the expiring client, ms.
    let mut told = BTreeMap::new();
    let mut updates = Vec::new();
    for (i, bytes) in frames.into_iter().enumerate() {
        let Ok(frame) = ViewFrame::parse(bytes) else { continue };
        let now = i as u64 * STEP_MS;
        // An item that does not apply leaves the updates of those before it.
        let _ = expiring.apply_at(&frame, now, &mut updates);
        for u in &updates {
            if let Update::Cell { shard, cell, .. } = *u {
                told.insert((shard, cell), now);
            }
        }
        for (key, _) in expiring.cells() {
            let last = told.get(key).copied().expect("a held cell was told");
            let most = u64::from(EXPIRY_MS) + EXPIRY_SCAN_MS + STEP_MS;
            assert!(now - last <= most, "cell {key:?} held {} ms after it was last told", now - last);
        }
        let items = reads_back(bytes, &frame);
        // Implied cells as the client reads them (none read when a
        // section's are refused: then so is the frame).
        let mut implied = 0;
        if let Some(grid) = world.grid() {
            let (stencil, mut cells, mut room) = (world.stencil(), Vec::new(), ViewScratch::default());
            for s in frame.sections() {
                let _ = s.each_implied(&grid, &stencil, &mut cells, &mut room, |_, _| implied += 1);
            }
        }
        let before: BTreeMap<(u32, u32), Vec<Entry>> = held.cells().map(|(k, c)| (*k, c.entries.to_vec())).collect();
        match held.apply(&frame) {
            Ok(updates) => {
                let resets = frame.sections().filter(|s| s.is_empty()).count();
                let told = items.iter().filter(|i| i.2 != ItemKind::Unchanged).count();
                assert_eq!(updates.len(), told + implied + resets, "an update an item, and one a reset");
                for u in &updates {
                    // A cell told, then forgotten in the same frame, is not held.
                    let Update::Cell { shard, cell, .. } = *u else { continue };
                    let Some(now) = held.cell(shard, cell).map(|c| c.entries) else { continue };
                    let mut body = Vec::new();
                    encode_full(now, &mut body);
                    let mut back = Vec::new();
                    delta::decode_full(&body, world.max_players, &mut back).expect("a full form decodes");
                    assert_eq!(&back, now, "a full form round trips");
                    let old = before.get(&(shard, cell)).map_or(&[][..], Vec::as_slice);
                    for span in [1, 64] {
                        body.clear();
                        encode_delta(old, now, span, &motion, &mut body);
                        delta::apply(old, &body, span, &motion, usize::MAX, &mut back).expect("a delta applies");
                        assert_eq!(&back, now, "a delta round trips over {span} ticks");
                    }
                }
            }
            Err(HeldError::Item { shard, cell, .. }) => {
                assert!(items.iter().any(|(s, c, _)| (*s, *c) == (shard, cell)), "the failing cell is in the frame");
            }
            Err(HeldError::Frame(ViewError::Implied)) => {
                assert!(frame.sections().any(|s| s.implied.is_some()), "refused implied cells it has");
            }
            Err(HeldError::Frame(e)) => panic!("a verified frame refused: {e}"),
        }
        if let Err(HeldError::Item { shard, cell, .. }) = lossy.apply(&frame) {
            assert!(items.iter().any(|(s, c, _)| (*s, *c) == (shard, cell)), "the lossy client's failing cell");
        }
        for (_, c) in held.cells().chain(lossy.cells()) {
            assert!(c.entries.len() <= world.max_players, "at most the world's players");
            assert!(c.entries.windows(2).all(|w| w[0].id < w[1].id), "sorted by id");
        }
    }
}

/// Walks a verified frame: its items as (shard, cell, kind), after checking
/// that they lie in order within the frame's bytes and that the frame,
/// written again from them, reads the same.
fn reads_back(bytes: &[u8], frame: &ViewFrame<'_>) -> Vec<(u32, u32, ItemKind)> {
    let mut items = Vec::new();
    let mut rewritten = Vec::new();
    let mut at = bytes.as_ptr() as usize;
    let (frame_start, end) = (at, at + bytes.len());
    for s in frame.sections() {
        let mut cells: Vec<(u32, Vec<&[u8]>)> = Vec::new();
        for c in s.cells() {
            let mut list = Vec::new();
            for i in c.items() {
                let start = i.bytes.as_ptr() as usize;
                if (frame_start..end).contains(&start) {
                    assert!(
                        start >= at && start + i.bytes.len() <= end,
                        "an item within the frame, after the one before"
                    );
                    at = start + i.bytes.len();
                } else {
                    // Said by its cell's reference (no bytes of its own in the frame).
                    let empty_delta = matches!(i.kind, ItemKind::Delta { span } if span <= 32);
                    assert!(
                        empty_delta && i.body.is_empty() && i.bytes.len() == 1,
                        "only an empty delta is said by its reference"
                    );
                }
                assert!(i.bytes.ends_with(i.body), "its body at its end");
                items.push((s.shard, c.cell, i.kind));
                list.push(i.bytes);
            }
            assert!(!list.is_empty(), "a cell has items");
            cells.push((c.cell, list));
        }
        assert_eq!(cells.len(), s.len(), "a section has the cells it says");
        assert!(cells.windows(2).all(|w| w[0].0 < w[1].0), "cells increase");
        write_section(&mut rewritten, &Section { shard: s.shard, tick: u64::from(s.tick), cells: &cells });
    }
    let again = ViewFrame::parse(&rewritten).expect("written again, it verifies");
    let mut kinds = Vec::new();
    for s in again.sections() {
        for c in s.cells() {
            kinds.extend(c.items().map(|i| i.kind));
        }
    }
    assert_eq!(kinds, items.iter().map(|i| i.2).collect::<Vec<_>>(), "written again, it reads the same");
    items
}
