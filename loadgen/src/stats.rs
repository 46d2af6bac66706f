//! Latency histograms and counters shared by every bot of a run, read in
//! windows (a scenario takes a [`Window`] at the end of each phase).
//!
//! Bots record into one of a few striped histograms (picked by bot index) so
//! that thousands of bots contend on a handful of short locks, and a window
//! merges the stripes. Latencies are kept in µs with 3 significant digits
//! (0.1 % resolution) up to [`MAX_RECORDED_US`]; longer values are clamped.
//! A window travels between processes (agent to coordinator) as an
//! [`EncodedWindow`] and merges there exactly ([`Window::alongside`]).
//! A part of a run (one transport's bots of a `--transport mix` run) has
//! stats of its own that pass everything on to the run's
//! ([`Stats::part_of`]), so each part and the whole are read in windows alike.

mod encoded;

pub use encoded::{DecodeError, EncodedWindow};

use crate::failure::FailureKind;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest latency recorded as is, µs (60 s); longer ones count as this.
pub const MAX_RECORDED_US: u64 = 60_000_000;
const SIGFIGS: u8 = 3;
const STRIPES: usize = 16;

/// What a latency sample measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// From the start of the TCP connect to the Welcome.
    Welcome,
    /// Between consecutive snapshots of the bot's own shard.
    SnapshotGap,
    /// Between consecutive snapshots of one other (relayed) shard.
    RelayedGap,
    /// Between consecutive snapshots of the bot's own shard, less a tick
    /// period for every tick between their two ticks (ticks in which the
    /// shard sent the socket nothing: with protocol 4's deltas, a socket
    /// whose cells did not change gets no frame): the gap a frame every tick
    /// would have had, so a standing crowd's figure times delivery, not
    /// stillness. With full frames, where every tick sends a frame, it
    /// differs from [`Metric::SnapshotGap`] only where ticks were missing.
    /// A bot cannot tell why a tick is missing: one the shard skipped after a
    /// stall (tick numbers count scheduled ticks: `mino_ticks_skipped_total`)
    /// or, over datagrams, one lost counts as silent too, so the figure hides
    /// stalls and loss. Read it beside the shards' skipped ticks (the crowd
    /// report has them) and [`Metric::LongestFreeze`].
    NewsGap,
    /// Arrival wall clock minus the snapshot's `server_time_ms` (same-host runs only).
    SnapshotAge,
    /// Ping to Pong round trip.
    Rtt,
    /// From the bot's socket close to the Welcome that resumed it.
    ResumeWelcome,
    /// From the bot's socket close to its first snapshot with itself in it after resuming.
    BackInPlace,
    /// Area of interest: between consecutive own-shard cells that list the bot.
    OwnCellGap,
    /// Area of interest: between consecutive frames of one (shard, cell) of the
    /// 8 cells around the bot's own, while that cell stays adjacent and had
    /// players in its previous frame.
    NeighbourGap,
    /// Observers: from a player coming within the view radius (as the bots'
    /// positions tell) to the arrival of the first frame showing it.
    ViewEnter,
    /// Observers: the same entry in server ticks (the showing frame's server
    /// time minus the entry's, over the tick period), recorded in thousandths
    /// of a tick so that its [`Summary`] reads in ticks.
    ViewEnterTicks,
    /// The longest gap between the bot's own shard's snapshots in each
    /// [`crate::freeze::FREEZE_SPAN`] of a session, one sample a span.
    LongestFreeze,
    /// Between consecutive snapshots of the bot's own shard as they reached
    /// its socket (the kernel's receive time, [`crate::stamped`]), not when
    /// the bot's thread got to them: [`Metric::SnapshotGap`] less most of the
    /// bots' own scheduling. Not all of it: a bot that reads late may take in
    /// one frame and part of the next in one read, which is stamped with the
    /// later arrival; and a bot that reads late enough fills its receive
    /// window, which holds the server's next writes back. Websockets only (no
    /// sample over WebTransport).
    SocketGap,
}

