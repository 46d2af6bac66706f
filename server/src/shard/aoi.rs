//! Area of interest, put together: each tick, this shard's cells
//! ([`cells`](super::cells)), the cells relayed from other shards, the
//! viewers and their groups ([`viewers`](super::viewers)), and for each group
//! the frames due under its budget ([`interest`](super::interest)); plus,
//! clustered, the regions this shard must hear from the other shards.
//!
//! Per tick the work is one encode per occupied cell, one pass over the
//! viewers, and per group a walk of its stencil: no per-socket encoding and no
//! per-socket search.

use super::cells::{CellEntries, OwnCells};
use super::grid::{CellId, Grid, GridError, RegionId, REGION_CELLS};
use super::interest::{self, Stencil, Tier};
use super::links::LinkId;
use super::output::{FrameKey, ViewFrames};
use super::viewers::{Group, GroupKey, Viewers};
use crate::config::AoiConfig;
use crate::sim::World;
use crate::ws_frame;
use bytes::Bytes;
use mino_protocol::cell::{frame_spans, FrameSize, FrameStamp, FRAME_BYTES, RUN_BYTES};
use mino_protocol::limits::MAX_SERVER_MESSAGE_BYTES;
use mino_protocol::wire::Bounds;
use mino_protocol::{PlayerId, ShardId, Tick};
use std::collections::HashMap;

/// Ticks a region stays subscribed after no viewer needs it any more (2 s at
/// 20 Hz): subscriptions follow the players without churning at borders.
pub const REGION_KEEP_TICKS: u64 = 40;

/// The websocket header of a view frame of 126 bytes to 64 KiB (RFC 6455
/// section 5.2), for the budget.
const WS_HEADER_BYTES: usize = 4;

/// One cell of one shard this tick: its players' entries (10 bytes each),
/// own or relayed, and the tick they are of.
#[derive(Clone, Debug)]
struct Piece {
    key: FrameKey,
    /// The publisher's tick and wall clock (ms since the Unix epoch).
    tick: u64,
    time_ms: u64,
    entries: Bytes,
}

impl Piece {
    /// The view frame it goes in: its shard's, of its tick.
    fn source(&self) -> (ShardId, u64) {
        (self.key.shard, self.tick)
    }
}

/// The area-of-interest state of a shard.
pub(crate) struct Aoi {
    settings: AoiConfig,
    grid: Grid,
    stencil: Stencil,
    /// Cells of the stencil's reach around the viewer cell, each way.
    reach: u32,
    own: OwnCells,
    viewers: Viewers,
    /// Cells relayed from other shards, waiting for the next tick.
    relayed: Vec<Piece>,
    /// This tick's cells, own and relayed, sorted by cell then shard.
    at: Vec<Piece>,
    /// Per cell id: where the group being walked has it in `scratch`
    /// (`u32::MAX`: not there); all `u32::MAX` between groups.
    marks: Vec<u32>,
    /// Scratch: the pieces of `at` a group is sent this tick.
    picked: Vec<usize>,
    /// Scratch: the (shard, tick) of each view frame a group's pieces make.
    sources: Vec<(ShardId, u64)>,
    /// Per frame of `at`, with keyframes only: the tick its cell's players
    /// last changed (relayed frames: this tick, as they are sent once).
    changed: Vec<u64>,
    /// Per region id: the latest `changed` of its frames this tick, so a
    /// group whose regions have been still for the slowest period is passed
    /// over without a walk of its stencil.
    region_changed: Vec<u64>,
    /// Groups whose budget slowed a tier down, with the last tick it did:
    /// until the slowest period has passed since, a change is looked for
    /// over that whole period, as the tier's last due tick may be that old.
    slowed: HashMap<GroupKey, u64>,
    /// The tick before this one that ran (a stall skips tick numbers).
    last_tick: u64,
    /// Per cell id: where its frames start in `at` (`u32::MAX`: none).
    slots: Vec<u32>,
    touched: Vec<CellId>,
    scratch: Vec<(CellId, Tier)>,
    /// Scratch: where each cell of `scratch` has its frames in `at`.
    ranges: Vec<std::ops::Range<usize>>,
    regions: RegionInterest,
}

