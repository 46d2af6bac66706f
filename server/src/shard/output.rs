//! What the core hands back to its driver: the frames of a tick for every
//! socket, what to publish, and the [`Effect`]s to carry out.

use super::grid::RegionId;
use super::links::LinkId;
use crate::close::CloseReason;
use crate::metrics::{DropKind, RepairKind};
use crate::resume::Ticket;
use bytes::Bytes;
use mino_protocol::{PlayerId, Tick};
use std::sync::Arc;

/// The view frames one view's sockets get in a tick: websocket-framed, the
/// same bytes for every socket of the view; usually one message, none when
/// nothing is new, several when one would be over the client's limit.
#[derive(Debug, Default)]
pub struct ViewFrames {
    /// The messages, in order: every one must be delivered (a socket that
    /// cannot take them is resynced, see `session::batch`).
    pub frames: Vec<Bytes>,
}

/// The sockets whose view has frames this tick, with their view (an index
/// into [`TickFrame::views`]), sorted by link. Every other socket's view has
/// nothing this tick, so the fan-out visits only these (and the sockets with
/// something of their own to write): a standing crowd's sockets cost it
/// nothing.
#[derive(Debug, Default)]
pub struct Recipients {
    /// (link, view), sorted by link.
    links: Vec<(LinkId, u32)>,
}

impl Recipients {
    /// From (link, view) pairs in any order.
    pub fn new(mut links: Vec<(LinkId, u32)>) -> Recipients {
        links.sort_unstable_by_key(|(link, _)| *link);
        Recipients { links }
    }

    /// The view of `link`, if its view has frames this tick. O(log n).
    pub fn view_of(&self, link: LinkId) -> Option<usize> {
        let i = self.links.binary_search_by_key(&link, |(l, _)| *l).ok()?;
        Some(self.links[i].1 as usize)
    }

    /// Every (link, view), sorted by link.
    pub fn iter(&self) -> impl Iterator<Item = (LinkId, usize)> + '_ {
        self.links.iter().map(|&(link, view)| (link, view as usize))
    }

    /// How many sockets get view frames this tick.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// True when no socket gets a view frame this tick.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }
}

/// What the sockets of the shard receive for one tick: websocket frames,
/// each encoded once. Nothing in it is per socket: a socket gets the frames
/// for every socket plus those of its view group ([`TickFrame::recipients`]),
/// and the fan-out writes those exact bytes.
#[derive(Debug, Default)]
pub struct TickFrame {
    /// The tick these frames belong to.
    pub tick: Tick,
    /// Chat and presence frames in order, for every socket. Never skipped for
    /// a healthy socket.
    pub events: Vec<Bytes>,
    /// All present players, when someone joined since the last tick; a new
    /// socket sends the first roster it sees, once.
    pub roster: Option<Bytes>,
    /// The view frames of each view ([`super::Shard::view_of`]).
    pub views: Vec<ViewFrames>,
    /// Who gets which view's frames; every other socket gets none.
    pub recipients: Recipients,
}

impl TickFrame {
    /// The frames of `link`'s view this tick (none for a socket not among
    /// the [`TickFrame::recipients`]).
    pub fn view_frames(&self, link: LinkId) -> &[Bytes] {
        self.view(link).map_or(&[], |v| &v.frames[..])
    }

    /// `link`'s view this tick, if it is among the recipients.
    pub fn view(&self, link: LinkId) -> Option<&ViewFrames> {
        self.recipients.view_of(link).and_then(|v| self.views.get(v))
    }

    /// True when the tick has nothing for every socket (no event, no
    /// roster): only [`TickFrame::recipients`] get anything from it.
    pub fn is_quiet(&self) -> bool {
        self.events.is_empty() && self.roster.is_none()
    }
}