impl Metric {
    /// Every metric; index = position.
    pub const ALL: [Metric; 14] = [
        Metric::Welcome,
        Metric::SnapshotGap,
        Metric::RelayedGap,
        Metric::NewsGap,
        Metric::SnapshotAge,
        Metric::Rtt,
        Metric::ResumeWelcome,
        Metric::BackInPlace,
        Metric::OwnCellGap,
        Metric::NeighbourGap,
        Metric::ViewEnter,
        Metric::ViewEnterTicks,
        Metric::LongestFreeze,
        Metric::SocketGap,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// The metric's name in encoded windows and logs.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Welcome => "welcome",
            Metric::SnapshotGap => "snapshot_gap",
            Metric::RelayedGap => "relayed_gap",
            Metric::NewsGap => "news_gap",
            Metric::SnapshotAge => "snapshot_age",
            Metric::Rtt => "rtt",
            Metric::ResumeWelcome => "resume_welcome",
            Metric::BackInPlace => "back_in_place",
            Metric::OwnCellGap => "own_cell_gap",
            Metric::NeighbourGap => "neighbour_gap",
            Metric::ViewEnter => "view_enter",
            Metric::ViewEnterTicks => "view_enter_ticks",
            Metric::LongestFreeze => "longest_freeze",
            Metric::SocketGap => "socket_gap",
        }
    }

    /// The metric labelled `label` (see [`Metric::label`]).
    pub fn of_label(label: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.label() == label)
    }
}

/// [`Metric::NewsGap`]: the `gap` between two frames of the own shard whose
/// ticks are `ticks` apart (wrapping low bits: 1 for consecutive ticks),
/// less a `period` for each tick between them; at least zero. A tick
/// difference past a minute of ticks at 20 Hz (a shard restarted, its ticks
/// counted anew) takes nothing off.
pub fn news_gap(gap: Duration, ticks: u32, period: Duration) -> Duration {
    let silent = ticks.saturating_sub(1);
    if silent > 1_200 {
        return gap;
    }
    gap.saturating_sub(period * silent)
}

/// Percentiles of one latency metric, in ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Summary {
    /// Median, ms.
    pub p50: f64,
    /// 95th percentile, ms.
    pub p95: f64,
    /// 99th percentile, ms.
    pub p99: f64,
    /// Largest sample, ms.
    pub max: f64,
    /// Number of samples (0: every figure is 0 and means "no data").
    pub count: u64,
}

impl Summary {
    /// Summarizes a µs histogram.
    pub fn of(h: &Histogram<u32>) -> Summary {
        if h.is_empty() {
            return Summary::default();
        }
        let ms = |us: u64| (us as f64 / 1000.0 * 100.0).round() / 100.0;
        Summary {
            p50: ms(h.value_at_quantile(0.50)),
            p95: ms(h.value_at_quantile(0.95)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
            count: h.len(),
        }
    }
}

fn histogram() -> Histogram<u32> {
    // Bounds are constants that hdrhistogram accepts; a failure here is a bug in this file.
    Histogram::new_with_bounds(1, MAX_RECORDED_US, SIGFIGS).expect("valid histogram bounds")
}

/// One histogram per [`Metric`].
#[derive(Clone)]
pub struct Latencies([Histogram<u32>; Metric::ALL.len()]);

impl Latencies {
    fn new() -> Latencies {
        Latencies(std::array::from_fn(|_| histogram()))
    }

    fn record(&mut self, metric: Metric, us: u64) {
        self.0[metric.index()].saturating_record(us.clamp(1, MAX_RECORDED_US));
    }

    fn add(&mut self, other: &Latencies) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            // Same bounds on both sides, so adding cannot fail.
            let _ = a.add(b);
        }
    }

    fn reset(&mut self) {
        self.0.iter_mut().for_each(Histogram::reset);
    }

    /// The histogram of `metric` (µs).
    pub fn histogram(&self, metric: Metric) -> &Histogram<u32> {
        &self.0[metric.index()]
    }

    /// Percentiles of `metric`, ms.
    pub fn summary(&self, metric: Metric) -> Summary {
        Summary::of(self.histogram(metric))
    }
}

