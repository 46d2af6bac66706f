//! A socket's outbound batch: everything it sends for the ticks it has caught
//! up on, written with one flush.
//!
//! A healthy socket never needs one: the fan-out writes each tick's frames
//! straight from the shared [`TickFrame`]. When a socket is blocked for several
//! ticks, its batch keeps every chat and presence frame but only the newest
//! snapshot of each shard: a newer snapshot replaces an unsent older one.

use crate::shard::{FrameKey, TickFrame, ViewFrames};
use bytes::Bytes;

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
            match self.snapshots.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = bytes.clone(),
                None => self.snapshots.push((*key, bytes.clone())),
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::grid::CellId;
    use mino_protocol::{ShardId, Tick};

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
