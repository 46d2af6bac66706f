//! The place as this shard sees it, a tick at a time: the grid, this shard's
//! cells and the other shards' as streams ([`super::streams`]), the sockets'
//! viewer cells ([`super::viewers`]) and their views' frames
//! ([`super::views`]); clustered, the region bundles to publish and the
//! regions to hear from.
//!
//! **One mechanism.** A shard without area of interest is a grid of one cell
//! (the whole world) seen by everyone at every tick with no budget: the same
//! streams, views and deltas; only the cell size differs.
//!
//! Per tick the work is one encode per cell that changed (and per delta span
//! due), one pass over the viewers, and per view that has something to do a
//! walk of its stencil: no per-socket encoding and no per-socket search.

use super::grid::{CellId, Grid, GridError, RegionId};
use super::interest::Stencil;
use super::lag::RelayLag;
use super::links::LinkId;
use super::output::Recipients;
use super::own::OwnCells;
use super::streams::{Stream, Streams, OWN};
use super::viewers::{Form, Move, Viewers};
use super::views::{Area, Views};
use crate::sim::World;
use bytes::Bytes;
use mino_protocol::delta::MAX_SPAN;
use mino_protocol::view::FrameStamp;
use mino_protocol::view::{parse_item, BundleCell};
use mino_protocol::wire::Bounds;
use mino_protocol::{PlayerId, ShardId, Tick};
use std::collections::HashMap;

/// Ticks a region stays subscribed after no viewer needs it any more (2 s at
/// 20 Hz): subscriptions follow the players without churning at borders.
pub const REGION_KEEP_TICKS: u64 = 40;

/// Steps an occupied cell of another shard may go unheard here before it
/// is taken for empty, 72 (3.6 s at 20 Hz): a shard publishes each occupied
/// cell at every step, and a cell it emptied for [`MAX_SPAN`] steps more
/// ([`super::own`]), so one unheard for longer was emptied while its
/// bundles did not reach this shard (a Redis outage, a channel lost), or
/// they still do not. Shown as last heard, its players would stand there
/// for good. 8 steps over [`MAX_SPAN`] for bundles held back or bunched.
/// So is a cell that changed less than a slowest period before the last
/// step heard (emptied just before its bundles stopped): a view taking it
/// at a later phase was never due to send that change.
pub const STALE_STEPS: u64 = MAX_SPAN as u64 + 8;

/// Steps between two looks for stale cells ([`STALE_STEPS`]).
const STALE_SWEEP_STEPS: u64 = 16;

/// The slowest tier's period, steps.
const SLOWEST: u64 = super::interest::SLOWEST_PERIOD as u64;

/// How the area is cut and seen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AreaSettings {
    /// Cell side, world units.
    pub(crate) cell_size: f32,
    /// View radius, world units.
    pub(crate) view_radius: f32,
    /// Ticks a cell the viewer left stays in view.
    pub(crate) hysteresis_ticks: u64,
    /// Bytes a socket may get a tick on average (`usize::MAX`: no budget).
    pub(crate) budget_bytes: usize,
    /// The Welcome gives clients the grid and the view radius, so a view
    /// frame's sections may carry implied cells (protocol 7,
    /// `mino_protocol::view`); not in a place without area of interest.
    pub(crate) implied_cells: bool,
}

impl AreaSettings {
    /// The whole world as one cell, seen by everyone, with no budget.
    pub(crate) fn whole(bounds: &Bounds) -> AreaSettings {
        let side = (bounds.max_x() - bounds.min_x()).max(bounds.max_y() - bounds.min_y()).max(1.0);
        AreaSettings {
            cell_size: side,
            view_radius: 0.0,
            hysteresis_ticks: 0,
            budget_bytes: usize::MAX,
            implied_cells: false,
        }
    }
}

/// What one other shard's bundle brought.
#[derive(Clone, Debug)]
pub struct Relayed {
    /// Its publisher, tick and wall clock.
    pub stamp: FrameStamp,
    /// The publisher's step at that tick.
    pub step: u64,
    /// The bundle's items (`CellBundle.cell_items`), one copy for all its cells.
    pub items: Bytes,
    /// Its cells, verified, with where their items are in `items`.
    pub cells: Vec<BundleCell>,
}

