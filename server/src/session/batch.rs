//! A socket's outbound batch: everything it sends for the ticks it has caught
//! up on, written with one flush.
//!
//! A healthy socket never needs one: the fan-out writes each tick's frames
//! straight from the shared [`TickFrame`]. When a socket is blocked for several
//! ticks, its batch keeps every chat and presence frame but only the newest
//! of each shard's players: a newer whole-shard snapshot replaces an unsent
//! older one; with area of interest, an unsent older view frame of the shard
//! keeps only the cells the newer one lacks (rewritten, with its own tick),
//! so a cell sent every 2nd or 4th tick, or a whole view after a keyframe, is
//! not lost while the socket is blocked.

use crate::shard::{FrameKey, TickFrame, ViewFrames};
use crate::ws_frame;
use bytes::Bytes;
use mino_protocol::cell::{FrameSize, FrameStamp};
use mino_protocol::server::{decode, ServerMsg};
use mino_protocol::{ShardId, Tick};

/// Frames for one write. Reused between ticks (its vectors keep their capacity).
#[derive(Debug, Default)]
pub struct Batch {
    roster: Option<Bytes>,
    events: Vec<Bytes>,
    snapshots: Vec<(FrameKey, Bytes)>,
}

impl Batch {
    /// Adds one tick's frames: those for every socket and those of the
    /// socket's `view`. `want_roster` is true until the socket has been
    /// handed a roster; the first roster seen is taken.
    pub fn add(&mut self, frame: &TickFrame, view: &ViewFrames, want_roster: bool) {
        if want_roster && self.roster.is_none() {
            self.roster.clone_from(&frame.roster);
        }
        self.events.extend(frame.events.iter().cloned());
        for (key, bytes) in &view.frames {
            self.add_snapshot(*key, bytes);
        }
    }

    /// Adds one shard's frame: see the module docs.
    fn add_snapshot(&mut self, key: FrameKey, bytes: &Bytes) {
        let Some(mut newer) = view_cells(bytes) else {
            match self.snapshots.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = bytes.clone(),
                None => self.snapshots.push((key, bytes.clone())),
            }
            return;
        };
        newer.sort_unstable();
        self.snapshots.retain_mut(|(k, older)| {
            if *k != key {
                return true;
            }
            match without(older, &newer) {
                Some(rest) => {
                    *older = rest;
                    !older.is_empty()
                }
                None => true,
            }
        });
        self.snapshots.push((key, bytes.clone()));
    }

    /// Adds frames that must not be dropped (chat lines, control frames)
    /// after the events already held.
    pub fn extend_events(&mut self, frames: impl IntoIterator<Item = Bytes>) {
        self.events.extend(frames);
    }

    /// Number of events (frames never dropped) held.
    pub fn events(&self) -> usize {
        self.events.len()
    }

    /// True when the batch holds a roster.
    pub fn has_roster(&self) -> bool {
        self.roster.is_some()
    }

    /// Number of frames in the batch.
    pub fn len(&self) -> usize {
        usize::from(self.roster.is_some()) + self.events.len() + self.snapshots.len()
    }

    /// True when there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes the frames in send order (roster, events, snapshots), leaving the
    /// batch empty for the next tick.
    pub fn drain(&mut self) -> impl Iterator<Item = Bytes> + '_ {
        self.roster.take().into_iter().chain(self.events.drain(..)).chain(self.snapshots.drain(..).map(|(_, b)| b))
    }
}

/// The cells of a websocket-framed view frame; None for any other message.
fn view_cells(framed: &[u8]) -> Option<Vec<u32>> {
    match decode(ws_frame::payload(framed)) {
        Ok(ServerMsg::View(v)) => Some(v.cells().map(|c| c.cell()).collect()),
        _ => None,
    }
}

