//! Who sees what: each admitted socket's viewer cell, with hysteresis (its
//! view **key**), the form of frame it takes, and the view it is in
//! ([`super::views`]).
//!
//! **Hysteresis.** When a player walks into another cell, the cell it left
//! stays its second viewer cell for [`Viewers::hysteresis`] ticks: the view is
//! the union of both cells' views meanwhile, so a player walking back and
//! forth over a border does not make cells drop out of view and come back
//! (the Unreal Iris grid filter keeps a cell the viewer left for 2 frames;
//! mino's default is 10 ticks, 0.5 s). A walker covers at most one cell in
//! that time as long as the cell is at least top speed × hysteresis wide,
//! which the configuration checks, so it never skips a cell.

use super::grid::{CellId, Grid};
use super::links::LinkId;
use crate::sim::World;
use mino_protocol::client::Capabilities;
use mino_protocol::PlayerId;
use std::collections::HashMap;

/// A view's key: the viewer cell and the cell still seen after it was left
/// (`CellId(0)`: none).
pub(crate) type GroupKey = (CellId, CellId);

/// What a socket's frames carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// Deltas against what the socket holds (the Hello asked for them).
    Deltas,
    /// Every cell it is due as a full form.
    Full,
    /// Full forms of the cells that changed, each sent at its due steps for
    /// [`REPEATS`] due steps after its last change (a cell of walkers: every
    /// due step; a still cell: nothing once repeated), and every cell of the
    /// view again once every [`REFRESH_STEPS`]: for a transport that may
    /// lose a frame (WebTransport datagrams), where every frame must stand
    /// alone, yet a standing place should cost (almost) nothing.
    Datagram,
    /// Deltas over datagrams (a WebTransport client granted
    /// `DatagramDeltas`): a deltas view's items with an unchanged item
    /// before a delta whose cell last changed before the delta's base, every
    /// supplement (its client hands no walker off), a cell told by an
    /// empty delta alone implied where that is shorter (as a websocket's), an
    /// empty cell sent whole before any delta of it, and the datagram form's
    /// repeats (empty deltas here), refreshes, forgets and resets, since its
    /// frames may be lost; its client checks each delta's base
    /// (`mino_protocol::held::Delivery::Lossy`) and asks for a resync when a
    /// change was missed.
    DatagramDeltas,
}

/// Due steps a cell's full form is sent again after it last changed, for
/// [`Form::Datagram`]: a change is lost only when all of them are (at 2 %
/// random loss, 1 in 125,000), and the position a lost stop leaves is at
/// most that many steps of walking off until the next refresh.
pub const REPEATS: u32 = 3;

/// Due steps after a cell's last change over which it is repeated, for
/// [`Form::DatagramDeltas`]: an empty delta at the 1st, 2nd, 4th and 8th of
/// them while the cell stays still (`shard::views`' `repeats_change`). A
/// client that lost the change finds out at the first of them it gets (its
/// base is a step the client does not hold) and asks for a resync; a change
/// is missed for good (until the view's refresh) only when all four are
/// lost too (at 2 % random loss, 1 in 3 x 10^8; at 20 %, 1 in 3,000),
/// and a burst must last 8 due steps to hide it. An empty delta is a byte,
/// with its cell and unchanged item about 5: eight in a row, as first
/// built, came to 8 % more bytes in the shard core test's walking place
/// (`a_datagram_deltas_socket_that_loses_frames_holds_only_true_states_and_resyncs_mend_it`).
pub const DELTA_REPEAT_STEPS: u32 = 8;

/// Steps between two refreshes of a cell for a [`Form::Datagram`] view
/// (sent whole, whatever changed), 64 (3.2 s at 20 Hz): the longest a cell
/// stays wrong after every repeat of its last change was lost. A view that
/// is looked at refreshes each cell at the cell's own turn (its period-64
/// due step); a view of a standing place, looked at only then, refreshes
/// all its cells at its turn: view `i` on steps where `step % 64 == i % 64`.
pub const REFRESH_STEPS: u64 = 64;