/// This shard's area: see the module docs.
pub(crate) struct Aoi {
    settings: AreaSettings,
    grid: Grid,
    stencil: Stencil,
    /// Cells of the stencil's reach around the viewer cell, each way.
    reach: u32,
    own: OwnCells,
    streams: Streams,
    viewers: Viewers,
    views: Views,
    /// This shard's step: one a tick that ran.
    step: u64,
    /// Per region id: the last step a stream in it changed (none: never
    /// since the shard started).
    region_changed: Vec<Option<u64>>,
    /// Per relayed source: the last publisher step heard.
    heard: HashMap<ShardId, u64>,
    /// Other shards taken a tick late, and their bundles held back
    /// ([`super::lag`]); `None` in a place of at most two cells a side.
    relay_lag: Option<RelayLag>,
    /// Scratch: the bundles [`RelayLag::tick`] releases.
    released: Vec<Relayed>,
    /// The wall clocks of the bundles taken into the streams since last
    /// asked ([`Aoi::relayed`]).
    taken_times: Vec<u64>,
    /// Bundles dropped since last asked: nothing in them taken (but for
    /// cells of regions not heard), or their shard left while they were
    /// held.
    dropped: u64,
    /// Relayed cells taken for empty since last asked ([`STALE_STEPS`]).
    vacated: u64,
    regions: RegionInterest,
    moves: Vec<Move>,
    placed: Vec<u32>,
    remap: Vec<u32>,
}

impl Aoi {
    /// The area over `bounds` as `settings` cut it, this shard being `me`.
    ///
    /// Errors: [`GridError`] for a cell size the grid cannot have.
    pub(crate) fn new(settings: AreaSettings, bounds: &Bounds, me: ShardId) -> Result<Aoi, GridError> {
        let grid = Grid::new(bounds, settings.cell_size)?;
        let radius_cells = settings.view_radius / settings.cell_size;
        let cells = (grid.columns() as usize) * (grid.rows() as usize);
        let regions = (grid.region_columns() * grid.rows().div_ceil(super::grid::REGION_CELLS)) as usize + 1;
        let stencil = Stencil::new(radius_cells);
        // The stencil's slower tiers begin two cells out ((2, 0) is of one
        // whatever the radius): where they are, another shard's and this
        // one's may come due together, which a tick's lag keeps apart. Not
        // in a place of one cell (no area of interest), nor of two a side.
        let relay_lag = (grid.columns().max(grid.rows()) > 2).then(RelayLag::default);
        Ok(Aoi {
            settings,
            stencil,
            reach: radius_cells.max(0.0).ceil() as u32 + 2,
            grid,
            own: OwnCells::default(),
            streams: Streams::new(cells, me),
            viewers: Viewers::new(settings.hysteresis_ticks),
            views: Views::new(cells),
            step: 0,
            region_changed: vec![None; regions],
            heard: HashMap::new(),
            relay_lag,
            released: Vec::new(),
            taken_times: Vec::new(),
            dropped: 0,
            vacated: 0,
            regions: RegionInterest::default(),
            moves: Vec::new(),
            placed: Vec::new(),
            remap: Vec::new(),
        })
    }

    /// The grid.
    pub(crate) fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The view stencil (tests: a client reads implied cells with it).
    #[cfg(test)]
    pub(crate) fn stencil(&self) -> &Stencil {
        &self.stencil
    }

    /// The settings.
    pub(crate) fn settings(&self) -> &AreaSettings {
        &self.settings
    }

    /// Sockets with a viewer.
    #[cfg(test)]
    pub(crate) fn viewers_len(&self) -> usize {
        self.viewers.len()
    }

    /// Tests only: how many streams of other shards are kept.
    #[cfg(test)]
    pub(crate) fn relayed_streams(&self) -> usize {
        self.streams.cells().map(|(_, slot)| slot.streams.iter().filter(|(s, _)| *s != OWN).count()).sum()
    }

    /// Tests only: the view of `link` holds or owes something out of the
    /// ordinary (see [`Views::owes`]).
    #[cfg(test)]
    pub(crate) fn view_owes(&self, link: LinkId) -> bool {
        self.view_of(link).is_some_and(|i| self.views.owes(i))
    }