/// Everything one tick produced besides its [`Effect`]s.
#[derive(Debug)]
pub struct TickOutput {
    /// For every socket.
    pub frame: TickFrame,
    /// This shard's own whole-shard snapshot, to publish to the other shards
    /// (clustered and not fenced; with area of interest, only kept in Redis
    /// for resumes).
    pub publish_snapshot: Option<Bytes>,
    /// Clustered and not fenced: this tick's own cells' items (every cell's
    /// full form and deltas, `CellBundle.cell_items`), by region, to publish as
    /// region bundles.
    pub publish_cells: Vec<(RegionId, Bytes)>,
    /// This shard's step at the tick (the bundles carry it).
    pub step: u64,
    /// Scheduled ticks skipped since the previous tick ran (never replayed).
    pub skipped: u64,
    /// Age of each relayed snapshot in the frame (now minus its tick's time), ms.
    pub relay_lag_ms: Vec<u64>,
    /// Views whose frames the tick assembled: a view whose cells did not
    /// change and that holds nothing out of the ordinary is skipped, so a
    /// standing place assembles none.
    pub views_assembled: usize,
}

/// A welcome for an admitted player.
#[derive(Debug)]
pub struct Admitted {
    /// The new player's id.
    pub player: PlayerId,
    /// The encoded Welcome frame.
    pub welcome: Bytes,
    /// The resume ticket carried in the welcome.
    pub ticket: Ticket,
    /// The link the driver files the socket under.
    pub link: LinkId,
    /// Where the player stands as it is welcomed, world units.
    pub position: (f32, f32),
}

/// A frame of this shard to publish, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// A chat frame, for the chat channel.
    Chat(Bytes),
    /// A player left this shard (disconnected, or told to move) at `(x, y)`:
    /// kept in its session, so a resume elsewhere finds it in place even when
    /// this shard's last snapshot no longer lists it.
    Park {
        /// Who.
        player: PlayerId,
        /// Where, world units.
        x: f32,
        /// Where, world units.
        y: f32,
        /// The session's generation this shard held it at: parked only while
        /// the session is still this shard's at that generation (a park
        /// that lands after another shard claimed the player would leave
        /// its resume a stale position, hundreds of units off).
        generation: u64,
    },
    /// A presence frame, for the presence channel, with its delta: the
    /// publisher applies the delta to this shard's players hash in the same
    /// MULTI as the PUBLISH, so the hash is never behind what was published.
    Presence {
        /// The frame.
        bytes: Bytes,
        /// Its presence sequence number.
        seq: u64,
        /// Players that joined, with names.
        joined: Vec<(PlayerId, Arc<str>)>,
        /// Players that left.
        left: Vec<PlayerId>,
    },
}

/// What the core tells one session, through the driver.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    /// Close with this reason (session replaced, dropped after a pause).
    Close(CloseReason),
    /// Draining: send Move with this fresh ticket, then close.
    Move(Ticket),
    /// An operator kicked the player: close with 4040, the Error carrying
    /// this reason.
    Kick(Arc<str>),
}

/// Something for the driver to do, in the order the core asked.
#[derive(Debug, PartialEq)]
pub enum Effect {
    /// Tell the session behind `link`.
    Tell {
        /// Which socket.
        link: LinkId,
        /// What.
        control: Control,
    },
    /// Publish a frame (clustered), after the ones asked before it.
    Publish(Outgoing),
    /// The shard fenced itself: ask Redis which of `players` (with the session
    /// generation held here) were resumed elsewhere, and answer with
    /// [`super::ClusterEvent::Verified`].
    Fence {
        /// Every present player and its generation.
        players: Vec<(PlayerId, u64)>,
    },
    /// The ownership check answered: publishing resumes.
    Unfence,
    /// Anti-entropy: ask Redis which of `players` (with the session
    /// generation held here) another shard owns now, and answer with
    /// [`super::ClusterEvent::Audited`]. Asked every [`super::AUDIT_INTERVAL`].
    Audit {
        /// Every present player and its generation.
        players: Vec<(PlayerId, u64)>,
    },
    /// Anti-entropy repaired `n` things of a kind (counted).
    Repaired(RepairKind, u64),
    /// Fetch another block of player ids (clustered, running low).
    NeedIds,
    /// With area of interest: the regions whose cells this shard must
    /// hear from now (all of them; subscribe and unsubscribe the difference).
    Regions(Vec<RegionId>),
    /// The drain emptied the shard.
    Drained,
    /// An operator ordered this shard to drain (the driver starts the drain
    /// as SIGTERM would).
    DrainOrdered,
    /// Frames dropped on the way to Redis, counted by kind.
    Dropped(DropKind, u64),
}