impl Aoi {
    /// The area of interest over `bounds`.
    ///
    /// Errors: [`GridError`] for a cell size the grid cannot have.
    pub(crate) fn new(settings: AoiConfig, bounds: &Bounds) -> Result<Aoi, GridError> {
        let grid = Grid::new(bounds, settings.cell_size)?;
        let radius_cells = settings.view_radius / settings.cell_size;
        let cells = (grid.columns() as usize) * (grid.rows() as usize) + 1;
        Ok(Aoi {
            settings,
            stencil: Stencil::new(radius_cells),
            reach: radius_cells.max(0.0).ceil() as u32 + 2,
            grid,
            own: OwnCells::new(settings.keyframe_ticks > 0),
            viewers: Viewers::new(settings.hysteresis_ticks, settings.keyframe_ticks),
            relayed: Vec::new(),
            at: Vec::new(),
            marks: vec![u32::MAX; cells],
            picked: Vec::new(),
            sources: Vec::new(),
            changed: Vec::new(),
            region_changed: Vec::new(),
            slowed: HashMap::new(),
            last_tick: 0,
            slots: vec![u32::MAX; cells],
            touched: Vec::new(),
            scratch: Vec::new(),
            ranges: Vec::new(),
            regions: RegionInterest::default(),
        })
    }

    /// The grid.
    pub(crate) fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The settings.
    pub(crate) fn settings(&self) -> &AoiConfig {
        &self.settings
    }

    /// Viewer state (hysteresis).
    pub(crate) fn viewers(&self) -> &Viewers {
        &self.viewers
    }

    /// A socket was admitted.
    pub(crate) fn add_viewer(&mut self, link: LinkId, player: PlayerId) {
        self.viewers.add(link, player);
    }

    /// A socket is gone.
    pub(crate) fn remove_viewer(&mut self, link: LinkId) {
        self.viewers.remove(link);
    }

    /// The view group of `link` in the last tick (`usize::MAX`: none).
    pub(crate) fn view_of(&self, link: LinkId) -> usize {
        self.viewers.group_of(link)
    }

    /// Cells of another shard's tick `stamp` (each cell's entries as
    /// published), kept for the next tick; a newer run of a cell replaces an
    /// older one not yet sent.
    pub(crate) fn relay(&mut self, stamp: FrameStamp, cells: impl Iterator<Item = (CellId, Bytes)>) {
        for (cell, entries) in cells {
            if self.grid.position(cell).is_some() {
                let key = FrameKey { shard: stamp.shard, cell };
                let (tick, time_ms) = (stamp.tick.0, stamp.server_time_ms);
                self.relayed.push(Piece { key, tick, time_ms, entries });
            }
        }
    }

    /// Runs the tick's area of interest: encodes this shard's cells, moves the
    /// viewers, and returns each group's frames. `clustered` also tracks the
    /// regions to hear from. With keyframes, `keyframe_extra` (the place's
    /// status, say: websocket-framed) rides every whole group's frames, so a
    /// standing player's socket gets it in its keyframe's one write.
    pub(crate) fn tick(
        &mut self,
        world: &World,
        shard: ShardId,
        tick: Tick,
        wall_ms: u64,
        clustered: bool,
        keyframe_extra: Option<&Bytes>,
    ) -> Vec<ViewFrames> {
        self.own.encode(&self.grid, world.bounds(), world.players(), tick.0);
        self.index(shard, tick.0, wall_ms);
        self.viewers.update(tick.0, &self.grid, world);
        // Taken for the walk (each view needs `&mut self`), given back after.
        let groups = self.viewers.take_groups();
        let since = std::mem::replace(&mut self.last_tick, tick.0);
        self.slowed.retain(|_, t| *t + u64::from(interest::SLOWEST_PERIOD) > since);
        let mut views = Vec::with_capacity(groups.len());
        for group in &groups {
            let mut view = self.view(*group, since, tick.0);
            if let Some(extra) = keyframe_extra.filter(|_| group.whole) {
                view.frames.push((FrameKey::status(shard), extra.clone()));
            }
            views.push(view);
            if clustered {
                self.note_regions(group.key, tick.0);
            }
        }
        self.viewers.give_back(groups);
        views
    }

    /// This tick's own cells grouped by region, for the bundles to publish.
    pub(crate) fn bundles(&self) -> Vec<(RegionId, Vec<(CellId, Bytes)>)> {
        self.own.by_region(&self.grid)
    }

    /// The regions to hear from, when the set changed since the last call.
    pub(crate) fn regions(&mut self, tick: u64) -> Option<Vec<RegionId>> {
        self.regions.settle(tick)
    }

