//! An observer: one of a sample of bots (`--observers`) that keeps the
//! per-entry books of the area of interest, so that the other bots stay cheap.
//! From the shared table of every bot's latest server-reported position
//! ([`Positions`]) it knows who is within its view radius, and from the cell
//! frames it receives who it has been shown. Once a tick (on its own-shard
//! frame) it checks the table; on every cell it notes who was shown.
//!
//! What it counts (see [`Tally`] and [`Metric`]):
//! - **view enter**: a player walks (or is walked up to) within the view
//!   radius; the latency runs from the check that first found it inside
//!   (when the loadgen knew both positions) to the arrival of the first frame
//!   showing it at or after its position of that moment (same shard clock),
//!   in ms, and in server ticks between those two frames' times. A frame
//!   that had already shown it counts as 0.
//! - **unseen entries**: entries no frame showed while the player stayed
//!   inside (it left again, or [`PENDING_LIMIT`] passed).
//! - **pop-in**: a player first shown (or shown again after more than the
//!   view grace) already inside the view radius, having been known to be
//!   outside: it was never shown in the prefetch ring.
//! - **blink**: a player shown while inside the view radius, still inside,
//!   and neither in a frame nor in what the client holds (protocol 4 holds a
//!   cell until it is forgotten) for longer than the grace; once per episode.
//! - **ideal crop**: 10 bytes times the players within the radius (itself
//!   included), each tick checked, against the entry bytes (the items'
//!   bodies), the other bytes of view frames (the envelope, sections'
//!   headers, cells' references, items' tags and lengths: by part in
//!   [`crate::parts`]), and every byte received.
//!
//! Entries and pop-ins count only after the observer has been in its
//! session for the view grace plus a second (its first view has settled),
//! and only for players it knew to be outside before: a player that joins
//! (or resumes) inside the radius is neither.
//!
//! **Cost.** A check does not read every bot of the table: a bot far
//! outside the radius cannot come within it before both have walked the gap
//! between them, so it is read again only after that many checks (at most
//! [`MAX_DELAY`]; a timing wheel keeps who is due). Bots inside the radius or
//! near it are read every check. A check thus costs about the players near
//! the observer plus `N / MAX_DELAY`, not `N`.

use crate::cells::ENTRY_BYTES;
use crate::event::CellFrame;
use crate::parts::FrameParts;
use crate::positions::{Positions, Report};
use crate::stats::{Metric, Stats, Tally};
use crate::world::Grid;
use mino_protocol::entry::Entry;
use mino_protocol::wire::Bounds;
use mino_protocol::{quantize, PlayerId};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// An entry no frame has shown after this long counts as unseen.
pub const PENDING_LIMIT: Duration = Duration::from_secs(5);

/// A player counts as outside again only beyond the view radius plus this
/// much, world units: positions are quantized, and a walker along the
/// radius must not enter and leave every tick.
pub const LEAVE_MARGIN: f32 = 2.0;

/// How long an observer waits after its Welcome, beyond the view grace,
/// before it counts entries and pop-ins: its first view settles meanwhile.
pub const WARM_UP: Duration = Duration::from_secs(1);

/// Checks between two prunings of the players shown long ago.
const PRUNE_EVERY: u32 = 256;

/// Most checks a bot of the table goes unread: far bots are read this
/// seldom (1.6 s at 20 Hz).
pub const MAX_DELAY: usize = 32;

/// Checks until a bot with no fresh report is read again.
const ABSENT_DELAY: usize = 8;

/// Safety factor on how far two walkers may close in between two checks
/// (checks can come further apart than the last two did).
const APPROACH_SAFETY: f32 = 2.0;

/// The default share of bots that observe (`--observers`), percent.
pub const DEFAULT_SHARE_PCT: f64 = 5.0;

/// The fewest observers by default (fewer only when there are fewer bots).
pub const DEFAULT_MIN: usize = 20;

/// How many bots observe, as given to `--observers`: a count (`50`), a
/// share (`5%`), or the default ([`DEFAULT_SHARE_PCT`] of the bots, at least
/// [`DEFAULT_MIN`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum ObserverShare {
    /// 5 % of the bots, at least 20.
    #[default]
    Default,
    /// Exactly this many (at most every bot; 0: none).
    Count(usize),
    /// This percent of the bots, 0 to 100.
    Percent(f64),
}

