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

use super::grid::{CellId, Grid};
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
    /// Index of the socket's group in the last tick's frame.
    group: usize,
}

/// A view group's key: the viewer cell and the cell still seen after it was
/// left (0: none).
pub(crate) type GroupKey = (CellId, CellId);

/// Every socket's viewer state.
#[derive(Debug)]
pub(crate) struct Viewers {
    hysteresis: u64,
    by_link: HashMap<LinkId, Viewer>,
    groups: Vec<GroupKey>,
    index: HashMap<GroupKey, usize>,
}

impl Viewers {
    /// Viewers that keep a cell they left for `hysteresis` ticks.
    pub(crate) fn new(hysteresis: u64) -> Viewers {
        Viewers { hysteresis, by_link: HashMap::new(), groups: Vec::new(), index: HashMap::new() }
    }

    /// Ticks a left cell stays in view.
    pub(crate) fn hysteresis(&self) -> u64 {
        self.hysteresis
    }

    /// The socket `link` of `player` is admitted (a resumed player starts with
    /// no previous cell: its view is where it stands now).
    pub(crate) fn add(&mut self, link: LinkId, player: PlayerId) {
        let viewer = Viewer { player, cell: CellId(0), previous: CellId(0), until: 0, group: usize::MAX };
        self.by_link.insert(link, viewer);
    }

    /// The socket `link` is gone.
    pub(crate) fn remove(&mut self, link: LinkId) {
        self.by_link.remove(&link);
    }

    /// Moves every viewer to the cell its player stands in at `tick` and
    /// forms the tick's groups; returns them, each once, in first-seen order.
    pub(crate) fn update(&mut self, tick: u64, grid: &Grid, world: &World) -> &[GroupKey] {
        self.groups.clear();
        self.index.clear();
        for viewer in self.by_link.values_mut() {
            let Some(p) = world.player(viewer.player) else {
                viewer.group = usize::MAX;
                continue;
            };
            let cell = grid.cell_of(p.x, p.y);
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
            let groups = &mut self.groups;
            viewer.group = *self.index.entry(key).or_insert_with(|| {
                groups.push(key);
                groups.len() - 1
            });
        }
        &self.groups
    }

    /// The group of `link` in the last update (`usize::MAX`: none).
    pub(crate) fn group_of(&self, link: LinkId) -> usize {
        self.by_link.get(&link).map_or(usize::MAX, |v| v.group)
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
        let mut viewers = Viewers::new(10);
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
        assert_eq!(groups[viewers.group_of(LinkId(3))], (grid.cell_of(550.0, 150.0), CellId(0)));
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
        assert_eq!(groups[viewers.group_of(LinkId(1))], (next, start));
        let groups = viewers.update(11, &grid, &world).to_vec();
        assert_eq!(groups[viewers.group_of(LinkId(1))], (next, start));
        let groups = viewers.update(12, &grid, &world).to_vec();
        assert_eq!(groups[viewers.group_of(LinkId(1))], (next, CellId(0)));
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
        let (cell, previous) = groups[viewers.group_of(LinkId(1))];
        assert_eq!(cell, grid.cell_of(150.0, 150.0));
        assert_eq!(previous, grid.cell_of(210.0, 150.0), "now the other one is the left cell");
    }
}