    /// A socket was admitted, taking frames of `form`.
    pub(crate) fn add_viewer(&mut self, link: LinkId, player: PlayerId, form: Form) {
        self.viewers.add(link, player, form);
    }

    /// A socket is gone.
    pub(crate) fn remove_viewer(&mut self, link: LinkId) {
        if let Some(view) = self.viewers.remove(link) {
            self.views.leave(view);
        }
    }

    /// The socket behind `link` lost frames: it starts over next tick.
    pub(crate) fn resync(&mut self, link: LinkId) {
        self.viewers.resync(link);
    }

    /// The client behind `link` asked for its view whole (`Shard::refill`).
    pub(crate) fn refill(&mut self, link: LinkId) -> bool {
        self.viewers.refill(link)
    }

    /// The view of `link` in the last tick's frame: an index into the tick's
    /// views (`None`: not placed yet).
    pub(crate) fn view_of(&self, link: LinkId) -> Option<usize> {
        self.viewers.view_of(link).map(|v| v as usize)
    }

    /// Another shard's bundle, verified by the subscriber. A cell off this
    /// grid, or of a region no view needed lately (see [`Aoi::regions`]),
    /// is dropped; a step older than what was heard from the shard by
    /// more than the history means it restarted: its cells start over.
    /// A shard taken late ([`super::lag`]) has it taken at the start of the
    /// tick after next. What came of it is told by [`Aoi::relayed`].
    pub(crate) fn relay(&mut self, bundle: Relayed) {
        let (shard, step) = (bundle.stamp.shard, bundle.step);
        let heard = self.heard.entry(shard).or_insert(0);
        if step + u64::from(mino_protocol::delta::MAX_SPAN) < *heard {
            self.shard_left(shard);
        }
        let heard = self.heard.entry(shard).or_insert(0);
        *heard = (*heard).max(step);
        let bundle = match self.relay_lag.as_mut() {
            Some(lag) => match lag.hold(bundle) {
                Some(bundle) => bundle,
                None => return,
            },
            None => bundle,
        };
        self.take(bundle);
    }

    /// Since the last call: the wall clocks (ms) of the bundles taken into
    /// the streams (each once, when taken: a held one a tick after it came),
    /// and how many were dropped (nothing in them taken but for cells of
    /// regions not heard, or their shard left while they were held).
    pub(crate) fn relayed(&mut self) -> (std::vec::Drain<'_, u64>, u64) {
        (self.taken_times.drain(..), std::mem::take(&mut self.dropped))
    }

    /// Other shards' cells taken for empty since the last call (not heard
    /// for [`STALE_STEPS`]).
    pub(crate) fn vacated(&mut self) -> u64 {
        std::mem::take(&mut self.vacated)
    }

    /// Takes a bundle into the streams, noting it taken or dropped.
    fn take(&mut self, bundle: Relayed) {
        let Relayed { stamp, step, items, cells } = bundle;
        let source = self.streams.source_of(stamp.shard);
        let src = self.streams.source_mut(source);
        src.ran(step, stamp.tick.0);
        src.heard_at = self.step;
        let mut taken = false;
        // Cells of regions no view needs (a bundle still on its way when
        // the region was dropped) are not taken: see [`Aoi::regions`].
        // (A bundle is one region's: the answer is kept for the next cell.)
        // Such a bundle is not counted dropped; one with nothing else is.
        let mut asked = None;
        let mut wanted = cells.is_empty();
        for cell in cells {
            let id = CellId(cell.cell);
            let (Some(full), Some(region)) = (items.get(cell.full.clone()), self.grid.region_of(id)) else {
                wanted = true;
                continue;
            };
            let hears = match asked {
                Some((r, hears)) if r == region => hears,
                _ => self.regions.hears(region),
            };
            asked = Some((region, hears));
            if !hears {
                continue;
            }
            wanted = true;
            let occupied = parse_item(full).is_ok_and(|i| !i.body.is_empty());
            let deltas: Vec<(u32, Bytes)> = cell
                .deltas
                .iter()
                .filter(|(_, r)| r.end <= items.len())
                .map(|(span, r)| (*span, items.slice(r.clone())))
                .collect();
            let changed = deltas.iter().any(|(span, _)| *span == 1);
            let Some(stream) = self.streams.get_or_insert(source, id, || Stream::new(step, step + 1)) else {
                continue;
            };
            // A cell new here, or with steps lost on the way, is news to
            // the views as much as a change: none of them may stay idle.
            let news = stream.push(step, items.slice(cell.full.clone()), occupied, changed, &deltas);
            taken = true;
            if news {
                if let Some(r) = self.region_changed.get_mut(region.0 as usize) {
                    *r = Some(self.step);
                }
            }
        }
        if taken {
            self.taken_times.push(stamp.server_time_ms);
        } else if wanted {
            self.dropped += 1;
        }
    }