impl std::str::FromStr for ObserverShare {
    type Err = String;

    /// Parses `N` or `P%`.
    fn from_str(text: &str) -> Result<ObserverShare, String> {
        let t = text.trim();
        let bad = || format!("invalid --observers {text:?}: give a count (e.g. 50) or a share (e.g. 5%)");
        match t.strip_suffix('%') {
            Some(p) => {
                let v: f64 = p.trim().parse().map_err(|_| bad())?;
                (0.0..=100.0).contains(&v).then_some(ObserverShare::Percent(v)).ok_or_else(bad)
            }
            None => t.parse().map(ObserverShare::Count).map_err(|_| bad()),
        }
    }
}

/// Which bots of a run observe: `count` of the first `bots`, spread evenly
/// over their indexes (bots join in index order, so observers join
/// throughout the ramp, and spread over the targets like the others).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Observers {
    /// Bots in the run (the largest step's count for `steps`): the size of
    /// the shared position table.
    pub bots: usize,
    /// Observers among them.
    pub count: usize,
}

impl Observers {
    /// The observers `share` picks among `bots` bots.
    pub fn of(share: ObserverShare, bots: usize) -> Observers {
        let count = match share {
            ObserverShare::Default => {
                ((bots as f64 * DEFAULT_SHARE_PCT / 100.0).ceil() as usize).max(DEFAULT_MIN.min(bots))
            }
            ObserverShare::Count(n) => n,
            ObserverShare::Percent(p) => (bots as f64 * p / 100.0).ceil() as usize,
        };
        Observers { bots, count: count.min(bots) }
    }

    /// True when bot `index` observes.
    pub fn includes(&self, index: usize) -> bool {
        if self.count == 0 || index >= self.bots {
            return false;
        }
        // Bot i observes when the even spread of `count` over `bots` steps at
        // i: exactly `count` bots, the first one included.
        let (i, n, k) = (index as u128, self.bots as u128, self.count as u128);
        (i * k).div_ceil(n) != ((i + 1) * k).div_ceil(n)
    }
}

/// What an observer knows of one bot of the table.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Near {
    /// No fresh report, or no check yet.
    Unknown,
    /// Beyond the view radius at the last check.
    Outside,
    /// Within the view radius since `since` (ms after the observer's
    /// Welcome: 8 bytes a bot of the table, for every observer); `walked_in`
    /// when it was known outside before.
    Inside { since: u32, walked_in: bool },
}

/// The last frame that showed a player.
#[derive(Clone, Copy, Debug)]
struct Seen {
    at: Instant,
    time_ms: u32,
    blinked: bool,
}

/// An entry not shown yet.
#[derive(Clone, Copy, Debug)]
struct Pending {
    player: PlayerId,
    /// When the loadgen knew of the entry.
    at: Instant,
    /// The entering player's report time (its shard's clock).
    time_ms: u32,
    /// Where it was reported then, on the wire's grid (quantized).
    position: (u16, u16),
}

/// The bot's own latest position.
#[derive(Clone, Copy, Debug)]
struct Me {
    position: (f32, f32),
}

/// One observing session.
pub struct Observer {
    board: Arc<Positions>,
    own_id: PlayerId,
    bounds: Bounds,
    radius: f32,
    radius2: f32,
    leave2: f32,
    grace: Duration,
    tick_ms: f64,
    /// How far a walker goes in a tick, world units.
    step: f32,
    /// Bots of the table due at each of the coming checks (a timing wheel;
    /// `cursor` is this check's slot).
    wheel: Vec<Vec<u32>>,
    cursor: usize,
    last_check: Option<Instant>,
    /// The Welcome: `Near::Inside::since` counts from here.
    epoch: Instant,
    warm_after: Instant,
    me: Option<Me>,
    near: Vec<Near>,
    ids: Vec<PlayerId>,
    index_of: HashMap<PlayerId, usize>,
    seen: HashMap<PlayerId, Seen>,
    pending: Vec<Pending>,
    checks: u32,
    unflushed: [u64; Tally::ALL.len()],
}