/// An area-of-interest total, counted like the [`Counters`] (bytes are
/// websocket payload bytes; headers of the websocket and TCP excluded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tally {
    /// Cells received (runs of view frames), cells.
    CellFrames,
    /// Bytes of those frames, bytes.
    CellBytes,
    /// Of those bytes, the players' entries: the items' bodies (full forms,
    /// deltas, supplements).
    CellEntryBytes,
    /// Observers: players that walked within the view radius.
    ViewEnters,
    /// Observers: such entries no frame showed while the player stayed
    /// inside (it left the radius again, disconnected, or 5 s passed).
    ViewEntersUnseen,
    /// Observers: players first shown already inside the view radius,
    /// having been known to be outside it (never shown in the prefetch ring).
    PopIns,
    /// Observers: players shown while inside the view radius, still inside,
    /// then in no frame for longer than the Welcome's `view_grace_ms`.
    Blinks,
    /// Observers: bytes of every message received.
    ObservedBytes,
    /// Observers: bytes of the entries of the cells received.
    ObservedEntryBytes,
    /// Observers: bytes of the cells received that are not entries (the
    /// envelope, sections' headers, cells' references, items' tags and
    /// lengths).
    ObservedHeaderBytes,
    /// Observers: 10 bytes times the players within the view radius (the
    /// observer included), summed over the ticks checked: what a perfect
    /// crop would have sent.
    IdealBytes,
    /// Observers: own-shard ticks checked.
    ObservedTicks,
    /// Sessions the server closed as too slow (close code 4009).
    TooSlowCloses,
    /// Observers: the view frames' FlatBuffers envelopes and sections'
    /// headers (shard, tick, cell count), bytes.
    ObservedFramingBytes,
    /// Observers: the cells' references in their sections (the id gap and
    /// mode, and an item count where several), bytes.
    ObservedReferenceBytes,
    /// Observers: full-form items (tag, length, body), bytes.
    ObservedFullBytes,
    /// Observers: delta items written out (tag, length, body), bytes.
    ObservedDeltaBytes,
    /// Observers: supplement items (tag, length, body), bytes.
    ObservedSupplementBytes,
    /// Observers: forget items (a tag), bytes.
    ObservedForgetBytes,
    /// Observers: sections' implied blocks (protocol 7: the view named, the
    /// due byte, the count and the bits), bytes.
    ObservedImpliedBytes,
    /// Observers: cells in view frames.
    ObservedCells,
    /// Observers: cells whose one item was an empty delta said by the
    /// cell's reference alone (no item bytes).
    ObservedEmptyDeltas,
    /// Observers: implied cells (an empty delta said by one bit).
    ObservedImpliedCells,
    /// Observers: players in supplements.
    ObservedSupplementEntries,
    /// Observers: of them, players the bot held in another cell of the
    /// shard before the frame (handed off between cells of its view).
    ObservedSupplementEntriesHeld,
}

impl Tally {
    /// Every tally; index = position.
    pub const ALL: [Tally; 25] = [
        Tally::CellFrames,
        Tally::CellBytes,
        Tally::CellEntryBytes,
        Tally::ViewEnters,
        Tally::ViewEntersUnseen,
        Tally::PopIns,
        Tally::Blinks,
        Tally::ObservedBytes,
        Tally::ObservedEntryBytes,
        Tally::ObservedHeaderBytes,
        Tally::IdealBytes,
        Tally::ObservedTicks,
        Tally::TooSlowCloses,
        Tally::ObservedFramingBytes,
        Tally::ObservedReferenceBytes,
        Tally::ObservedFullBytes,
        Tally::ObservedDeltaBytes,
        Tally::ObservedSupplementBytes,
        Tally::ObservedForgetBytes,
        Tally::ObservedImpliedBytes,
        Tally::ObservedCells,
        Tally::ObservedEmptyDeltas,
        Tally::ObservedImpliedCells,
        Tally::ObservedSupplementEntries,
        Tally::ObservedSupplementEntriesHeld,
    ];

    /// The view frames' parts an observer counts ([`crate::parts`]), in
    /// the order of [`crate::parts::FrameParts`]: framing, references, full
    /// forms, deltas, supplements, forgets, implied blocks (seven of
    /// [`Tally::ALL`]).
    pub const FRAME_PARTS: [Tally; 7] = {
        let (_, rest) = Tally::ALL.split_at(Tally::ObservedFramingBytes as usize);
        match rest.first_chunk::<7>() {
            Some(parts) => *parts,
            None => panic!("Tally::ALL holds the frame parts"),
        }
    };

    fn index(self) -> usize {
        self as usize
    }

