//! Who sees what: each admitted socket's viewer cell, with hysteresis, and the
//! view groups of a tick (the sockets whose views are the same get the same
//! frames, chosen once).
//!
//! **Hysteresis.** When a player walks into another cell, the cell it left
//! stays its second viewer cell for [`Viewers::hysteresis`] ticks: the view is
//! the union of both cells' views meanwhile, so a player walking back and
//! forth over a border does not make cells drop out of view and come back
//! (the Unreal Iris grid filter keeps a cell the viewer left for 2 frames;
//! mino's default is 10 ticks, 0.5 s). A walker covers at most one cell in
//! that time as long as the cell is at least top speed × hysteresis wide,
//! which the configuration checks, so it never skips a cell.
//!
//! **Keyframes** (`--keyframe-ticks` N > 0). A group is *whole* on the ticks
//! its keyframe is due (every N ticks, the groups' viewer cells taking turns
//! as [`due`] spreads them) and for sockets whose player has just entered a
//! cell (or joined): whole groups get every cell of their view, the others
//! only the cells that changed (see `aoi.rs`). Sockets that need a whole view
//! get a group of their own kind, so the choice is still made once a group.

use super::grid::{CellId, Grid};
use super::interest::due_since;
use super::links::LinkId;
use crate::sim::World;
use mino_protocol::PlayerId;
use std::collections::HashMap;

/// The viewer cells of one socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Viewer {
    player: PlayerId,
    cell: CellId,
    /// The cell left last, while it is still seen (`CellId(0)`: none).
    previous: CellId,
    /// The tick until which `previous` is seen.
    until: u64,
    /// Index of the socket's group in the last tick's frame (`u32::MAX`:
    /// none); u32 keeps a viewer at 24 bytes.
    group: u32,
}

/// A view group's key: the viewer cell and the cell still seen after it was
/// left (0: none).
pub(crate) type GroupKey = (CellId, CellId);

/// One view group of a tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Group {
    /// Whose view.
    pub(crate) key: GroupKey,
    /// Send the whole view, changed or not (a keyframe, or sockets that just
    /// entered their cell); always false without keyframes.
    pub(crate) whole: bool,
}

/// Every socket's viewer state.
#[derive(Debug)]
pub(crate) struct Viewers {
    hysteresis: u64,
    keyframe_ticks: u32,
    /// The tick of the last update (keyframes skipped by a stall are made
    /// on the next tick that runs).
    last_tick: u64,
    by_link: HashMap<LinkId, Viewer>,
    groups: Vec<Group>,
    index: HashMap<Group, u32>,
}

impl Viewers {
    /// Viewers that keep a cell they left for `hysteresis` ticks, with a
    /// keyframe every `keyframe_ticks` ticks (0: no keyframes).
    pub(crate) fn new(hysteresis: u64, keyframe_ticks: u32) -> Viewers {
        Viewers {
            hysteresis,
            keyframe_ticks,
            last_tick: 0,
            by_link: HashMap::new(),
            groups: Vec::new(),
            index: HashMap::new(),
        }
    }