/// Refreshes a [`Form::Datagram`] client waits for a held cell before it
/// drops it: 4, so a cell is dropped 12.8 s (at 20 Hz) after the last thing
/// sent of it. A cell in the view is sent whole at least every
/// [`REFRESH_STEPS`], so one sent nothing for 4 of them has left the view
/// (its forgets were all lost) or belongs to a shard that left the place
/// (its resets were all lost); a cell still in view is dropped wrongly only
/// when 4 refreshes in a row were lost (at 2 % loss, independent, 1 in 6
/// million; bursts make it likelier) or the shard's ticks ran over 4 times
/// slower than their rate for that long (the client's clock is wall time),
/// and comes back at the next refresh.
pub const EXPIRY_REFRESHES: u64 = 4;

/// How a socket's frames travel to its client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carrier {
    /// In order, nothing lost (a websocket; a WebTransport stream).
    Stream,
    /// As datagrams that may be lost or reordered (WebTransport).
    Datagrams,
}

impl Form {
    /// The form of a socket whose Hello asked for `asked` and whose frames
    /// travel by `carrier`, and what of `asked` it is granted: deltas over
    /// datagrams need both capabilities (a client that checks each delta's
    /// base), else datagrams take [`Form::Datagram`] and no deltas; a stream
    /// takes no datagram deltas.
    pub fn of(asked: Capabilities, carrier: Carrier) -> (Form, Capabilities) {
        let both = Capabilities(Capabilities::DELTAS.0 | Capabilities::DATAGRAM_DELTAS.0);
        let deltas = asked.contains(Capabilities::DELTAS);
        match carrier {
            Carrier::Datagrams if asked.contains(both) => (Form::DatagramDeltas, asked),
            Carrier::Datagrams => (Form::Datagram, Capabilities(asked.0 & !both.0)),
            Carrier::Stream => {
                let granted = Capabilities(asked.0 & !Capabilities::DATAGRAM_DELTAS.0);
                (if deltas { Form::Deltas } else { Form::Full }, granted)
            }
        }
    }

    /// True for the forms whose frames may be lost (datagrams): forgets and
    /// resets are told several times, cells refreshed, and cells expire.
    pub fn lossy(self) -> bool {
        matches!(self, Form::Datagram | Form::DatagramDeltas)
    }

    /// True for the forms that send deltas.
    pub fn deltas(self) -> bool {
        matches!(self, Form::Deltas | Form::DatagramDeltas)
    }

    /// How long its client keeps a cell it is sent nothing of, ms, at
    /// `tick_hz` (the Welcome's `cell_expiry_ms`): [`EXPIRY_REFRESHES`]
    /// refreshes for [`Form::Datagram`]; 0 (until forgotten) for the
    /// others, whose frames all arrive, so a forget is never lost (and a
    /// still cell is sent nothing for good).
    pub fn cell_expiry_ms(self, tick_hz: u16) -> u32 {
        match self {
            Form::Datagram | Form::DatagramDeltas => {
                let ms = EXPIRY_REFRESHES * REFRESH_STEPS * 1000 / u64::from(tick_hz.max(1));
                u32::try_from(ms).unwrap_or(u32::MAX)
            }
            Form::Deltas | Form::Full => 0,
        }
    }
}

/// Why a socket needs a view made for it this tick, whatever its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Fresh {
    /// Just admitted: it holds nothing.
    Joined,
    /// Its frames were dropped (blocked too long): it holds what it can no
    /// longer be sure of, so every shard's cells are reset and sent whole.
    Resync,
    /// Its client asked for its view whole ([`Form::DatagramDeltas`]: a
    /// datagram lost): every cell is sent whole at its next due step, as
    /// to a joiner, with nothing dropped first (the client keeps drawing
    /// what it holds meanwhile).
    Refill,
}

/// The viewer cells of one socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Viewer {
    player: PlayerId,
    cell: CellId,
    /// The cell left last, while it is still seen (`CellId(0)`: none).
    previous: CellId,
    /// The tick until which `previous` is seen.
    until: u64,
    form: Form,
    /// Its view (an index of [`super::views::Views`]), once placed.
    view: Option<u32>,
    fresh: Option<Fresh>,
}

/// A socket that needs another view this tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Move {
    /// Which socket.
    pub(crate) link: LinkId,
    /// The view it was in (`None`: none yet).
    pub(crate) from: Option<u32>,
    /// Its key now.
    pub(crate) key: GroupKey,
    /// Its form.
    pub(crate) form: Form,
    /// Why it needs a view of its own, whatever its key.
    pub(crate) fresh: Option<Fresh>,
}