    /// The tally's name in reports and logs.
    pub fn label(self) -> &'static str {
        match self {
            Tally::CellFrames => "cell_frames",
            Tally::CellBytes => "cell_bytes",
            Tally::CellEntryBytes => "cell_entry_bytes",
            Tally::ViewEnters => "view_enters",
            Tally::ViewEntersUnseen => "view_enters_unseen",
            Tally::PopIns => "pop_ins",
            Tally::Blinks => "blinks",
            Tally::ObservedBytes => "observed_bytes",
            Tally::ObservedEntryBytes => "observed_entry_bytes",
            Tally::ObservedHeaderBytes => "observed_header_bytes",
            Tally::IdealBytes => "ideal_bytes",
            Tally::ObservedTicks => "observed_ticks",
            Tally::TooSlowCloses => "too_slow_closes",
            Tally::ObservedFramingBytes => "observed_framing_bytes",
            Tally::ObservedReferenceBytes => "observed_reference_bytes",
            Tally::ObservedFullBytes => "observed_full_bytes",
            Tally::ObservedDeltaBytes => "observed_delta_bytes",
            Tally::ObservedSupplementBytes => "observed_supplement_bytes",
            Tally::ObservedForgetBytes => "observed_forget_bytes",
            Tally::ObservedImpliedBytes => "observed_implied_bytes",
            Tally::ObservedImpliedCells => "observed_implied_cells",
            Tally::ObservedCells => "observed_cells",
            Tally::ObservedEmptyDeltas => "observed_empty_deltas",
            Tally::ObservedSupplementEntries => "observed_supplement_entries",
            Tally::ObservedSupplementEntriesHeld => "observed_supplement_entries_held",
        }
    }
}

/// Running totals of a run. All monotonic except `connected`.
#[derive(Default)]
pub struct Counters {
    frames: AtomicU64,
    bytes: AtomicU64,
    own_snapshots: AtomicU64,
    relayed_snapshots: AtomicU64,
    chat_received: AtomicU64,
    frames_sent: AtomicU64,
    resyncs: AtomicU64,
    welcomes: AtomicU64,
    resumed: AtomicU64,
    fresh_rejoins: AtomicU64,
    back_in_place: AtomicU64,
    disconnects: AtomicU64,
    busy_refusals: AtomicU64,
    replaced: AtomicU64,
    misplaced: AtomicU64,
    errors: [AtomicU64; FailureKind::ALL.len()],
    tallies: [AtomicU64; Tally::ALL.len()],
    connected: AtomicI64,
}

/// A copy of [`Counters`] at one moment, or the difference of two. Sent
/// as is between processes (see [`EncodedWindow`]): the failure and tally
/// counts as arrays in the order of their `ALL` lists, which the
/// coordinator's protocol version pins.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterValues {
    /// Websocket messages received (every kind), frames.
    pub frames: u64,
    /// Payload bytes of those messages (websocket and TCP headers excluded), bytes.
    pub bytes: u64,
    /// Snapshots of the bots' own shards.
    pub own_snapshots: u64,
    /// Snapshots of other shards (relayed).
    pub relayed_snapshots: u64,
    /// Chat messages received.
    pub chat_received: u64,
    /// Messages the bots sent (hello, input, chat, ping, resync).
    pub frames_sent: u64,
    /// Resyncs the bots asked for (taking deltas over datagrams: a change
    /// missed, a datagram lost).
    pub resyncs: u64,
    /// Welcomes received (first joins and resumes).
    pub welcomes: u64,
    /// Welcomes that resumed the same player after a close.
    pub resumed: u64,
    /// Reconnects after a close that came back as a different (new) player.
    pub fresh_rejoins: u64,
    /// Resumed bots that saw themselves in their shard's snapshot again.
    pub back_in_place: u64,
    /// Admitted sessions that ended for any reason but the loadgen's own stop.
    pub disconnects: u64,
    /// Busy refusals received.
    pub busy_refusals: u64,
    /// Sessions closed with SessionReplaced (4013).
    pub replaced: u64,
    /// Resumed bots whose first position was farther than the tolerance from their last one.
    pub misplaced: u64,
    /// Failures per [`FailureKind`] (index order of [`FailureKind::ALL`]).
    pub errors: [u64; FailureKind::ALL.len()],
    /// Area-of-interest totals per [`Tally`] (index order of [`Tally::ALL`]).
    pub tallies: [u64; Tally::ALL.len()],
}

impl CounterValues {
    /// Total failures of every kind.
    pub fn error_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Failures of `kind`.
    pub fn errors_of(&self, kind: FailureKind) -> u64 {
        self.errors[kind.index()]
    }

    /// The total of `tally`.
    pub fn tally(&self, tally: Tally) -> u64 {
        self.tallies[tally.index()]
    }

    /// Non-zero failure counts by name, for reports.
    pub fn error_kinds(&self) -> std::collections::BTreeMap<String, u64> {
        FailureKind::ALL
            .iter()
            .filter(|k| self.errors[k.index()] > 0)
            .map(|k| (k.name().to_owned(), self.errors[k.index()]))
            .collect()
    }

