//! A deltas view's empty deltas of a tick, as bits over its cells.
//!
//! In a walking place most cells a view is due are advanced by an empty
//! delta (every walker went as predicted: the delta is its tag alone), and a
//! view names itself so that its sections say them as implied cells, a bit
//! each (protocol 7, [`mino_protocol::view::Implied`]). Carried as pieces
//! of the frame, each went through the frame's sort check, the section's
//! cells and the implied rule's walk: most of what a deltas view cost more
//! than a full-form one (66 of a walking view's 85 cells, `delta_cost`).
//! Here they are a bit of a run per source instead, read where the section
//! is written ([`super::views`]); a frame that needs them as pieces (one cut
//! into several messages) or as written cells (a section not written with
//! implied cells, or a delta whose supplements its client needs) takes them
//! back as such, with the same bytes.
//!
//! An empty delta may carry supplements (the players that came into its
//! cell from another, for a client that did not advance that one with it):
//! those are kept beside the bits, as the section decides whether the view
//! needs them, as it would of the piece.

use super::streams::{DeltaRef, SourceId};
use bytes::Bytes;
use mino_protocol::view::{empty_delta_item, write_delta_with, KeptDelta};
use std::sync::LazyLock;

/// One source's empty deltas of a view this tick: all at one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    /// Whose cells.
    pub(crate) source: SourceId,
    /// The step the deltas end at (the section they belong to).
    pub(crate) step: u64,
    /// How many bits are set.
    pub(crate) count: u32,
    /// Its bytes in a frame at most, as pieces: each delta with all its
    /// supplements and a cell's reference (10 bytes at most).
    pub(crate) bytes: usize,
    /// Where its supplemented deltas start in [`Empties::supplemented`].
    first: u32,
}

/// A view's empty deltas this tick: per source, a run of bits over the
/// view's cells (bit `j`: the view's `j`th cell, ascending). Each is the
/// empty delta over its cell's period at the view's rung (what the view
/// is due of a plain pair: see [`is_empty_over`]), so a bit says its item
/// and span; the view's rung does not change while it assembles a frame.
/// Made once a tick (its deltas borrow the tick's streams), its room kept
/// from view to view.
#[derive(Debug, Default)]
pub(crate) struct Empties<'a> {
    /// Words a run's bits take.
    words: usize,
    /// By source, ascending.
    runs: Vec<Run>,
    /// Run `r`'s bits are `bits[r * words..(r + 1) * words]`.
    bits: Vec<u64>,
    /// The bits whose deltas have supplements: (bit, the delta as kept),
    /// run after run, bits ascending.
    supplemented: Vec<(u32, &'a KeptDelta)>,
}

impl<'a> Empties<'a> {
    /// None yet, for a view of `cells` cells.
    pub(crate) fn clear(&mut self, cells: usize) {
        self.words = cells.div_ceil(64);
        self.runs.clear();
        self.bits.clear();
        self.supplemented.clear();
    }

    /// True when there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The runs, by source.
    pub(crate) fn runs(&self) -> &[Run] {
        &self.runs
    }

    /// Run `r`'s bits.
    pub(crate) fn bits(&self, r: usize) -> &[u64] {
        &self.bits[r * self.words..(r + 1) * self.words]
    }