/// `older` (a websocket-framed view frame) without the cells of `newer`
/// (sorted): None when it keeps them all, empty bytes when it keeps none,
/// else the frame rewritten with the rest under its own stamp. Anything
/// but a view frame is replaced whole (empty bytes).
fn without(older: &[u8], newer: &[u32]) -> Option<Bytes> {
    let Ok(ServerMsg::View(v)) = decode(ws_frame::payload(older)) else { return Some(Bytes::new()) };
    let kept: Vec<(u32, &[u8])> = v
        .cells()
        .filter(|c| newer.binary_search(&c.cell()).is_err())
        .map(|c| (c.cell(), c.players().bytes()))
        .collect();
    if kept.len() == v.cells().count() {
        return None;
    }
    if kept.is_empty() {
        return Some(Bytes::new());
    }
    let h = v.header();
    let stamp = FrameStamp {
        shard: ShardId(h.shard_id()),
        tick: Tick(u64::from(h.tick())),
        server_time_ms: u64::from(h.time_ms()),
    };
    let cells = kept.iter().copied();
    Some(ws_frame::view(&stamp, FrameSize::of(cells.clone()), cells))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::grid::CellId;
    use mino_protocol::cell::ViewEncoder;

    /// A tick's frames: the shared part and one view of keyed frames.
    fn frame(
        tick: u64,
        snaps: &[(u32, &'static str)],
        events: &[&'static str],
        roster: Option<&'static str>,
    ) -> (TickFrame, ViewFrames) {
        let frame = TickFrame {
            tick: Tick(tick),
            events: events.iter().map(|e| Bytes::from_static(e.as_bytes())).collect(),
            roster: roster.map(|r| Bytes::from_static(r.as_bytes())),
            views: Vec::new(),
        };
        let key = |s: u32| FrameKey { shard: ShardId(s), cell: CellId(0) };
        let view =
            ViewFrames { frames: snaps.iter().map(|(s, b)| (key(*s), Bytes::from_static(b.as_bytes()))).collect() };
        (frame, view)
    }

    fn add(b: &mut Batch, (frame, view): (TickFrame, ViewFrames), want_roster: bool) {
        b.add(&frame, &view, want_roster);
    }

    fn strings(b: &mut Batch) -> Vec<String> {
        b.drain().map(|x| String::from_utf8_lossy(&x).into_owned()).collect()
    }

    #[test]
    fn newer_snapshot_replaces_older_but_events_all_stay() {
        let mut b = Batch::default();
        add(&mut b, frame(1, &[(1, "s1t1"), (2, "s2t1")], &["chat1"], None), false);
        add(&mut b, frame(2, &[(1, "s1t2")], &["chat2", "presence"], None), false);
        assert_eq!(b.len(), 5);
        assert_eq!(strings(&mut b), ["chat1", "chat2", "presence", "s1t2", "s2t1"]);
        assert!(b.is_empty());
    }

    /// A websocket-framed view frame of shard 1 at `tick` with `cells`, each
    /// holding one player whose entry bytes are all the cell's low byte.
    fn view_frame(tick: u64, cells: &[u32]) -> (FrameKey, Bytes) {
        let stamp = FrameStamp { shard: ShardId(1), tick: Tick(tick), server_time_ms: tick * 50 };
        let entries: Vec<[u8; 10]> = cells.iter().map(|&c| [c as u8; 10]).collect();
        let payload = ViewEncoder::new().encode(&stamp, cells.iter().zip(&entries).map(|(&c, e)| (c, &e[..]))).to_vec();
        (FrameKey::view(ShardId(1)), ws_frame::binary(&payload))
    }

    /// Each frame drained: its tick and its cells with their first entry byte.
    fn drained(b: &mut Batch) -> Vec<(u32, Vec<(u32, u8)>)> {
        b.drain()
            .map(|f| {
                let Ok(ServerMsg::View(v)) = decode(ws_frame::payload(&f)) else { panic!("a view frame") };
                (v.header().tick(), v.cells().map(|c| (c.cell(), c.players().bytes()[0])).collect())
            })
            .collect()
    }

    #[test]
    fn a_blocked_socket_keeps_every_cell_of_its_older_view_frames_that_a_newer_one_lacks() {
        let mut b = Batch::default();
        let tick = |t: u64, cells: &[u32]| {
            let frame = TickFrame { tick: Tick(t), ..TickFrame::default() };
            (frame, ViewFrames { frames: vec![view_frame(t, cells)] })
        };
        // A keyframe's whole view, then the own cell every tick and a mid
        // cell every 2nd: the far cells 3 and 4 must not be lost.
        add(&mut b, tick(1, &[1, 2, 3, 4]), false);
        add(&mut b, tick(2, &[1]), false);
        add(&mut b, tick(3, &[1, 2]), false);
        assert_eq!(drained(&mut b), [(1, vec![(3, 3), (4, 4)]), (3, vec![(1, 1), (2, 2)])]);
        // Two frames of one shard in one tick (relayed bundles of two of its
        // ticks) are both kept: their cells differ.
        let frame = TickFrame { tick: Tick(9), ..TickFrame::default() };
        let two = ViewFrames { frames: vec![view_frame(41, &[5]), view_frame(40, &[6])] };
        b.add(&frame, &two, false);
        assert_eq!(drained(&mut b), [(41, vec![(5, 5)]), (40, vec![(6, 6)])]);
    }

    #[test]
    fn roster_first_and_only_when_wanted() {
        let mut b = Batch::default();
        add(&mut b, frame(1, &[(1, "s")], &[], Some("roster1")), true);
        add(&mut b, frame(2, &[(1, "s2")], &[], Some("roster2")), true);
        assert_eq!(strings(&mut b), ["roster1", "s2"]);
        add(&mut b, frame(3, &[(1, "s3")], &[], Some("roster3")), false);
        assert_eq!(strings(&mut b), ["s3"]);
    }
}