fn later_or_same(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) as i32 >= 0
}

impl Observer {
    /// The observer of bot `me_index` (player `own_id`), reading `board`,
    /// over `grid` (view radius and grace) with positions quantized over
    /// `bounds`, ticks `tick_period` long and walkers going `step` world
    /// units a tick, welcomed at `now`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        board: Arc<Positions>,
        me_index: usize,
        own_id: PlayerId,
        grid: &Grid,
        bounds: Bounds,
        tick_period: Duration,
        step: f32,
        now: Instant,
    ) -> Observer {
        let n = board.len();
        let leave = grid.view_radius + LEAVE_MARGIN;
        let mut wheel = vec![Vec::new(); MAX_DELAY];
        wheel[0] = (0..n as u32).filter(|&i| i as usize != me_index).collect();
        Observer {
            board,
            own_id,
            bounds,
            radius: grid.view_radius,
            radius2: grid.view_radius * grid.view_radius,
            leave2: leave * leave,
            grace: grid.view_grace,
            tick_ms: tick_period.as_secs_f64() * 1000.0,
            step: step.max(0.0),
            wheel,
            cursor: 0,
            last_check: None,
            epoch: now,
            warm_after: now + grid.view_grace + WARM_UP,
            me: None,
            near: vec![Near::Unknown; n],
            ids: vec![PlayerId(0); n],
            index_of: HashMap::new(),
            seen: HashMap::new(),
            pending: Vec::new(),
            checks: 0,
            unflushed: [0; Tally::ALL.len()],
        }
    }

    fn count(&mut self, tally: Tally, n: u64) {
        self.unflushed[tally as usize] += n;
    }

    /// Any message of `len` bytes arrived.
    pub fn on_message(&mut self, len: usize) {
        self.count(Tally::ObservedBytes, len as u64);
    }

    /// A view frame's bytes by part ([`FrameParts`]).
    pub fn on_parts(&mut self, parts: &FrameParts) {
        for (tally, n) in [
            (Tally::ObservedFramingBytes, parts.framing),
            (Tally::ObservedReferenceBytes, parts.references),
            (Tally::ObservedFullBytes, parts.full),
            (Tally::ObservedDeltaBytes, parts.delta),
            (Tally::ObservedSupplementBytes, parts.supplement),
            (Tally::ObservedForgetBytes, parts.forget),
            (Tally::ObservedImpliedBytes, parts.implied),
            (Tally::ObservedCells, parts.cells),
            (Tally::ObservedEmptyDeltas, parts.empty_deltas),
            (Tally::ObservedImpliedCells, parts.implied_cells),
            (Tally::ObservedSupplementEntries, parts.supplement_entries),
            (Tally::ObservedSupplementEntriesHeld, parts.supplement_entries_held),
        ] {
            self.count(tally, n as u64);
        }
    }

    /// A cell updated at `now` by `len` bytes of a view frame, `entries` of
    /// them its items' bodies: notes who it shows, resolves their pending
    /// entries and counts pop-ins.
    pub fn on_cell(&mut self, c: &CellFrame, len: usize, entries: usize, now: Instant, stats: &Stats, bot: usize) {
        self.count(Tally::ObservedEntryBytes, entries as u64);
        self.count(Tally::ObservedHeaderBytes, len.saturating_sub(entries) as u64);
        let time_ms = c.time_ms;
        let warm = now >= self.warm_after;
        for p in c.entries.iter() {
            let id = p.id;
            if id == self.own_id {
                continue;
            }
            let first = self.seen.get(&id).is_none_or(|s| now.saturating_duration_since(s.at) > self.grace);
            if first && warm && self.pops_in(id, quantize::world_position(&self.bounds, p.x, p.y)) {
                self.count(Tally::PopIns, 1);
            }
            self.seen.insert(id, Seen { at: now, time_ms, blinked: false });
            if let Some(k) = self.pending.iter().position(|e| e.player == id && later_or_same(time_ms, e.time_ms)) {
                let e = self.pending.swap_remove(k);
                self.record_entry(stats, bot, now.saturating_duration_since(e.at), time_ms.wrapping_sub(e.time_ms));
            }
        }
    }

    /// Whether `id`, first shown at `position`, pops in.
    fn pops_in(&self, id: PlayerId, position: (f32, f32)) -> bool {
        let Some(me) = self.me else { return false };
        let inside = dist2(me.position, position) <= self.radius2;
        let known_outside = self
            .index_of
            .get(&id)
            .is_some_and(|&i| matches!(self.near[i], Near::Outside | Near::Inside { walked_in: true, .. }));
        inside && known_outside
    }

    fn record_entry(&self, stats: &Stats, bot: usize, latency: Duration, ticks_ms: u32) {
        stats.record(bot, Metric::ViewEnter, latency);
        let ticks = f64::from(ticks_ms) / self.tick_ms.max(f64::MIN_POSITIVE);
        stats.record_value(bot, Metric::ViewEnterTicks, (ticks * 1000.0).round() as u64);
    }

    /// The bot's own frame of a new own-shard tick put it at `position` at
    /// `now`: checks every bot of the table, and adds what was counted to
    /// the run's tallies.
    pub fn check(&mut self, position: (f32, f32), now: Instant, stats: &Stats, bot: usize) {
        self.me = Some(Me { position });
        let warm = now >= self.warm_after;
        let closing = self.closing_per_check(now);
        let mut inside_count = 1u64; // itself
        let due = std::mem::take(&mut self.wheel[self.cursor]);
        for &index in &due {
            let i = index as usize;
            let delay = match self.read(i, now) {
                Some(r) => {
                    let d2 = dist2(position, (r.x, r.y));
                    inside_count += u64::from(d2 <= self.radius2);
                    self.step(i, &r, d2, now, warm, stats, bot);
                    let gap = d2.sqrt() - self.radius - LEAVE_MARGIN;
                    if gap > 0.0 && closing > 0.0 {
                        (gap / closing) as usize
                    } else {
                        1
                    }
                }
                None => ABSENT_DELAY,
            };
            let slot = (self.cursor + delay.clamp(1, MAX_DELAY - 1)) % MAX_DELAY;
            self.wheel[slot].push(index);
        }
        let mut due = due;
        due.clear();
        self.wheel[self.cursor] = due; // keeps the allocation for its next turn
        self.cursor = (self.cursor + 1) % MAX_DELAY;
        self.expire(now);
        self.count(Tally::ObservedTicks, 1);
        self.count(Tally::IdealBytes, inside_count * ENTRY_BYTES as u64);
        self.flush(stats);
        self.checks = self.checks.wrapping_add(1);
        if self.checks.is_multiple_of(PRUNE_EVERY) {
            let keep = self.grace * 4;
            self.seen.retain(|_, s| now.saturating_duration_since(s.at) <= keep);
        }
    }

    /// The fresh report of bot `i`, noting a new player in its slot; None
    /// (and its state forgotten) when it has none.
    fn read(&mut self, i: usize, now: Instant) -> Option<Report> {
        let report = self.board.read(i).filter(|r| now.saturating_duration_since(r.at) <= self.grace);
        let Some(r) = report else {
            self.forget(i);
            return None;
        };
        if r.player != self.ids[i] {
            self.forget(i);
            self.index_of.remove(&self.ids[i]);
            self.ids[i] = r.player;
            self.index_of.insert(r.player, i);
        }
        Some(r)
    }

    /// How far two walkers may close in before the next check, world units:
    /// both walking at each other for as many ticks as the last two checks
    /// were apart, times [`APPROACH_SAFETY`]; 0 for the first check (every
    /// bot is then read at the next one too).
    fn closing_per_check(&mut self, now: Instant) -> f32 {
        let last = self.last_check.replace(now);
        let Some(last) = last else { return 0.0 };
        let ticks = (now.saturating_duration_since(last).as_secs_f64() * 1000.0 / self.tick_ms.max(1e-9)).ceil();
        2.0 * self.step * (ticks.max(1.0) as f32) * APPROACH_SAFETY
    }

    /// One bot's state change at a check.
    #[allow(clippy::too_many_arguments)]
    fn step(&mut self, i: usize, r: &Report, d2: f32, now: Instant, warm: bool, stats: &Stats, bot: usize) {
        let (inside, outside) = (d2 <= self.radius2, d2 > self.leave2);
        let since = u32::try_from(now.saturating_duration_since(self.epoch).as_millis()).unwrap_or(u32::MAX);
        self.near[i] = match self.near[i] {
            Near::Unknown if inside => Near::Inside { since, walked_in: false },
            Near::Unknown if outside => Near::Outside,
            Near::Outside if inside => {
                if warm {
                    self.entered(r, now, stats, bot);
                }
                Near::Inside { since, walked_in: true }
            }
            Near::Inside { .. } if outside => {
                if let Some(k) = self.pending.iter().position(|e| e.player == r.player) {
                    self.pending.swap_remove(k);
                    self.count(Tally::ViewEntersUnseen, 1);
                }
                Near::Outside
            }
            Near::Inside { since, walked_in } => {
                self.blink_check(r.player, since, now);
                Near::Inside { since, walked_in }
            }
            other => other,
        };
    }

    /// `r`'s player just came within the radius.
    fn entered(&mut self, r: &Report, now: Instant, stats: &Stats, bot: usize) {
        self.count(Tally::ViewEnters, 1);
        let position = quantize::position(&self.bounds, r.x, r.y);
        let e = Pending { player: r.player, at: now.max(r.at), time_ms: r.time_ms, position };
        match self.seen.get(&r.player) {
            Some(s) if later_or_same(s.time_ms, e.time_ms) => self.record_entry(stats, bot, Duration::ZERO, 0),
            _ => self.pending.push(e),
        }
    }

    /// The client still holds `held` (players as the wire has them) at
    /// `now` (protocol 4 and on: a cell that did not change is not sent
    /// again, its players stay drawn until it is forgotten): each one
    /// already shown counts as shown now, so a player standing in a held
    /// cell never counts as a blink; and a pending entry of a player held
    /// where it was reported at its entry was shown by a frame that came
    /// before the entry was known (latency 0): a walker that stopped just
    /// inside the radius, whose cell then never changed, counted as unseen.
    pub fn still_held<'a>(&mut self, held: impl Iterator<Item = &'a Entry>, now: Instant, stats: &Stats, bot: usize) {
        for e in held {
            if let Some(s) = self.seen.get_mut(&e.id) {
                s.at = now;
            }
            if self.pending.is_empty() {
                continue;
            }
            if let Some(k) = self.pending.iter().position(|p| p.player == e.id && p.position == (e.x, e.y)) {
                self.pending.swap_remove(k);
                self.record_entry(stats, bot, Duration::ZERO, 0);
            }
        }
    }

    fn blink_check(&mut self, player: PlayerId, since_ms: u32, now: Instant) {
        let since = self.epoch + Duration::from_millis(u64::from(since_ms));
        let Some(s) = self.seen.get_mut(&player) else { return };
        if s.at >= since && !s.blinked && now.saturating_duration_since(s.at) > self.grace {
            s.blinked = true;
            self.count(Tally::Blinks, 1);
        }
    }

    /// Bot `i` has no fresh report (gone, or between sessions): its state
    /// and pending entry are dropped, not counted.
    fn forget(&mut self, i: usize) {
        self.near[i] = Near::Unknown;
        let id = self.ids[i];
        self.pending.retain(|e| e.player != id);
    }

    fn expire(&mut self, now: Instant) {
        let before = self.pending.len();
        self.pending.retain(|e| now.saturating_duration_since(e.at) < PENDING_LIMIT);
        let expired = (before - self.pending.len()) as u64;
        self.count(Tally::ViewEntersUnseen, expired);
    }

    /// Adds what was counted since the last flush to the run's tallies
    /// (done at every check, and at the end of a session).
    pub fn flush(&mut self, stats: &Stats) {
        for t in Tally::ALL {
            stats.add(t, std::mem::take(&mut self.unflushed[t as usize]));
        }
    }
}

fn dist2(a: (f32, f32), b: (f32, f32)) -> f32 {
    let (dx, dy) = (a.0 - b.0, a.1 - b.1);
    dx * dx + dy * dy
}

#[cfg(test)]
mod tests;

// Each observer holds a `Near` for every bot of the run.
const _: () = assert!(std::mem::size_of::<Near>() <= 8);