    fn minus(&self, old: &CounterValues) -> CounterValues {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        CounterValues {
            frames: d(self.frames, old.frames),
            bytes: d(self.bytes, old.bytes),
            own_snapshots: d(self.own_snapshots, old.own_snapshots),
            relayed_snapshots: d(self.relayed_snapshots, old.relayed_snapshots),
            chat_received: d(self.chat_received, old.chat_received),
            frames_sent: d(self.frames_sent, old.frames_sent),
            resyncs: d(self.resyncs, old.resyncs),
            welcomes: d(self.welcomes, old.welcomes),
            resumed: d(self.resumed, old.resumed),
            fresh_rejoins: d(self.fresh_rejoins, old.fresh_rejoins),
            back_in_place: d(self.back_in_place, old.back_in_place),
            disconnects: d(self.disconnects, old.disconnects),
            busy_refusals: d(self.busy_refusals, old.busy_refusals),
            replaced: d(self.replaced, old.replaced),
            misplaced: d(self.misplaced, old.misplaced),
            errors: std::array::from_fn(|i| d(self.errors[i], old.errors[i])),
            tallies: std::array::from_fn(|i| d(self.tallies[i], old.tallies[i])),
        }
    }

    /// Sum of two windows.
    pub fn plus(&self, o: &CounterValues) -> CounterValues {
        CounterValues {
            frames: self.frames + o.frames,
            bytes: self.bytes + o.bytes,
            own_snapshots: self.own_snapshots + o.own_snapshots,
            relayed_snapshots: self.relayed_snapshots + o.relayed_snapshots,
            chat_received: self.chat_received + o.chat_received,
            frames_sent: self.frames_sent + o.frames_sent,
            resyncs: self.resyncs + o.resyncs,
            welcomes: self.welcomes + o.welcomes,
            resumed: self.resumed + o.resumed,
            fresh_rejoins: self.fresh_rejoins + o.fresh_rejoins,
            back_in_place: self.back_in_place + o.back_in_place,
            disconnects: self.disconnects + o.disconnects,
            busy_refusals: self.busy_refusals + o.busy_refusals,
            replaced: self.replaced + o.replaced,
            misplaced: self.misplaced + o.misplaced,
            errors: std::array::from_fn(|i| self.errors[i] + o.errors[i]),
            tallies: std::array::from_fn(|i| self.tallies[i] + o.tallies[i]),
        }
    }
}

/// A counted event (see the fields of [`CounterValues`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A Welcome.
    Welcome,
    /// A Welcome that resumed the same player.
    Resumed,
    /// A reconnect that came back as a new player.
    FreshRejoin,
    /// A resumed bot saw itself in place.
    BackInPlace,
    /// An admitted session ended (not by the loadgen).
    Disconnect,
    /// A Busy refusal.
    Busy,
    /// A SessionReplaced close.
    Replaced,
    /// A resumed bot came back away from where it was.
    Misplaced,
    /// A chat message received.
    Chat,
    /// A message sent.
    Sent,
    /// A Resync asked for.
    Resync,
}

/// Everything a window measured.
#[derive(Clone)]
pub struct Window {
    /// Merged latency histograms of the window.
    pub latencies: Latencies,
    /// Counter increments during the window.
    pub counters: CounterValues,
    /// Wall time the window covered.
    pub elapsed: Duration,
}

impl Window {
    /// Merges two consecutive windows.
    pub fn merge(&self, later: &Window) -> Window {
        let mut latencies = self.latencies.clone();
        latencies.add(&later.latencies);
        Window { latencies, counters: self.counters.plus(&later.counters), elapsed: self.elapsed + later.elapsed }
    }
}

/// Shared measurements of one run.
pub struct Stats {
    stripes: Box<[Mutex<Latencies>]>,
    counters: Counters,
    shards: Mutex<BTreeSet<u32>>,
    window: Mutex<(Instant, CounterValues)>,
    epoch: Instant,
    last_disconnect_us: AtomicU64,
    max_jump_milli: AtomicU64,
    tick_hz: AtomicU64,
    /// The run's stats when these are a part's: everything recorded here is
    /// recorded there too.
    whole: Option<std::sync::Arc<Stats>>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means a recording thread panicked mid-record; the
    // histograms stay usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Stats {
    /// Empty stats; the first window starts now.
    pub fn new() -> Stats {
        let now = Instant::now();
        Stats {
            stripes: (0..STRIPES).map(|_| Mutex::new(Latencies::new())).collect(),
            counters: Counters::default(),
            shards: Mutex::new(BTreeSet::new()),
            window: Mutex::new((now, CounterValues::default())),
            epoch: now,
            last_disconnect_us: AtomicU64::new(0),
            max_jump_milli: AtomicU64::new(0),
            tick_hz: AtomicU64::new(0),
            whole: None,
        }
    }