/// Every socket's viewer state.
#[derive(Debug)]
pub(crate) struct Viewers {
    hysteresis: u64,
    /// Each socket's viewer. A player's socket is found through the
    /// shard's links (`update`'s `link_of`): a map of its own here cost 37
    /// bytes a socket.
    by_link: HashMap<LinkId, Viewer>,
    /// Sockets to look at in the next update whatever their player did:
    /// new, resynced, or still seeing a cell they left.
    attention: Vec<LinkId>,
}

impl Viewers {
    /// Viewers that keep a cell they left for `hysteresis` ticks.
    pub(crate) fn new(hysteresis: u64) -> Viewers {
        Viewers { hysteresis, by_link: HashMap::new(), attention: Vec::new() }
    }

    /// Sockets with a viewer.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_link.len()
    }

    /// The socket `link` of `player` is admitted, taking frames of `form` (a
    /// resumed player starts with no previous cell: its view is where it
    /// stands now).
    pub(crate) fn add(&mut self, link: LinkId, player: PlayerId, form: Form) {
        let viewer = Viewer {
            player,
            cell: CellId(0),
            previous: CellId(0),
            until: 0,
            form,
            view: None,
            fresh: Some(Fresh::Joined),
        };
        self.by_link.insert(link, viewer);
        self.attention.push(link);
    }

    /// The socket `link` is gone; returns the view it was in.
    pub(crate) fn remove(&mut self, link: LinkId) -> Option<u32> {
        self.by_link.remove(&link)?.view
    }

    /// The client of socket `link` asked for its view whole (it takes
    /// [`Form::DatagramDeltas`]; any other form's ask does nothing); true
    /// when taken.
    pub(crate) fn refill(&mut self, link: LinkId) -> bool {
        let Some(v) = self.by_link.get_mut(&link).filter(|v| v.form == Form::DatagramDeltas) else { return false };
        if v.fresh.is_none() {
            v.fresh = Some(Fresh::Refill);
            self.attention.push(link);
        }
        true
    }

    /// The socket `link` lost frames: it starts over at the next tick.
    pub(crate) fn resync(&mut self, link: LinkId) {
        if let Some(v) = self.by_link.get_mut(&link) {
            if v.fresh.is_none() {
                v.fresh = Some(Fresh::Resync);
                self.attention.push(link);
            }
        }
    }

    /// Moves every viewer to the cell its player stands in at `tick` and
    /// returns the sockets whose key changed (or that need a fresh view).
    /// Looks only at the sockets of `crossed` (the players that may stand in
    /// another cell since the last update, see
    /// [`super::own::OwnCells::crossed`]; `link_of` names a player's socket,
    /// the shard's [`super::links::Links::link`]) and those needing attention: a
    /// standing player's socket costs nothing. A socket whose player is not
    /// in `world` is left as it is.
    pub(crate) fn update(
        &mut self,
        tick: u64,
        grid: &Grid,
        world: &World,
        crossed: &[PlayerId],
        link_of: impl Fn(PlayerId) -> Option<LinkId>,
        moves: &mut Vec<Move>,
    ) {
        moves.clear();
        let mut look = std::mem::take(&mut self.attention);
        look.extend(crossed.iter().filter_map(|&p| link_of(p)));
        look.sort_unstable();
        look.dedup();
        for link in look {
            let Some(viewer) = self.by_link.get_mut(&link) else { continue };
            let Some(p) = world.player(viewer.player) else { continue };
            let cell = grid.cell_of_q(p.x, p.y);
            let before = (viewer.cell, viewer.previous);
            if cell != viewer.cell {
                if viewer.cell != CellId(0) {
                    (viewer.previous, viewer.until) = (viewer.cell, tick + self.hysteresis);
                }
                viewer.cell = cell;
            }
            if viewer.previous == cell || tick >= viewer.until {
                viewer.previous = CellId(0);
            }
            let key = (viewer.cell, viewer.previous);
            let fresh = viewer.fresh.take();
            if key != before || fresh.is_some() || viewer.view.is_none() {
                moves.push(Move { link, from: viewer.view, key, form: viewer.form, fresh });
            }
            if viewer.previous != CellId(0) {
                self.attention.push(link);
            }
        }
    }

    /// Puts `link` in view `view`.
    pub(crate) fn place(&mut self, link: LinkId, view: u32) {
        if let Some(v) = self.by_link.get_mut(&link) {
            v.view = Some(view);
        }
    }

    /// Moves every socket of a view to another: `remap[view]` when set.
    pub(crate) fn remap(&mut self, remap: &[u32]) {
        for v in self.by_link.values_mut() {
            if let Some(to) = v.view.and_then(|i| remap.get(i as usize)).filter(|&&to| to != u32::MAX) {
                v.view = Some(*to);
            }
        }
    }

    /// The view of `link`.
    pub(crate) fn view_of(&self, link: LinkId) -> Option<u32> {
        self.by_link.get(&link).and_then(|v| v.view)
    }

    /// Every placed socket and its view.
    pub(crate) fn placed(&self) -> impl Iterator<Item = (LinkId, u32)> + '_ {
        self.by_link.iter().filter_map(|(&link, v)| Some((link, v.view?)))
    }

    /// The key of `link`.
    #[cfg(test)]
    pub(crate) fn key_of(&self, link: LinkId) -> Option<GroupKey> {
        self.by_link.get(&link).map(|v| (v.cell, v.previous))
    }
}