    /// Other shards' cells not heard for [`STALE_STEPS`], occupied or
    /// changed just before, stand empty from now on ([`Stream::vacate`]):
    /// those its shard was heard past by that many steps (it publishes them
    /// no more), and every one of a shard not heard at all for that many of
    /// this shard's steps. Heard again, a cell comes back whole.
    fn vacate_stale(&mut self) {
        if self.streams.relayed().next().is_none() {
            return;
        }
        let step = self.step;
        // Per source: its newest step heard, and whether it went silent.
        let sources: Vec<Option<(u64, bool)>> = (0..self.streams.sources_len())
            .map(|id| {
                let source = self.streams.source(id);
                let newest = *self.heard.get(&source.shard)?;
                (id != OWN && source.live).then_some((newest, step > source.heard_at + STALE_STEPS))
            })
            .collect();
        let (grid, region_changed, vacated) = (&self.grid, &mut self.region_changed, &mut self.vacated);
        let empty = Bytes::from_static(&mino_protocol::view::EMPTY_FULL_ITEM);
        self.streams.each_mut(|cell, source, stream| {
            let Some(&Some((newest, silent))) = sources.get(usize::from(source)) else { return };
            // Occupied, or changed less than a slowest period before its
            // last step: a view whose due step for it comes at a later phase
            // never sent that change. (A cell emptied and published for its
            // 64 still steps, as a shard does, gave every view its due step.
            // Not a stream vacated already, or heard once: its last step is
            // not trusted, and nothing of it is owed.)
            let latest = stream.latest();
            let owed = stream.occupied()
                || stream.trusts(latest) && stream.last_change().is_some_and(|c| c + SLOWEST - 1 > latest);
            if owed && (silent || latest + STALE_STEPS < newest) {
                stream.vacate(newest, empty.clone());
                *vacated += 1;
                if let Some(r) = grid.region_of(cell).and_then(|r| region_changed.get_mut(r.0 as usize)) {
                    *r = Some(step);
                }
            }
        });
    }

    /// Another shard left the place: its cells are dropped here, and every
    /// socket is told to drop them.
    pub(crate) fn shard_left(&mut self, shard: ShardId) {
        self.heard.remove(&shard);
        if let Some(lag) = self.relay_lag.as_mut() {
            self.dropped += lag.forget(shard);
        }
        let Some(source) = self.streams.relayed().find(|(_, s)| s.shard == shard).map(|(i, _)| i) else { return };
        self.views.reset_all(source, &self.streams);
        self.streams.drop_source(source);
    }