    /// Empty stats of a part of the run `whole` records: what is recorded
    /// here is recorded in `whole` as well (each read in its own windows).
    pub fn part_of(whole: std::sync::Arc<Stats>) -> Stats {
        Stats { whole: Some(whole), ..Stats::new() }
    }

    /// Records one latency sample of bot `bot` (any index; picks the stripe).
    pub fn record(&self, bot: usize, metric: Metric, d: Duration) {
        if let Some(w) = &self.whole {
            w.record(bot, metric, d);
        }
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        lock(&self.stripes[bot % STRIPES]).record(metric, us);
    }

    /// Records one sample of `metric` in its raw unit: µs, or thousandths of
    /// a tick for [`Metric::ViewEnterTicks`].
    pub fn record_value(&self, bot: usize, metric: Metric, value: u64) {
        if let Some(w) = &self.whole {
            w.record_value(bot, metric, value);
        }
        lock(&self.stripes[bot % STRIPES]).record(metric, value);
    }

    /// Adds `n` to `tally`.
    pub fn add(&self, tally: Tally, n: u64) {
        if let Some(w) = &self.whole {
            w.add(tally, n);
        }
        if n > 0 {
            self.counters.tallies[tally.index()].fetch_add(n, Relaxed);
        }
    }

    /// Counts one received message of `bytes` payload bytes.
    pub fn frame(&self, bytes: usize) {
        if let Some(w) = &self.whole {
            w.frame(bytes);
        }
        self.counters.frames.fetch_add(1, Relaxed);
        self.counters.bytes.fetch_add(bytes as u64, Relaxed);
    }

    /// Counts one snapshot, own shard or relayed.
    pub fn snapshot(&self, own: bool) {
        if let Some(w) = &self.whole {
            w.snapshot(own);
        }
        let c = if own { &self.counters.own_snapshots } else { &self.counters.relayed_snapshots };
        c.fetch_add(1, Relaxed);
    }