/// Tests only: the tests' sockets, player n's being link n (what
/// [`Viewers::update`]'s `link_of` is in place of the shard's links).
#[cfg(test)]
pub(crate) fn test_link_of(p: PlayerId) -> Option<LinkId> {
    Some(LinkId(u64::from(p.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::client::Direction;
    use mino_protocol::wire::Bounds;

    #[test]
    fn deltas_over_datagrams_need_both_capabilities_and_a_stream_takes_none() {
        let (deltas, datagram) = (Capabilities::DELTAS, Capabilities::DATAGRAM_DELTAS);
        let both = Capabilities(deltas.0 | datagram.0);
        let none = Capabilities::NONE;
        assert_eq!(Form::of(both, Carrier::Datagrams), (Form::DatagramDeltas, both));
        assert_eq!(Form::of(deltas, Carrier::Datagrams), (Form::Datagram, none), "no deltas a client cannot check");
        assert_eq!(Form::of(datagram, Carrier::Datagrams), (Form::Datagram, none));
        assert_eq!(Form::of(both, Carrier::Stream), (Form::Deltas, deltas));
        assert_eq!(Form::of(datagram, Carrier::Stream), (Form::Full, none));
        assert!(Form::DatagramDeltas.lossy() && Form::DatagramDeltas.deltas());
        assert!(!Form::Deltas.lossy() && !Form::Datagram.deltas());
    }

    #[test]
    fn only_a_datagram_client_drops_cells_after_four_refreshes() {
        assert_eq!(Form::Datagram.cell_expiry_ms(20), 12_800, "4 x 64 ticks of 50 ms");
        assert_eq!(Form::DatagramDeltas.cell_expiry_ms(20), 12_800);
        assert_eq!(Form::Datagram.cell_expiry_ms(60), 4_266);
        assert_eq!(Form::Datagram.cell_expiry_ms(0), 256_000, "a tick rate of 0 is taken as 1 Hz");
        assert_eq!((Form::Deltas.cell_expiry_ms(20), Form::Full.cell_expiry_ms(20)), (0, 0));
    }

    fn setup() -> (Grid, World, Viewers) {
        let bounds = Bounds::new(0.0, 0.0, 1000.0, 1000.0);
        let mut world = World::new(bounds, 100.0, 20);
        world.add(PlayerId(1), "a".into(), 150.0, 150.0);
        let mut viewers = Viewers::new(10);
        viewers.add(LinkId(1), PlayerId(1), Form::Deltas);
        (Grid::new(&bounds, 100.0).expect("grid"), world, viewers)
    }

    #[test]
    fn a_new_socket_moves_once_then_stays() {
        let (grid, world, mut viewers) = setup();
        let mut moves = Vec::new();
        viewers.update(1, &grid, &world, &[], test_link_of, &mut moves);
        assert_eq!(moves.len(), 1);
        assert_eq!((moves[0].from, moves[0].fresh), (None, Some(Fresh::Joined)));
        viewers.place(LinkId(1), 0);
        viewers.update(2, &grid, &world, &[], test_link_of, &mut moves);
        assert!(moves.is_empty());
        viewers.resync(LinkId(1));
        viewers.update(3, &grid, &world, &[], test_link_of, &mut moves);
        assert_eq!((moves[0].from, moves[0].fresh), (Some(0), Some(Fresh::Resync)));
    }

    #[test]
    fn a_resync_asked_by_a_datagram_deltas_client_refills_its_view_and_by_another_does_nothing() {
        let (grid, mut world, mut viewers) = setup();
        world.add(PlayerId(2), "b".into(), 150.0, 150.0);
        viewers.add(LinkId(2), PlayerId(2), Form::DatagramDeltas);
        let link_of = |p: PlayerId| Some(LinkId(u64::from(p.0)));
        let mut moves = Vec::new();
        viewers.update(1, &grid, &world, &[], link_of, &mut moves);
        viewers.place(LinkId(1), 0);
        viewers.place(LinkId(2), 1);
        assert!(!viewers.refill(LinkId(1)), "a deltas socket's ask is not taken");
        assert!(viewers.refill(LinkId(2)) && viewers.refill(LinkId(2)));
        viewers.update(2, &grid, &world, &[], link_of, &mut moves);
        let moved: Vec<_> = moves.iter().map(|m| (m.link, m.from, m.fresh)).collect();
        assert_eq!(moved, vec![(LinkId(2), Some(1), Some(Fresh::Refill))], "once, the deltas socket not at all");
    }

    #[test]
    fn a_left_cell_stays_in_view_for_the_hysteresis_then_goes() {
        let (grid, mut world, mut viewers) = setup();
        let mut moves = Vec::new();
        viewers.update(1, &grid, &world, &[], test_link_of, &mut moves);
        viewers.place(LinkId(1), 0);
        let first = grid.cell_of(150.0, 150.0);
        world.set_direction(PlayerId(1), Direction::new(1.0, 0.0).expect("dir"), 0);
        world.walk_for(0.6); // 60 units: into the next cell
        viewers.update(2, &grid, &world, &[PlayerId(1)], test_link_of, &mut moves);
        let next = grid.cell_of(210.0, 150.0);
        assert_eq!(viewers.key_of(LinkId(1)), Some((next, first)));
        assert_eq!(moves.len(), 1, "the key changed");
        viewers.update(11, &grid, &world, &[], test_link_of, &mut moves);
        assert_eq!(viewers.key_of(LinkId(1)), Some((next, first)));
        viewers.update(12, &grid, &world, &[], test_link_of, &mut moves);
        assert_eq!(viewers.key_of(LinkId(1)), Some((next, CellId(0))));
        assert_eq!(moves.len(), 1, "the key changed again");
    }

    #[test]
    fn walking_back_into_the_left_cell_is_not_a_second_cell() {
        let (grid, mut world, mut viewers) = setup();
        let mut moves = Vec::new();
        viewers.update(1, &grid, &world, &[], test_link_of, &mut moves);
        world.set_direction(PlayerId(1), Direction::new(1.0, 0.0).expect("dir"), 0);
        world.walk_for(0.6);
        viewers.update(2, &grid, &world, &[PlayerId(1)], test_link_of, &mut moves);
        world.set_direction(PlayerId(1), Direction::new(-1.0, 0.0).expect("dir"), 0);
        world.walk_for(0.6);
        viewers.update(3, &grid, &world, &[PlayerId(1)], test_link_of, &mut moves);
        let key = (grid.cell_of(150.0, 150.0), grid.cell_of(210.0, 150.0));
        assert_eq!(viewers.key_of(LinkId(1)), Some(key), "now the other one is the left cell");
    }

    #[test]
    fn only_the_sockets_of_crossed_players_and_those_needing_attention_are_looked_at() {
        let (grid, mut world, mut viewers) = setup();
        let mut moves = Vec::new();
        viewers.update(1, &grid, &world, &[], test_link_of, &mut moves);
        viewers.place(LinkId(1), 0);
        world.set_direction(PlayerId(1), Direction::new(1.0, 0.0).expect("dir"), 0);
        world.walk_for(0.6);
        viewers.update(2, &grid, &world, &[PlayerId(2)], test_link_of, &mut moves);
        assert!(moves.is_empty(), "not among the crossed: its socket is not even looked at");
        viewers.update(3, &grid, &world, &[PlayerId(1)], test_link_of, &mut moves);
        assert_eq!(moves.len(), 1, "among the crossed: it moves");
    }
}