    /// Sorts this tick's cells by cell and indexes them.
    fn index(&mut self, shard: ShardId, tick: u64, wall_ms: u64) {
        for cell in self.touched.drain(..) {
            if let Some(slot) = self.slots.get_mut(cell.0 as usize) {
                *slot = u32::MAX;
            }
        }
        self.at.clear();
        self.at.extend(self.own.cells().iter().map(|f: &CellEntries| Piece {
            key: FrameKey { shard, cell: f.cell },
            tick,
            time_ms: wall_ms,
            entries: f.entries.clone(),
        }));
        // Newest relayed run of each (shard, cell): the last one received.
        let mut relayed = std::mem::take(&mut self.relayed);
        relayed.reverse();
        relayed.sort_by_key(|r| (r.key.cell, r.key.shard.0));
        relayed.dedup_by_key(|r| r.key);
        self.at.append(&mut relayed);
        self.relayed = relayed;
        self.at.sort_by_key(|p| (p.key.cell, p.key.shard.0));
        if self.settings.keyframe_ticks > 0 {
            self.index_changes(shard, tick);
        }
        for (i, Piece { key, .. }) in self.at.iter().enumerate() {
            if let Some(slot) = self.slots.get_mut(key.cell.0 as usize) {
                if *slot == u32::MAX {
                    *slot = i as u32;
                    self.touched.push(key.cell);
                }
            }
        }
    }

    /// With keyframes (only they read it): the tick each frame of `at`
    /// last changed, and per region the latest of its frames'.
    fn index_changes(&mut self, shard: ShardId, tick: u64) {
        let own = &self.own;
        self.changed.clear();
        self.changed.extend(self.at.iter().map(|Piece { key, .. }| {
            if key.shard == shard {
                own.changed_at(key.cell).unwrap_or(tick)
            } else {
                tick
            }
        }));
        let regions = (self.grid.region_columns() * self.grid.rows().div_ceil(REGION_CELLS)) as usize + 1;
        self.region_changed.clear();
        self.region_changed.resize(regions, 0);
        for (Piece { key, .. }, &changed) in self.at.iter().zip(&self.changed) {
            if let Some(r) = self.grid.region_of(key.cell).and_then(|r| self.region_changed.get_mut(r.0 as usize)) {
                *r = (*r).max(changed);
            }
        }
    }

    /// Where the frames of `cell` this tick are in `at` (and `changed`).
    fn frames_at(&self, cell: CellId) -> std::ops::Range<usize> {
        let Some(&start) = self.slots.get(cell.0 as usize) else { return 0..0 };
        if start == u32::MAX {
            return 0..0;
        }
        let start = start as usize;
        let n = self.at[start..].iter().take_while(|p| p.key.cell == cell).count();
        start..start + n
    }