    /// Counts one event.
    pub fn event(&self, e: Event) {
        if let Some(w) = &self.whole {
            w.event(e);
        }
        let c = &self.counters;
        let counter = match e {
            Event::Welcome => &c.welcomes,
            Event::Resumed => &c.resumed,
            Event::FreshRejoin => &c.fresh_rejoins,
            Event::BackInPlace => &c.back_in_place,
            Event::Disconnect => {
                let us = u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX);
                self.last_disconnect_us.fetch_max(us, Relaxed);
                &c.disconnects
            }
            Event::Busy => &c.busy_refusals,
            Event::Replaced => &c.replaced,
            Event::Misplaced => &c.misplaced,
            Event::Chat => &c.chat_received,
            Event::Sent => &c.frames_sent,
            Event::Resync => &c.resyncs,
        };
        counter.fetch_add(1, Relaxed);
    }

    /// Counts one failure.
    pub fn failure(&self, kind: FailureKind) {
        if let Some(w) = &self.whole {
            w.failure(kind);
        }
        self.counters.errors[kind.index()].fetch_add(1, Relaxed);
    }

    /// Adds `delta` (+1 on Welcome, -1 when that session ends) to the connected gauge.
    pub fn connected_delta(&self, delta: i64) {
        if let Some(w) = &self.whole {
            w.connected_delta(delta);
        }
        self.counters.connected.fetch_add(delta, Relaxed);
    }

    /// Sessions connected now.
    pub fn connected(&self) -> u64 {
        self.counters.connected.load(Relaxed).max(0) as u64
    }

    /// Notes a shard id seen in a snapshot.
    pub fn shard_seen(&self, shard: u32) {
        if let Some(w) = &self.whole {
            w.shard_seen(shard);
        }
        lock(&self.shards).insert(shard);
    }

    /// Distinct shard ids seen in snapshots so far.
    pub fn shards_seen(&self) -> Vec<u32> {
        lock(&self.shards).iter().copied().collect()
    }

    /// Notes the tick rate a Welcome gave, Hz.
    pub fn note_tick_hz(&self, hz: u16) {
        if let Some(w) = &self.whole {
            w.note_tick_hz(hz);
        }
        self.tick_hz.store(u64::from(hz), Relaxed);
    }

    /// The tick rate of the latest Welcome, Hz (0: none yet).
    pub fn tick_hz(&self) -> u16 {
        self.tick_hz.load(Relaxed) as u16
    }

    /// Notes how far (world units) a resumed player's first position was from its last one.
    pub fn resume_jump(&self, distance: f32) {
        if let Some(w) = &self.whole {
            w.resume_jump(distance);
        }
        let milli = (distance.max(0.0) as f64 * 1000.0) as u64;
        self.max_jump_milli.fetch_max(milli, Relaxed);
    }

    /// Largest resume jump so far, world units.
    pub fn max_resume_jump(&self) -> f64 {
        self.max_jump_milli.load(Relaxed) as f64 / 1000.0
    }

    /// When the latest admitted session ended, if any did.
    pub fn last_disconnect(&self) -> Option<Instant> {
        match self.last_disconnect_us.load(Relaxed) {
            0 => None,
            us => Some(self.epoch + Duration::from_micros(us)),
        }
    }

    /// Current counter totals.
    pub fn totals(&self) -> CounterValues {
        let c = &self.counters;
        CounterValues {
            frames: c.frames.load(Relaxed),
            bytes: c.bytes.load(Relaxed),
            own_snapshots: c.own_snapshots.load(Relaxed),
            relayed_snapshots: c.relayed_snapshots.load(Relaxed),
            chat_received: c.chat_received.load(Relaxed),
            frames_sent: c.frames_sent.load(Relaxed),
            resyncs: c.resyncs.load(Relaxed),
            welcomes: c.welcomes.load(Relaxed),
            resumed: c.resumed.load(Relaxed),
            fresh_rejoins: c.fresh_rejoins.load(Relaxed),
            back_in_place: c.back_in_place.load(Relaxed),
            disconnects: c.disconnects.load(Relaxed),
            busy_refusals: c.busy_refusals.load(Relaxed),
            replaced: c.replaced.load(Relaxed),
            misplaced: c.misplaced.load(Relaxed),
            errors: std::array::from_fn(|i| c.errors[i].load(Relaxed)),
            tallies: std::array::from_fn(|i| c.tallies[i].load(Relaxed)),
        }
    }

    /// Ends the current window and starts the next: returns the merged
    /// histograms (which are reset) and the counter increments since the
    /// previous call (or since [`Stats::new`]).
    pub fn take_window(&self) -> Window {
        let mut latencies = Latencies::new();
        for stripe in self.stripes.iter() {
            let mut s = lock(stripe);
            latencies.add(&s);
            s.reset();
        }
        let totals = self.totals();
        let mut w = lock(&self.window);
        let now = Instant::now();
        let window = Window { latencies, counters: totals.minus(&w.1), elapsed: now - w.0 };
        *w = (now, totals);
        window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn the_frame_parts_are_the_seven_byte_tallies_from_framing_to_implied_blocks() {
        let parts = Tally::FRAME_PARTS;
        assert_eq!((parts[0], parts[6]), (Tally::ObservedFramingBytes, Tally::ObservedImpliedBytes));
        assert!(parts.iter().all(|t| t.label().starts_with("observed_") && t.label().ends_with("_bytes")), "{parts:?}");
    }

    #[test]
    fn a_news_gap_takes_off_the_ticks_that_sent_nothing() {
        let (ms, period) = (Duration::from_millis, Duration::from_millis(50));
        assert_eq!(news_gap(ms(53), 1, period), ms(53), "consecutive ticks: the gap itself");
        assert_eq!(news_gap(ms(152), 3, period), ms(52), "two silent ticks between");
        assert_eq!(news_gap(ms(90), 3, period), ms(0), "early: at least zero");
        assert_eq!(news_gap(ms(60), 0, period), ms(60), "the same tick (never timed): the gap");
        assert_eq!(news_gap(ms(400), 5_000, period), ms(400), "a shard's ticks counted anew");
        assert_eq!(news_gap(ms(110), 1u32.wrapping_sub(u32::MAX), period), ms(60), "the low bits wrapped");
    }

    #[test]
    fn percentiles_of_a_known_distribution() {
        let stats = Stats::new();
        for i in 1..=100u64 {
            stats.record(i as usize, Metric::SnapshotGap, ms(i));
        }
        let s = stats.take_window().latencies.summary(Metric::SnapshotGap);
        assert_eq!(s.count, 100);
        assert!((s.p50 - 50.0).abs() < 0.1, "{s:?}");
        assert!((s.p95 - 95.0).abs() < 0.1, "{s:?}");
        assert!((s.p99 - 99.0).abs() < 0.1, "{s:?}");
        assert!((s.max - 100.0).abs() < 0.1, "{s:?}");
    }

    #[test]
    fn empty_metric_summarizes_to_zero_count() {
        let stats = Stats::new();
        assert_eq!(stats.take_window().latencies.summary(Metric::Rtt), Summary::default());
    }

    #[test]
    fn windows_reset_histograms_and_diff_counters() {
        let stats = Stats::new();
        stats.record(0, Metric::Welcome, ms(3));
        stats.frame(100);
        stats.failure(FailureKind::JoinTimeout);
        let first = stats.take_window();
        assert_eq!((first.counters.frames, first.counters.bytes), (1, 100));
        assert_eq!(first.counters.errors_of(FailureKind::JoinTimeout), 1);
        stats.frame(50);
        let second = stats.take_window();
        assert_eq!(second.latencies.summary(Metric::Welcome).count, 0);
        assert_eq!((second.counters.frames, second.counters.bytes), (1, 50));
        assert_eq!(second.counters.error_total(), 0);
        let both = first.merge(&second);
        assert_eq!((both.counters.frames, both.latencies.summary(Metric::Welcome).count), (2, 1));
        assert_eq!(stats.totals().bytes, 150);
    }

    #[test]
    fn huge_values_are_clamped_not_lost() {
        let stats = Stats::new();
        stats.record(1, Metric::BackInPlace, Duration::from_secs(3600));
        let s = stats.take_window().latencies.summary(Metric::BackInPlace);
        assert_eq!(s.count, 1);
        assert!(s.max >= 59_900.0, "{s:?}");
    }

    #[test]
    fn connected_gauge_and_shards() {
        let stats = Stats::new();
        stats.connected_delta(1);
        stats.connected_delta(1);
        stats.connected_delta(-1);
        assert_eq!(stats.connected(), 1);
        stats.shard_seen(7);
        stats.shard_seen(3);
        stats.shard_seen(7);
        assert_eq!(stats.shards_seen(), vec![3, 7]);
        assert!(stats.last_disconnect().is_none());
        stats.event(Event::Disconnect);
        assert!(stats.last_disconnect().is_some());
    }

    #[test]
    fn a_part_passes_everything_to_the_whole_and_keeps_its_own() {
        let whole = std::sync::Arc::new(Stats::new());
        let (a, b) = (Stats::part_of(whole.clone()), Stats::part_of(whole.clone()));
        a.record(0, Metric::SnapshotGap, ms(50));
        b.record(1, Metric::SnapshotGap, ms(70));
        b.record_value(1, Metric::ViewEnterTicks, 1000);
        a.frame(10);
        b.frame(20);
        a.snapshot(true);
        b.event(Event::Welcome);
        b.failure(FailureKind::Protocol);
        a.add(Tally::CellFrames, 3);
        a.connected_delta(1);
        b.connected_delta(1);
        b.shard_seen(4);
        a.note_tick_hz(20);
        b.resume_jump(2.0);
        let (wa, wb, ww) = (a.take_window(), b.take_window(), whole.take_window());
        assert_eq!(wa.latencies.summary(Metric::SnapshotGap).count, 1);
        assert_eq!(wb.latencies.summary(Metric::SnapshotGap).count, 1);
        assert_eq!(ww.latencies.summary(Metric::SnapshotGap).count, 2);
        assert_eq!(ww.latencies.summary(Metric::ViewEnterTicks).count, 1);
        assert_eq!((wa.counters.bytes, wb.counters.bytes, ww.counters.bytes), (10, 20, 30));
        assert_eq!((ww.counters.own_snapshots, ww.counters.welcomes, ww.counters.error_total()), (1, 1, 1));
        assert_eq!(ww.counters.tally(Tally::CellFrames), 3);
        assert_eq!((a.connected(), b.connected(), whole.connected()), (1, 1, 2));
        assert_eq!((whole.shards_seen(), whole.tick_hz(), whole.max_resume_jump()), (vec![4], 20, 2.0));
    }
}