    /// Runs the tick: encodes this shard's cells (step one more), moves the
    /// viewers, and assembles every view's frames; `clustered` also tracks
    /// the regions to hear from. Each socket's frames are
    /// [`Aoi::frames_of`] its view.
    /// `link_of` names a player's socket (the shard's links).
    pub(crate) fn tick(
        &mut self,
        world: &World,
        tick: Tick,
        clustered: bool,
        link_of: impl Fn(PlayerId) -> Option<LinkId>,
    ) {
        self.step += 1;
        let step = self.step;
        if let Some(lag) = self.relay_lag.as_mut() {
            let mut released = std::mem::take(&mut self.released);
            lag.tick(step, self.heard.iter().map(|(&shard, &heard)| (shard, heard)), &mut released);
            for bundle in released.drain(..) {
                self.take(bundle);
            }
            self.released = released;
        }
        if step.is_multiple_of(STALE_SWEEP_STEPS) {
            self.vacate_stale();
        }
        self.streams.source_mut(OWN).ran(step, tick.0);
        self.own.encode(step, &self.grid, world, world.motion(), &mut self.streams);
        for &cell in self.own.changed() {
            if let Some(r) = self.grid.region_of(cell).and_then(|r| self.region_changed.get_mut(r.0 as usize)) {
                *r = Some(step);
            }
        }
        if self.views.merge(&self.grid, self.reach, &mut self.remap) {
            self.viewers.remap(&self.remap);
        }
        self.viewers.update(tick.0, &self.grid, world, self.own.crossed(), link_of, &mut self.moves);
        let area = Area {
            grid: &self.grid,
            stencil: &self.stencil,
            streams: &self.streams,
            budget: self.settings.budget_bytes,
            implied_cells: self.settings.implied_cells,
            step,
            region_changed: &self.region_changed,
            reach: self.reach,
        };
        self.views.place(&self.moves, &area, &mut self.placed);
        for (m, &view) in self.moves.iter().zip(&self.placed) {
            self.viewers.place(m.link, view);
        }
        self.views.tick(&area);
        if clustered {
            for r in self.views.live_regions() {
                self.regions.note(r, tick.0);
            }
        }
        self.streams.settle();
    }

    /// The frames of view `view` this tick (websocket-framed; usually one,
    /// none when nothing is new).
    pub(crate) fn frames_of(&self, view: usize) -> &[Bytes] {
        self.views.frames(view as u32)
    }

    /// The sockets whose view has frames this tick, with their view: one
    /// pass over the viewers, none when no view has frames.
    pub(crate) fn recipients(&self) -> Recipients {
        if self.views.with_frames().is_empty() {
            return Recipients::default();
        }
        let links = self.viewers.placed().filter(|&(_, view)| !self.frames_of(view as usize).is_empty()).collect();
        Recipients::new(links)
    }

    /// How many views the last tick assembled.
    pub(crate) fn assembled(&self) -> usize {
        self.views.assembled()
    }

    /// Views of the tick (indices up to this).
    pub(crate) fn views_len(&self) -> usize {
        self.views.capacity()
    }

    /// This tick's own cells' bundles, by region, for the other shards.
    pub(crate) fn bundles(&self) -> Vec<(RegionId, Bytes)> {
        self.own.bundles(self.step, &self.grid, &self.streams)
    }

    /// This shard's step (one a tick that ran).
    pub(crate) fn step(&self) -> u64 {
        self.step
    }

    /// The regions to hear from, when the set changed since the last call.
    ///
    /// The other shards' streams of a region dropped from the set are
    /// dropped with it: nothing of them is heard until the region is needed
    /// again, and by then a cell its shard emptied and stopped publishing
    /// (64 still steps after: [`super::own`]) would stand here as it last
    /// stood, for good: a datagram view's refresh showed its players where
    /// they had stood, and a socket that joined beside it waited for it in
    /// a view of its own. Heard again, a region's cells start their streams
    /// anew from the next bundle (full forms first).
    pub(crate) fn regions(&mut self, tick: u64) -> Option<Vec<RegionId>> {
        let (now, left) = self.regions.settle(tick)?;
        if !left.is_empty() {
            let grid = &self.grid;
            self.streams
                .drop_relayed_where(|cell| grid.region_of(cell).is_some_and(|r| left.binary_search(&r).is_ok()));
        }
        Some(now)
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

    /// True when a view needed `region` lately: its bundles are taken.
    fn hears(&self, region: RegionId) -> bool {
        self.last_needed.contains_key(&region)
    }

    /// The set and the regions that left it (sorted), when it changed.
    fn settle(&mut self, tick: u64) -> Option<(Vec<RegionId>, Vec<RegionId>)> {
        self.last_needed.retain(|_, last| tick.saturating_sub(*last) <= REGION_KEEP_TICKS);
        let mut now: Vec<RegionId> = self.last_needed.keys().copied().collect();
        now.sort_unstable();
        if now == self.current {
            return None;
        }
        let left = self.current.iter().filter(|r| now.binary_search(r).is_err()).copied().collect();
        self.current.clone_from(&now);
        Some((now, left))
    }
}

#[cfg(test)]
mod tests;