    /// Run `r`'s bits whose deltas have supplements, with the deltas.
    pub(crate) fn supplemented(&self, r: usize) -> &[(u32, &'a KeptDelta)] {
        let end = self.runs.get(r + 1).map_or(self.supplemented.len(), |n| n.first as usize);
        &self.supplemented[self.runs[r].first as usize..end]
    }

    /// Takes `source`'s empty delta `d` of the view's `j`th cell, ending at
    /// `step`. Sources come ascending, and one source's cells ascending.
    /// A source's first empty delta sets its run's step; returns false
    /// (nothing taken) for one ending at another: the caller carries it as
    /// a piece.
    pub(crate) fn add(&mut self, source: SourceId, step: u64, j: usize, d: &DeltaRef<'a>) -> bool {
        // As a piece, it would count this ([`Run::bytes`]).
        let bytes = if d.alone { d.item.len() + 1 } else { d.kept.len() } + 10;
        match self.runs.last_mut() {
            Some(run) if run.source == source => {
                if run.step != step {
                    return false;
                }
                run.count += 1;
                run.bytes += bytes;
            }
            _ => {
                let first = self.supplemented.len() as u32;
                self.runs.push(Run { source, step, count: 1, bytes, first });
                self.bits.resize(self.bits.len() + self.words, 0);
            }
        }
        let at = (self.runs.len() - 1) * self.words + j / 64;
        self.bits[at] |= 1 << (j % 64);
        if !d.alone {
            self.supplemented.push((j as u32, d.kept));
        }
        true
    }
}

/// True when `j`'s bit is set in `bits`.
pub(crate) fn is_set(bits: &[u64], j: usize) -> bool {
    bits.get(j / 64).is_some_and(|w| w & (1 << (j % 64)) != 0)
}

/// The set bits of `bits`, ascending.
pub(crate) fn set_bits(bits: &[u64]) -> impl Iterator<Item = usize> + '_ {
    bits.iter().enumerate().flat_map(|(w, &word)| {
        let mut rest = word;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let b = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Some(w * 64 + b)
        })
    })
}

/// True when `d`, due to a view over `period` ticks, is the empty delta
/// over that period (with supplements or none): what [`Empties`] carries
/// as a bit.
pub(crate) fn is_empty_over(d: &DeltaRef<'_>, period: u32) -> bool {
    d.span == Some(period) && d.item == empty_delta_item(period)
}

/// The empty delta over `period` ticks as its stream would keep it (for a
/// frame that takes an [`Empties`] bit back as a piece).
pub(crate) fn lone_empty(period: u32) -> DeltaRef<'static> {
    static KEPT: LazyLock<Vec<KeptDelta>> = LazyLock::new(|| {
        (0..7)
            .map(|k| {
                let mut bytes = Vec::new();
                write_delta_with(&mut bytes, empty_delta_item(1 << k), &[]);
                KeptDelta::new(Bytes::from(bytes))
            })
            .collect()
    });
    let k = (period.trailing_zeros() as usize).min(KEPT.len() - 1);
    DeltaRef::of(&KEPT[k])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_take_one_step_a_source_and_read_back_their_bits() {
        let kept = KeptDelta::new(Bytes::from_static(&[0, 4]));
        let alone = lone_empty(8);
        let with = DeltaRef { alone: false, kept: &kept, ..alone };
        let mut e = Empties::default();
        e.clear(130);
        assert!(e.add(0, 8, 3, &alone) && e.add(0, 8, 64, &with) && e.add(0, 8, 129, &alone));
        assert!(!e.add(0, 6, 5, &with), "another step of the same source is a piece");
        assert!(e.add(2, 7, 0, &with));
        assert_eq!(
            e.runs(),
            [
                Run { source: 0, step: 8, count: 3, bytes: 2 * 12 + with.kept.len() + 10, first: 0 },
                Run { source: 2, step: 7, count: 1, bytes: with.kept.len() + 10, first: 1 }
            ]
        );
        assert_eq!(e.supplemented(0).iter().map(|&(j, _)| j).collect::<Vec<_>>(), [64]);
        assert_eq!(e.supplemented(1).iter().map(|&(j, _)| j).collect::<Vec<_>>(), [0]);
        assert_eq!(set_bits(e.bits(0)).collect::<Vec<_>>(), [3, 64, 129]);
        assert_eq!(set_bits(e.bits(1)).collect::<Vec<_>>(), [0]);
        assert!(is_set(e.bits(0), 64) && !is_set(e.bits(0), 5) && !is_set(e.bits(0), 500));
        e.clear(10);
        assert!(e.is_empty());
    }

    #[test]
    fn the_kept_empty_delta_is_the_streams_lone_empty_delta() {
        for k in 0..7 {
            let period = 1 << k;
            let d = lone_empty(period);
            assert!(d.alone && is_empty_over(&d, period), "period {period}");
            assert!(!is_empty_over(&d, period * 2), "period {period} is not {}", period * 2);
        }
    }
}