    /// Sockets with a viewer.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_link.len()
    }

    /// Ticks a left cell stays in view.
    pub(crate) fn hysteresis(&self) -> u64 {
        self.hysteresis
    }

    /// The socket `link` of `player` is admitted (a resumed player starts with
    /// no previous cell: its view is where it stands now).
    pub(crate) fn add(&mut self, link: LinkId, player: PlayerId) {
        let viewer = Viewer { player, cell: CellId(0), previous: CellId(0), until: 0, group: u32::MAX };
        self.by_link.insert(link, viewer);
    }

    /// The socket `link` is gone.
    pub(crate) fn remove(&mut self, link: LinkId) {
        self.by_link.remove(&link);
    }

    /// The last update's groups, taken (to walk them while changing other
    /// state); [`Viewers::give_back`] returns the vector for the next update
    /// to reuse.
    pub(crate) fn take_groups(&mut self) -> Vec<Group> {
        std::mem::take(&mut self.groups)
    }

    /// Returns the vector [`Viewers::take_groups`] took.
    pub(crate) fn give_back(&mut self, groups: Vec<Group>) {
        self.groups = groups;
    }

    /// Moves every viewer to the cell its player stands in at `tick` and
    /// forms the tick's groups; returns them, each once, in first-seen order.
    pub(crate) fn update(&mut self, tick: u64, grid: &Grid, world: &World) -> &[Group] {
        self.groups.clear();
        self.index.clear();
        let since = std::mem::replace(&mut self.last_tick, tick);
        for viewer in self.by_link.values_mut() {
            let Some(p) = world.player(viewer.player) else {
                viewer.group = u32::MAX;
                continue;
            };
            let cell = grid.cell_of(p.x, p.y);
            let entered = cell != viewer.cell;
            if entered {
                if viewer.cell != CellId(0) {
                    (viewer.previous, viewer.until) = (viewer.cell, tick + self.hysteresis);
                }
                viewer.cell = cell;
            }
            if viewer.previous == cell || tick >= viewer.until {
                viewer.previous = CellId(0);
            }
            let whole = self.keyframe_ticks > 0
                && (entered
                    || grid
                        .position(cell)
                        .is_some_and(|(column, row)| due_since(since, tick, column, row, self.keyframe_ticks)));
            let group = Group { key: (viewer.cell, viewer.previous), whole };
            let groups = &mut self.groups;
            viewer.group = *self.index.entry(group).or_insert_with(|| {
                groups.push(group);
                (groups.len() - 1) as u32
            });
        }
        &self.groups
    }

    /// The group of `link` in the last update (`usize::MAX`: none).
    pub(crate) fn group_of(&self, link: LinkId) -> usize {
        self.by_link.get(&link).filter(|v| v.group != u32::MAX).map_or(usize::MAX, |v| v.group as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::client::Direction;
    use mino_protocol::wire::Bounds;

    fn setup() -> (Grid, World, Viewers) {
        let bounds = Bounds::new(0.0, 0.0, 1000.0, 1000.0);
        let mut world = World::new(bounds, 100.0);
        world.add(PlayerId(1), "a".into(), 150.0, 150.0);
        world.add(PlayerId(2), "b".into(), 160.0, 160.0);
        world.add(PlayerId(3), "c".into(), 550.0, 150.0);
        let mut viewers = Viewers::new(10, 0);
        for i in 1..=3 {
            viewers.add(LinkId(u64::from(i)), PlayerId(i));
        }
        (Grid::new(&bounds, 100.0).expect("grid"), world, viewers)
    }

    #[test]
    fn sockets_in_one_cell_share_a_group() {
        let (grid, world, mut viewers) = setup();
        let groups = viewers.update(1, &grid, &world).to_vec();
        assert_eq!(groups.len(), 2);
        assert_eq!(viewers.group_of(LinkId(1)), viewers.group_of(LinkId(2)));
        assert_ne!(viewers.group_of(LinkId(1)), viewers.group_of(LinkId(3)));
        assert_eq!(groups[viewers.group_of(LinkId(3))].key, (grid.cell_of(550.0, 150.0), CellId(0)));
        assert_eq!(viewers.group_of(LinkId(9)), usize::MAX);
    }

    #[test]
    fn a_left_cell_stays_in_view_for_the_hysteresis_then_goes() {
        let (grid, mut world, mut viewers) = setup();
        let start = grid.cell_of(150.0, 150.0);
        viewers.update(1, &grid, &world);
        world.set_direction(PlayerId(1), Direction::new(1.0, 0.0).expect("dir"), 0);
        world.step(0.6); // 60 units: into the next cell
        let next = grid.cell_of(210.0, 150.0);
        let groups = viewers.update(2, &grid, &world).to_vec();
        assert_eq!(groups[viewers.group_of(LinkId(1))].key, (next, start));
        let groups = viewers.update(11, &grid, &world).to_vec();
        assert_eq!(groups[viewers.group_of(LinkId(1))].key, (next, start));
        let groups = viewers.update(12, &grid, &world).to_vec();
        assert_eq!(groups[viewers.group_of(LinkId(1))].key, (next, CellId(0)));
    }

    #[test]
    fn walking_back_into_the_left_cell_is_not_a_second_cell() {
        let (grid, mut world, mut viewers) = setup();
        viewers.update(1, &grid, &world);
        world.set_direction(PlayerId(1), Direction::new(1.0, 0.0).expect("dir"), 0);
        world.step(0.6);
        viewers.update(2, &grid, &world);
        world.set_direction(PlayerId(1), Direction::new(-1.0, 0.0).expect("dir"), 0);
        world.step(0.6);
        let groups = viewers.update(3, &grid, &world).to_vec();
        let (cell, previous) = groups[viewers.group_of(LinkId(1))].key;
        assert_eq!(cell, grid.cell_of(150.0, 150.0));
        assert_eq!(previous, grid.cell_of(210.0, 150.0), "now the other one is the left cell");
    }

    #[test]
    fn with_keyframes_a_group_is_whole_on_its_turn_and_for_a_socket_that_entered_a_cell() {
        let (grid, mut world, _) = setup();
        let mut viewers = Viewers::new(10, 4);
        viewers.add(LinkId(1), PlayerId(1));
        viewers.add(LinkId(2), PlayerId(2));
        let whole = |v: &Viewers, groups: &[Group], link: u64| groups[v.group_of(LinkId(link))].whole;
        let groups = viewers.update(1, &grid, &world).to_vec();
        assert!(whole(&viewers, &groups, 1) && whole(&viewers, &groups, 2), "just placed: whole");
        let turns: Vec<bool> = (2..=9)
            .map(|t| {
                let groups = viewers.update(t, &grid, &world).to_vec();
                whole(&viewers, &groups, 1)
            })
            .collect();
        assert_eq!(turns.iter().filter(|w| **w).count(), 2, "once every 4 ticks: {turns:?}");
        world.set_direction(PlayerId(1), Direction::new(1.0, 0.0).expect("dir"), 0);
        world.step(0.6); // into the next cell
        let t = (10..20).find(|t| !due_since(t - 1, *t, 2, 1, 4)).expect("a tick off the next cell's turn");
        let groups = viewers.update(t, &grid, &world).to_vec();
        assert!(whole(&viewers, &groups, 1), "entered a cell: whole at once");
        assert_ne!(viewers.group_of(LinkId(1)), viewers.group_of(LinkId(2)));
        let without = Viewers::new(10, 0).update(1, &grid, &world).iter().any(|g| g.whole);
        assert!(!without, "no keyframes: never whole");
    }
}
