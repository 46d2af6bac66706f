//! A socket's outbound batch: everything it sends for the ticks it has caught
//! up on, written with one flush.
//!
//! A healthy socket never needs one: the fan-out writes each tick's frames
//! straight from the shared [`TickFrame`]. When a socket is blocked for
//! several ticks, its batch keeps every chat and presence frame, and every
//! view frame in order: a view frame's deltas apply to what the frames
//! before it left, so none may be skipped or merged. Past
//! [`MAX_PENDING_VIEWS`] the view frames are dropped at once and the socket
//! is marked for a **resync**: the core then sends its view anew (every
//! shard's cells reset, then sent whole as they come due), so it never holds
//! a position it was not sent.

use crate::shard::{TickFrame, ViewFrames};
use bytes::Bytes;

/// View frames a blocked socket may have waiting (3.2 s of ticks at 20 Hz)
/// before they are dropped and the socket resynced.
pub const MAX_PENDING_VIEWS: usize = 64;

/// Frames for one write. Reused between ticks (its vectors keep their capacity).
#[derive(Debug, Default)]
pub struct Batch {
    roster: Option<Bytes>,
    events: Vec<Bytes>,
    views: Vec<Bytes>,
    /// View frames were dropped since the last [`Batch::take_resync`].
    dropped: bool,
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
        self.views.extend(view.frames.iter().cloned());
        if self.views.len() > MAX_PENDING_VIEWS {
            self.views.clear();
            self.dropped = true;
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

    /// True once if view frames were dropped since the last call: the socket
    /// needs a resync.
    pub fn take_resync(&mut self) -> bool {
        std::mem::take(&mut self.dropped)
    }

    /// Number of frames in the batch.
    pub fn len(&self) -> usize {
        usize::from(self.roster.is_some()) + self.events.len() + self.views.len()
    }

    /// True when there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes the frames in send order (roster, events, view frames), leaving
    /// the batch empty for the next tick.
    pub fn drain(&mut self) -> impl Iterator<Item = Bytes> + '_ {
        self.roster.take().into_iter().chain(self.events.drain(..)).chain(self.views.drain(..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::Tick;

    /// A tick's frames: the shared part and one view's frames.
    fn frame(
        tick: u64,
        views: &[&'static str],
        events: &[&'static str],
        roster: Option<&'static str>,
    ) -> (TickFrame, ViewFrames) {
        let frame = TickFrame {
            tick: Tick(tick),
            events: events.iter().map(|e| Bytes::from_static(e.as_bytes())).collect(),
            roster: roster.map(|r| Bytes::from_static(r.as_bytes())),
            ..TickFrame::default()
        };
        let view = ViewFrames { frames: views.iter().map(|b| Bytes::from_static(b.as_bytes())).collect() };
        (frame, view)
    }

    fn add(b: &mut Batch, (frame, view): (TickFrame, ViewFrames), want_roster: bool) {
        b.add(&frame, &view, want_roster);
    }

    fn strings(b: &mut Batch) -> Vec<String> {
        b.drain().map(|x| String::from_utf8_lossy(&x).into_owned()).collect()
    }

    #[test]
    fn a_blocked_socket_keeps_every_event_and_every_view_frame_in_order() {
        let mut b = Batch::default();
        add(&mut b, frame(1, &["v1"], &["chat1"], None), false);
        add(&mut b, frame(2, &["v2a", "v2b"], &["chat2", "presence"], None), false);
        assert_eq!(b.len(), 6);
        assert_eq!(strings(&mut b), ["chat1", "chat2", "presence", "v1", "v2a", "v2b"]);
        assert!(b.is_empty() && !b.take_resync());
    }

    #[test]
    fn too_many_view_frames_are_dropped_and_the_socket_resynced_events_kept() {
        let mut b = Batch::default();
        for t in 0..=MAX_PENDING_VIEWS as u64 {
            add(&mut b, frame(t, &["view"], &[], None), false);
        }
        add(&mut b, frame(99, &["after"], &["chat"], None), false);
        assert!(b.take_resync(), "the socket must be sent its view anew");
        assert!(!b.take_resync(), "once");
        assert_eq!(strings(&mut b), ["chat", "after"]);
    }

    #[test]
    fn roster_first_and_only_when_wanted() {
        let mut b = Batch::default();
        add(&mut b, frame(1, &["s"], &[], Some("roster1")), true);
        add(&mut b, frame(2, &["s2"], &[], Some("roster2")), true);
        assert_eq!(strings(&mut b), ["roster1", "s", "s2"]);
        add(&mut b, frame(3, &["s3"], &[], Some("roster3")), false);
        assert_eq!(strings(&mut b), ["s3"]);
    }
}