    /// One group's frames for `tick` (`since`: the tick that ran before
    /// it): its cells' frames that are due at the periods its budget allows,
    /// nearest first; a due tick a stall skipped counts on the next tick that
    /// runs. With keyframes, a whole group gets every frame of its cells, and
    /// the others leave out the frames whose cell did not change within one
    /// period of its tier before `since` (the tier's last due tick was served
    /// at or before `since`); within the slowest period (64 ticks) if the
    /// budget slowed this group's tiers lately, so a change is not lost when
    /// a tier speeds up again. A group whose regions all stood still for the
    /// slowest period is passed over without a walk of its stencil.
    fn view(&mut self, group: Group, since: u64, tick: u64) -> ViewFrames {
        let (cell, previous) = group.key;
        let keyframes = self.settings.keyframe_ticks > 0 && !group.whole;
        let since = since.min(tick.saturating_sub(1));
        let slowest = interest::SLOWEST_PERIOD;
        // Unchanged for `period` ticks before the tick that ran last: sent
        // at the tier's last due tick (or earlier), nothing to send now.
        let sent = |i: usize, period: u32| keyframes && self.changed[i] + u64::from(period) <= since;
        let stale = |i: usize| sent(i, slowest);
        if keyframes && self.regions_still((cell, previous), since.saturating_sub(u64::from(slowest))) {
            return ViewFrames::default();
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        scratch.extend(self.stencil.cells(&self.grid, cell));
        if previous != CellId(0) {
            union_previous(&mut self.marks, &self.stencil, &self.grid, &mut scratch, previous);
        }
        let mut ranges = std::mem::take(&mut self.ranges);
        ranges.clear();
        ranges.extend(scratch.iter().map(|&(c, _)| self.frames_at(c)));
        let mut sources = std::mem::take(&mut self.sources);
        sources.clear();
        let mut tiers = [0usize; 4];
        for (&(_, tier), range) in scratch.iter().zip(&ranges) {
            for i in range.clone().filter(|&i| !stale(i)) {
                tiers[tier as usize] += RUN_BYTES + self.at[i].entries.len();
                note_source(&mut sources, self.at[i].source());
            }
        }
        // Each view frame costs its header once, at the own cell's rate.
        tiers[Tier::Own as usize] += sources.len() * (FRAME_BYTES + WS_HEADER_BYTES);
        let periods = interest::fit(self.settings.budget_bytes, &tiers);
        if keyframes && periods != &interest::LADDER[0] {
            self.slowed.insert(group.key, tick);
        }
        let slowed = keyframes && self.slowed.get(&group.key).is_some_and(|&t| t + u64::from(slowest) > since);
        let mut picked = std::mem::take(&mut self.picked);
        picked.clear();
        for (&(c, tier), range) in scratch.iter().zip(&ranges) {
            let range = range.clone();
            if range.is_empty() || range.clone().all(&stale) {
                continue;
            }
            if group.whole {
                picked.extend(range);
                continue;
            }
            let Some((column, row)) = self.grid.position(c) else { continue };
            let period = periods[tier as usize];
            if interest::due_since(since, tick, column, row, period) {
                let window = if slowed { slowest } else { period };
                picked.extend(range.filter(|&i| !sent(i, window)));
            }
        }
        self.scratch = scratch;
        self.ranges = ranges;
        let frames = self.assemble(&picked, &mut sources);
        self.picked = picked;
        self.sources = sources;
        ViewFrames { frames }
    }

    /// One view frame for each shard (and tick of it) among the `picked`
    /// pieces of `at`, its cells nearest first, websocket-framed: the bytes
    /// every socket of the group is sent. Each cell's entries are copied
    /// once, straight into the frame. A view over the client's message limit
    /// (about 110,000 players of one shard) goes out as several frames of
    /// that shard and tick, cut between cells.
    /// `sources` is scratch.
    fn assemble(&self, picked: &[usize], sources: &mut Vec<(ShardId, u64)>) -> Vec<(FrameKey, Bytes)> {
        let at = &self.at;
        sources.clear();
        for &i in picked {
            note_source(sources, at[i].source());
        }
        let mut frames = Vec::with_capacity(sources.len());
        for &source in sources.iter() {
            let Some(&first) = picked.iter().find(|&&i| at[i].source() == source) else { continue };
            let cells = picked
                .iter()
                .filter(move |&&i| at[i].source() == source)
                .map(|&i| (at[i].key.cell.0, &at[i].entries[..]));
            let (shard, tick, time) = (at[first].key.shard, Tick(at[first].tick), at[first].time_ms);
            let stamp = FrameStamp { shard, tick, server_time_ms: time };
            // One frame, unless the view would be over what a client takes.
            let whole = FrameSize::of(cells.clone());
            if whole.bytes() <= MAX_SERVER_MESSAGE_BYTES {
                frames.push((FrameKey::view(shard), ws_frame::view(&stamp, whole, cells)));
                continue;
            }
            for (skip, n, size) in frame_spans(cells.clone(), MAX_SERVER_MESSAGE_BYTES) {
                frames.push((FrameKey::view(shard), ws_frame::view(&stamp, size, cells.clone().skip(skip).take(n))));
            }
        }
        frames
    }

    /// True when no region the view of `key` touches changed after `since`.
    fn regions_still(&self, key: GroupKey, since: u64) -> bool {
        let mut still = true;
        each_region(&self.grid, self.reach, key, |r| {
            still &= self.region_changed.get(r.0 as usize).is_none_or(|&c| c <= since)
        });
        still
    }

    /// Notes the regions a group's view touches.
    fn note_regions(&mut self, key: GroupKey, tick: u64) {
        let regions = &mut self.regions;
        each_region(&self.grid, self.reach, key, |r| regions.note(r, tick));
    }
}

/// Adds `source` to `sources` unless it is there (a group sees a few).
fn note_source(sources: &mut Vec<(ShardId, u64)>, source: (ShardId, u64)) {
    if !sources.contains(&source) {
        sources.push(source);
    }
}

/// Adds the cells of the stencil around `previous` to `scratch` (the stencil
/// around a group's cell): a cell in both keeps the nearer tier, and the
/// whole stays nearest tiers first. `marks` (per cell id, all `u32::MAX`)
/// finds a cell in `scratch` without a sort, and is left as it was found.
fn union_previous(
    marks: &mut [u32],
    stencil: &Stencil,
    grid: &Grid,
    scratch: &mut Vec<(CellId, Tier)>,
    previous: CellId,
) {
    for (i, &(c, _)) in scratch.iter().enumerate() {
        if let Some(mark) = marks.get_mut(c.0 as usize) {
            *mark = i as u32;
        }
    }
    for (c, tier) in stencil.cells(grid, previous) {
        let Some(mark) = marks.get_mut(c.0 as usize) else { continue };
        match scratch.get_mut(*mark as usize) {
            Some(kept) => kept.1 = kept.1.min(tier),
            None => {
                *mark = scratch.len() as u32;
                scratch.push((c, tier));
            }
        }
    }
    for &(c, _) in scratch.iter() {
        if let Some(mark) = marks.get_mut(c.0 as usize) {
            *mark = u32::MAX;
        }
    }
    scratch.sort_by_key(|&(_, tier)| tier);
}

/// Calls `f` with each region the view of `(cell, previous)` touches, a view
/// reaching `reach` cells each way (a region may come twice).
fn each_region(grid: &Grid, reach: u32, (cell, previous): GroupKey, mut f: impl FnMut(RegionId)) {
    for viewer in [cell, previous] {
        let Some((column, row)) = grid.position(viewer) else { continue };
        let low = |v: u32| v.saturating_sub(reach) / REGION_CELLS;
        let high = |v: u32, n: u32| (v + reach).min(n - 1) / REGION_CELLS;
        for region_row in low(row)..=high(row, grid.rows()) {
            for region_column in low(column)..=high(column, grid.columns()) {
                f(RegionId(1 + region_row * grid.region_columns() + region_column));
            }
        }
    }
}

/// The regions a shard hears from: added as soon as a view touches them,
/// dropped [`REGION_KEEP_TICKS`] after the last view did.
#[derive(Debug, Default)]
struct RegionInterest {
    last_needed: HashMap<RegionId, u64>,
    current: Vec<RegionId>,
}

impl RegionInterest {
    fn note(&mut self, region: RegionId, tick: u64) {
        self.last_needed.insert(region, tick);
    }

    /// The set, when it changed.
    fn settle(&mut self, tick: u64) -> Option<Vec<RegionId>> {
        self.last_needed.retain(|_, last| tick.saturating_sub(*last) <= REGION_KEEP_TICKS);
        let mut now: Vec<RegionId> = self.last_needed.keys().copied().collect();
        now.sort_unstable();
        (now != self.current).then(|| {
            self.current.clone_from(&now);
            now
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::client::Direction;
    use mino_protocol::server::{decode, ServerMsg};

    const SETTINGS: AoiConfig = AoiConfig {
        cell_size: 100.0,
        view_radius: 200.0,
        hysteresis_ticks: 10,
        budget_bytes: 64 * 1024,
        keyframe_ticks: 0,
    };

    fn world(players: &[(u32, f32, f32)]) -> World {
        let mut w = World::new(Bounds::new(0.0, 0.0, 3200.0, 3200.0), 100.0);
        for &(id, x, y) in players {
            w.add(PlayerId(id), "p".into(), x, y);
        }
        w
    }

    fn aoi(world: &World) -> Aoi {
        let mut a = Aoi::new(SETTINGS, world.bounds()).expect("aoi");
        for p in world.players() {
            a.add_viewer(LinkId(u64::from(p.id.0)), p.id);
        }
        a
    }

    /// Each cell the view frames sent to `link` carry, with its shard and its
    /// players' entries, in the order sent.
    fn runs_seen(views: &[ViewFrames], aoi: &Aoi, link: u64) -> Vec<(u32, u32, Vec<u8>)> {
        let mut runs = Vec::new();
        for (key, framed) in &views[aoi.view_of(LinkId(link))].frames {
            let Ok(ServerMsg::View(v)) = decode(ws_frame::payload(framed)) else { panic!("a view frame") };
            assert_eq!(*key, FrameKey::view(ShardId(v.header().shard_id())), "keyed by its shard");
            runs.extend(v.cells().map(|c| (c.shard_id(), c.cell(), c.players().bytes().to_vec())));
        }
        runs
    }

    fn cells_seen(views: &[ViewFrames], aoi: &Aoi, link: u64) -> Vec<u32> {
        let mut cells: Vec<u32> = runs_seen(views, aoi, link).into_iter().map(|(_, cell, _)| cell).collect();
        cells.sort_unstable();
        cells
    }

    #[test]
    fn a_far_player_is_not_seen_and_a_near_one_is() {
        let w = world(&[(1, 1000.0, 1000.0), (2, 1150.0, 1000.0), (3, 2500.0, 2500.0)]);
        let mut a = aoi(&w);
        let views = a.tick(&w, ShardId(7), Tick(4), 0, false, None);
        let seen = cells_seen(&views, &a, 1);
        assert!(seen.contains(&a.grid().cell_of(1150.0, 1000.0).0), "the neighbour's cell");
        assert!(!seen.contains(&a.grid().cell_of(2500.0, 2500.0).0), "the far one's cell");
        assert_eq!(cells_seen(&views, &a, 3), [a.grid().cell_of(2500.0, 2500.0).0], "alone out there");
    }

    #[test]
    fn outer_tiers_are_sent_less_often_and_every_cell_once_a_period() {
        // A ring of players around the viewer, out to the prefetch ring.
        let mut players = vec![(1, 1550.0, 1550.0)];
        for (i, d) in (-4i32..=4).flat_map(|dx| (-4i32..=4).map(move |dy| (dx, dy))).enumerate() {
            players.push((10 + i as u32, 1550.0 + d.0 as f32 * 100.0, 1550.0 + d.1 as f32 * 100.0));
        }
        let w = world(&players);
        let mut a = aoi(&w);
        let mut counts: HashMap<u32, u32> = HashMap::new();
        for t in 1..=8 {
            let views = a.tick(&w, ShardId(7), Tick(t), 0, false, None);
            for c in cells_seen(&views, &a, 1) {
                *counts.entry(c).or_default() += 1;
            }
        }
        let own = a.grid().cell_of(1550.0, 1550.0);
        assert_eq!(counts[&own.0], 8, "own cell every tick");
        assert_eq!(counts[&a.grid().cell_of(1650.0, 1650.0).0], 8, "near every tick");
        assert_eq!(counts[&a.grid().cell_of(1750.0, 1550.0).0], 4, "mid every 2nd tick");
        assert_eq!(counts[&a.grid().cell_of(1950.0, 1550.0).0], 2, "prefetch every 4th tick");
        assert!(!counts.contains_key(&a.grid().cell_of(1950.0, 1950.0).0), "beyond the prefetch ring");
    }

    #[test]
    fn a_crowd_in_one_cell_stays_within_the_budget() {
        let players: Vec<(u32, f32, f32)> = (0..2000).map(|i| (i + 1, 1510.0 + (i % 80) as f32, 1510.0)).collect();
        let w = world(&players);
        let mut a = Aoi::new(AoiConfig { budget_bytes: 8192, ..SETTINGS }, w.bounds()).expect("aoi");
        a.add_viewer(LinkId(1), PlayerId(1));
        let mut total = 0;
        for t in 1..=16 {
            let views = a.tick(&w, ShardId(7), Tick(t), 0, false, None);
            total += views[a.view_of(LinkId(1))].frames.iter().map(|(_, f)| f.len()).sum::<usize>();
        }
        assert!(total / 16 <= 8192, "{} bytes a tick on average", total / 16);
        assert!(total > 0, "the crowd is still seen");
    }

    #[test]
    fn relayed_cells_join_their_cell_newest_first_and_only_once() {
        let w = world(&[(1, 1000.0, 1000.0)]);
        let mut a = aoi(&w);
        let cell = a.grid().cell_of(1000.0, 1000.0);
        let stamp = |tick| FrameStamp { shard: ShardId(8), tick: Tick(tick), server_time_ms: tick * 50 };
        a.relay(stamp(3), [(cell, Bytes::from_static(&[1; 10]))].into_iter());
        a.relay(stamp(4), [(cell, Bytes::from_static(&[2; 10]))].into_iter());
        let views = a.tick(&w, ShardId(7), Tick(1), 0, false, None);
        let theirs: Vec<(u32, Vec<u8>)> =
            runs_seen(&views, &a, 1).into_iter().filter(|r| r.0 == 8).map(|(_, c, e)| (c, e)).collect();
        assert_eq!(theirs, [(cell.0, vec![2; 10])], "the newest, its bytes unchanged");
        let frames = &views[a.view_of(LinkId(1))].frames;
        let Ok(ServerMsg::View(v)) = decode(ws_frame::payload(&frames[1].1)) else { panic!("a view frame") };
        assert_eq!((v.header().shard_id(), v.header().tick(), v.header().time_ms()), (8, 4, 200), "its own stamp");
        let views = a.tick(&w, ShardId(7), Tick(2), 0, false, None);
        assert!(runs_seen(&views, &a, 1).iter().all(|r| r.0 != 8), "sent once");
    }

    #[test]
    fn a_group_gets_one_view_frame_a_shard_with_its_cells_nearest_first() {
        let w = world(&[(1, 1550.0, 1550.0), (2, 1650.0, 1550.0), (3, 1750.0, 1550.0)]);
        let mut a = aoi(&w);
        let stamp = FrameStamp { shard: ShardId(8), tick: Tick(9), server_time_ms: 450 };
        let far = a.grid().cell_of(1350.0, 1550.0);
        a.relay(stamp, [(far, Bytes::from_static(&[5; 20]))].into_iter());
        // Tick 1: the mid cells (period 2) at column 17, row 15 are due.
        let views = a.tick(&w, ShardId(7), Tick(1), 0, false, None);
        let frames = &views[a.view_of(LinkId(1))].frames;
        assert_eq!(frames.iter().map(|(k, _)| k.shard.0).collect::<Vec<_>>(), [7, 8], "one frame a shard");
        let runs = runs_seen(&views, &a, 1);
        let own: Vec<u32> = runs.iter().filter(|r| r.0 == 7).map(|r| r.1).collect();
        let (here, next) = (a.grid().cell_of(1550.0, 1550.0).0, a.grid().cell_of(1650.0, 1550.0).0);
        assert_eq!(&own[..2], [here, next], "own cell, then near");
        assert_eq!(runs.iter().filter(|r| r.0 == 8).map(|r| r.1).collect::<Vec<_>>(), [far.0]);
    }

    #[test]
    fn regions_follow_the_viewers_with_hysteresis() {
        let mut w = world(&[(1, 100.0, 100.0)]);
        let mut a = aoi(&w);
        a.tick(&w, ShardId(7), Tick(1), 0, true, None);
        assert_eq!(a.regions(1), Some(vec![RegionId(1)]));
        assert_eq!(a.regions(2), None, "unchanged");
        w.set_direction(PlayerId(1), Direction::new(1.0, 0.0).expect("dir"), 0);
        w.step(20.0); // 2,000 units east: another region
        for t in 2..=4 {
            a.tick(&w, ShardId(7), Tick(t), 0, true, None);
        }
        let both = a.regions(4).expect("a new region");
        assert!(both.contains(&RegionId(1)) && both.len() >= 2, "{both:?}");
        for t in 5..=4 + REGION_KEEP_TICKS + 12 {
            a.tick(&w, ShardId(7), Tick(t), 0, true, None);
        }
        let later = a.regions(4 + REGION_KEEP_TICKS + 12).expect("the old region dropped");
        assert!(!later.contains(&RegionId(1)), "{later:?}");
    }

    #[test]
    fn with_keyframes_a_still_cell_is_sent_at_keyframes_and_a_changing_one_at_its_rate() {
        let mut w = world(&[(1, 1550.0, 1550.0), (2, 1650.0, 1550.0), (3, 1550.0, 1650.0)]);
        let mut a = Aoi::new(AoiConfig { keyframe_ticks: 8, ..SETTINGS }, w.bounds()).expect("aoi");
        a.add_viewer(LinkId(1), PlayerId(1));
        let (still, walking) = (a.grid().cell_of(1650.0, 1550.0), a.grid().cell_of(1550.0, 1650.0));
        let mut counts: HashMap<u32, u32> = HashMap::new();
        for t in 1..=96 {
            // Player 3 paces east and west, 5 units a tick, inside its cell.
            let east = if t % 2 == 1 { 1.0 } else { -1.0 };
            w.set_direction(PlayerId(3), Direction::new(east, 0.0).expect("dir"), 0);
            w.step(0.05);
            let views = a.tick(&w, ShardId(7), Tick(t), 0, false, None);
            // Everyone was new on tick 1: changed cells go out at their
            // tier's rate for the slowest period (64 ticks), so count after.
            if t >= 70 {
                for c in cells_seen(&views, &a, 1) {
                    *counts.entry(c).or_default() += 1;
                }
            }
        }
        assert_eq!(counts[&walking.0], 27, "a changing near cell every tick");
        // Then only at the group's keyframes: (t + 15 + 2 x 15) % 8 == 0 on
        // ticks 75, 83 and 91.
        assert_eq!(counts[&still.0], 3, "a still cell only at keyframes");
        assert_eq!(counts[&a.grid().cell_of(1550.0, 1550.0).0], 3, "the viewer's own still cell too");
    }

    /// The ticks among `ticks` in which viewer 1 was sent `cell`, calling
    /// `before` ahead of each tick.
    fn seen_ticks(
        a: &mut Aoi,
        w: &mut World,
        ticks: &[u64],
        cell: CellId,
        mut before: impl FnMut(u64, &mut World),
    ) -> Vec<u64> {
        let mut got = Vec::new();
        for &t in ticks {
            before(t, w);
            let views = a.tick(w, ShardId(7), Tick(t), 0, false, None);
            if cells_seen(&views, a, 1).contains(&cell.0) {
                got.push(t);
            }
        }
        got
    }

    /// Moves player `id` a few units east at once (one change of its cell).
    fn nudge(w: &mut World, id: u32) {
        w.set_direction(PlayerId(id), Direction::new(1.0, 0.0).expect("dir"), 0);
        w.step(0.05);
        w.set_direction(PlayerId(id), Direction::STILL, 0);
    }

    #[test]
    fn with_keyframes_a_change_before_a_due_tick_a_stall_skipped_goes_out_on_the_next_tick() {
        // A mid cell (period 2, due on odd ticks); tick 5 never runs.
        let mut w = world(&[(1, 1550.0, 1550.0), (2, 1750.0, 1550.0)]);
        let mut a = Aoi::new(AoiConfig { keyframe_ticks: 40, ..SETTINGS }, w.bounds()).expect("aoi");
        a.add_viewer(LinkId(1), PlayerId(1));
        let mid = a.grid().cell_of(1750.0, 1550.0);
        let ticks = [1, 2, 3, 4, 6, 7, 8, 9, 10];
        let got = seen_ticks(&mut a, &mut w, &ticks, mid, |t, w| {
            if t == 4 {
                nudge(w, 2);
            }
        });
        assert!(got.contains(&6), "the change of tick 4 goes out on tick 6: {got:?}");
    }

    #[test]
    fn with_keyframes_a_change_is_sent_when_the_budget_speeds_a_tier_up() {
        // A walking crowd next door slows the mid tier down; it leaves just
        // after a change in the mid cell, and the tier speeds up again.
        let mut players = vec![(1, 1550.0, 1550.0), (2, 1750.0, 1550.0)];
        for i in 0..300u32 {
            players.push((100 + i, 1610.0 + (i % 80) as f32, 1510.0 + (i / 80) as f32 * 5.0));
        }
        let mut w = world(&players);
        for i in 0..300u32 {
            w.set_direction(PlayerId(100 + i), Direction::new(0.0, 1.0).expect("dir"), 0);
        }
        let mut a =
            Aoi::new(AoiConfig { keyframe_ticks: 200, budget_bytes: 1500, ..SETTINGS }, w.bounds()).expect("aoi");
        a.add_viewer(LinkId(1), PlayerId(1));
        let mid = a.grid().cell_of(1750.0, 1550.0);
        let ticks: Vec<u64> = (1..=60).collect();
        let got = seen_ticks(&mut a, &mut w, &ticks, mid, |t, w| {
            w.step(0.001);
            if t == 34 {
                nudge(w, 2);
            }
            if t == 36 {
                for i in 0..300u32 {
                    w.remove(PlayerId(100 + i));
                }
            }
        });
        assert!(got.iter().any(|&t| t > 34 && t < 60), "the change of tick 34 is sent: {got:?}");
    }

    #[test]
    fn with_keyframes_ticks_that_run_every_other_number_still_get_keyframes() {
        let mut w = world(&[(1, 1550.0, 1550.0), (2, 1650.0, 1650.0)]);
        let mut a = Aoi::new(AoiConfig { keyframe_ticks: 8, ..SETTINGS }, w.bounds()).expect("aoi");
        a.add_viewer(LinkId(1), PlayerId(1));
        let near = a.grid().cell_of(1650.0, 1650.0);
        let ticks: Vec<u64> = (1..=50).map(|k| 2 * k).collect();
        let got = seen_ticks(&mut a, &mut w, &ticks, near, |_, _| {});
        assert!(got.len() >= 1 + 100 / 8 - 1, "a still neighbour once a keyframe over 100 ticks: {got:?}");
        assert!(got.windows(2).all(|p| p[1] - p[0] <= 8), "never more than a keyframe apart: {got:?}");
    }
}
