//! One welcomed session of a bot: it walks and chats as its profile says
//! (steered as its [`Movement`] says) and measures everything it receives
//! (snapshot gaps per shard, snapshot age, round trips, its own position,
//! being back in place after a resume; with area of interest its cells
//! ([`CellMeter`]), publishing its position to the shared table, and as an
//! observer the players within its view ([`Observer`])) until the server
//! closes, the connection breaks, a Move arrives, or the run stops.

use crate::cells::{CellMeter, Own};
use crate::client::{wall_ms, Client, Incoming};
use crate::event::{CellFrame, Welcomed};
use crate::failure::FailureKind;
use crate::freeze::Freeze;
use crate::observer::Observer;
use crate::parts::FrameParts;
use crate::positions::{Positions, Report};
use crate::profile::Profile;
use crate::reader::ViewReader;
use crate::reconnect::Ending;
use crate::silence::{self, Silence, Verdict};
use crate::stats::{Event, Metric, Stats, Tally};
use crate::status::BotShared;
use crate::steer::{Movement, Steering, SHUFFLE_EVERY};
use crate::transport::Transport;
use crate::world::World;
use mino_protocol::server::{self, ServerMsg};
use mino_protocol::view::ViewFrame;
use mino_protocol::wire::CloseCode;
use mino_protocol::{quantize, wire, PlayerId};
use rand::rngs::SmallRng;
use rand::Rng;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

/// A send that does not finish in this time means the connection is stuck.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// Ticks of movement a resumed player's Welcome may place it away from where
/// the bot last saw it (the bot's last frame can be older than the last state
/// the old shard stored: frames in flight when it died), plus one world unit
/// of rounding. The Welcome's position is judged, not the first frame's: a
/// bot steers again as soon as it is welcomed, so a frame that comes late on
/// a loaded machine shows it already walked from where it was put.
const RESUME_TOLERANCE_TICKS: f32 = 3.0;

/// Where a bot was when its previous session closed: what a resumed session checks.
#[derive(Clone, Copy, Debug)]
pub struct ResumeCheck {
    /// When the bot noticed its socket closed (or got Move).
    pub closed_at: Instant,
    /// The player it was.
    pub player_id: PlayerId,
    /// Its last position seen in its own shard's snapshot, world units.
    pub last_position: Option<(f32, f32)>,
}

/// How and when a session ended.
#[derive(Debug)]
pub struct SessionEnd {
    /// What the reconnect policy needs to know.
    pub ending: Ending,
    /// When the bot noticed the end.
    pub at: Instant,
    /// The failure to count, if it was one.
    pub failure: Option<(FailureKind, String)>,
    /// The close code, if the server sent one.
    pub close_code: Option<u16>,
    /// A fresh ticket from a Move.
    pub ticket: Option<Vec<u8>>,
}

impl SessionEnd {
    fn new(ending: Ending, failure: Option<(FailureKind, String)>) -> SessionEnd {
        SessionEnd { ending, at: Instant::now(), failure, close_code: None, ticket: None }
    }
}

/// Who is measuring: the bot's index (stats stripe), shared state, profile
/// and movement, and what it shares with the other bots.
pub struct SessionCtx<'a> {
    /// Bot index.
    pub bot: usize,
    /// The run's stats.
    pub stats: &'a Stats,
    /// The bot's observable state.
    pub shared: &'a BotShared,
    /// What the bot does.
    pub profile: &'a Profile,
    /// Where the bot walks.
    pub movement: Movement,
    /// Every bot's latest position (area of interest): the bot publishes its
    /// own there; None when the run has no observers.
    pub positions: Option<&'a Arc<Positions>>,
    /// True when this bot observes (needs `positions`).
    pub observer: bool,
}

/// When a message arrived: when the bot got to it, and when it reached the
/// socket (the kernel's stamp, wall clock, [`Client::received_at`]; None
/// without one).
#[derive(Clone, Copy, Debug)]
struct Arrival {
    now: Instant,
    at_socket: Option<SystemTime>,
}

struct Measure<'a> {
    ctx: &'a SessionCtx<'a>,
    /// Area of interest: the view-frame measurements.
    cells: Option<CellMeter>,
    /// Area of interest, observers only: the per-entry books.
    observer: Option<Observer>,
    steering: Steering,
    /// A direction to send after the message being handled.
    steer_out: Option<(f32, f32)>,
    /// Deltas over datagrams: a Resync to send after the message being
    /// handled, and when the last one was sent.
    resync: Resync,
    own_shard: u32,
    own_id: PlayerId,
    own_hint: usize,
    /// Per shard: (shard, the tick and arrival of its newest frame).
    clocks: Vec<(u32, u32, Instant)>,
    /// When the own shard's last timed frame reached the socket (None: it
    /// carried no kernel stamp, or none yet).
    own_at_socket: Option<SystemTime>,
    /// The own shard's longest snapshot gap of the current span.
    freeze: Freeze,
    resume: Option<ResumeCheck>,
    tolerance: f32,
    /// The tick of the newest frame seen of each shard, so a shard's gap is
    /// timed once a tick, not once a cell.
    last_tick: Vec<(u32, u32)>,
    /// What the bot holds of the cells view frames told it (cells expire
    /// as the Welcome says, on a clock from `welcomed`), and the walk over
    /// the cells a frame updated.
    reader: ViewReader,
    /// When the session began: the clock of the held cells' expiry.
    welcomed: Instant,
    /// The world's bounds (positions are quantized over them).
    bounds: wire::Bounds,
    /// The tick period.
    period: Duration,
    /// The bot's own position as last shown, and when it was shown: a cell
    /// that does not change is not sent (protocol 4), so a bot standing
    /// still goes on from what it holds (see [`Measure::on_quiet_tick`]).
    own_last: Option<((f32, f32), Instant)>,
}

/// Runs one session until it ends. `resume` is set when this Welcome resumed
/// the player, to time being back in place.
pub async fn run(
    client: &mut Client,
    welcome: &Welcomed,
    ctx: &SessionCtx<'_>,
    resume: Option<ResumeCheck>,
    rng: &mut SmallRng,
    cancel: &CancellationToken,
) -> SessionEnd {
    let world = World::of(welcome);
    let step = world.step();
    let now = Instant::now();
    let cells = world.grid.map(|g| CellMeter::new(g, welcome.bounds, welcome.shard_id.0, welcome.player_id));
    let observer = match (world.grid, ctx.positions) {
        (Some(g), Some(board)) if ctx.observer => Some(Observer::new(
            board.clone(),
            ctx.bot,
            welcome.player_id,
            &g,
            welcome.bounds,
            world.tick_period(),
            step,
            now,
        )),
        _ => None,
    };
    let mut m = Measure {
        ctx,
        cells,
        observer,
        steering: Steering::new(ctx.movement, step),
        steer_out: None,
        resync: Resync::default(),
        own_shard: welcome.shard_id.0,
        own_id: welcome.player_id,
        own_hint: 0,
        clocks: Vec::with_capacity(4),
        own_at_socket: None,
        freeze: Freeze::new(now),
        resume,
        tolerance: step * RESUME_TOLERANCE_TICKS + 1.0,
        last_tick: Vec::with_capacity(4),
        reader: ViewReader::new(welcome),
        welcomed: now,
        bounds: welcome.bounds,
        period: world.tick_period(),
        own_last: None,
    };
    m.check_placed(welcome.position);
    let end = m.drive(client, rng, cancel).await;
    m.finish();
    end
}

/// A bot's resyncs (deltas over datagrams): one asked when a frame had a
/// cell it missed a change of. The server sends each cell of the view whole
/// at its next due step after it takes the resync, so cells found missed
/// for a round trip and [`RESYNC_MARGIN_TICKS`] ticks after it are frames
/// sent before, mended by it; a cell found missed later is a delta sent
/// after its whole form, which was lost too, and another is asked at once
/// (the browser's rule, client-web/src/net/inbox.ts: a fixed 500 ms wait, as
/// first built, drew a walker still for 550 ms now and then behind a link
/// losing 2 %).
#[derive(Debug, Default)]
struct Resync {
    /// One to send after the message being handled.
    out: bool,
    /// When the last was asked.
    last: Option<Instant>,
    /// The smoothed round trip of the bot's pings (`None`: none answered).
    round_trip: Option<Duration>,
}

/// Ticks past a round trip after a resync during which cells missed are
/// still frames sent before it (the server takes it at its next tick; jitter).
const RESYNC_MARGIN_TICKS: u32 = 2;
/// The round trip assumed before a Pong (a bot that does not ping).
const UNKNOWN_ROUND_TRIP: Duration = Duration::from_millis(250);
/// Most a resync waits before another.
const MOST_RESYNC_WAIT: Duration = Duration::from_secs(1);

impl Resync {
    /// A frame had a cell missed at `now`, ticks `period` apart: one to
    /// send, unless the last is still on its way (a round trip and
    /// [`RESYNC_MARGIN_TICKS`] ticks, at most [`MOST_RESYNC_WAIT`]).
    fn ask(&mut self, now: Instant, period: Duration) {
        let wait = (self.round_trip.unwrap_or(UNKNOWN_ROUND_TRIP) + period * RESYNC_MARGIN_TICKS).min(MOST_RESYNC_WAIT);
        if self.last.is_none_or(|t| now.saturating_duration_since(t) >= wait) {
            (self.out, self.last) = (true, Some(now));
        }
    }

    /// A Pong's round trip: smoothed as the browser's (3/4 old, 1/4 new).
    fn pong(&mut self, rtt: Duration) {
        self.round_trip = Some(self.round_trip.map_or(rtt, |old| (old * 3 + rtt) / 4));
    }
}

impl Measure<'_> {
    /// The session's loop: sends what the profile and the steering say,
    /// handles what arrives, until the session ends.
    async fn drive(&mut self, client: &mut Client, rng: &mut SmallRng, cancel: &CancellationToken) -> SessionEnd {
        let ctx = self.ctx;
        let profile = ctx.profile;
        let now = Instant::now();
        let far = now + Duration::from_secs(86_400 * 365);
        let turns = profile.turn.is_some() && !matches!(ctx.movement, Movement::Gather(_));
        let turn = sleep_until(if turns { now } else { far });
        let chat = sleep_until(profile.chat.map_or(far, |c| now + c.sample(rng)));
        let ping = sleep_until(profile.ping.map_or(far, |p| now + p));
        // Quiet ticks matter only to bots that publish or observe positions.
        let watch = self.observer.is_some() || ctx.positions.is_some();
        let quiet = sleep_until(if watch { now + self.period } else { far });
        // A shuffling crowd bot steps out now and then (`crowd --shuffle`).
        let shuffles = match ctx.movement {
            Movement::Gather(g) => rng.random_bool(f64::from(g.shuffle.clamp(0.0, 1.0))),
            _ => false,
        };
        let next_shuffle = |rng: &mut SmallRng| Instant::now() + rng.random_range(SHUFFLE_EVERY);
        let shuffle = sleep_until(if shuffles { next_shuffle(rng) } else { far });
        // A WebTransport shard that died says nothing: its silence tells (see
        // `silence`). A websocket's is reset by the dead process's kernel.
        let mut silence = (client.transport() == Transport::WebTransport).then(|| Silence::new(Duration::ZERO));
        let listen = sleep_until(if silence.is_some() { now + silence::MIN_PROBE_AFTER } else { far });
        tokio::pin!(turn, chat, ping, quiet, shuffle, listen);
        loop {
            let sent = tokio::select! {
                biased;
                _ = cancel.cancelled() => return SessionEnd::new(Ending::Stopped, None),
                incoming = client.recv() => match self.on_incoming(incoming, client, rng, silence.as_mut(), now) {
                    Some(end) => return end,
                    None if std::mem::take(&mut self.resync.out) => {
                        ctx.stats.event(Event::Resync);
                        tokio::time::timeout(SEND_TIMEOUT, client.send_resync()).await
                    }
                    None => match self.steer_out.take() {
                        Some((x, y)) => tokio::time::timeout(SEND_TIMEOUT, client.send_input(x, y)).await,
                        None => continue,
                    },
                },
                _ = &mut turn => {
                    let next = profile.turn.map_or(far, |t| Instant::now() + t.sample(rng));
                    turn.as_mut().reset(next);
                    let Some((x, y)) = self.steering.turn(profile.direction(rng)) else { continue };
                    tokio::time::timeout(SEND_TIMEOUT, client.send_input(x, y)).await
                }
                _ = &mut chat => {
                    chat.as_mut().reset(profile.chat.map_or(far, |c| Instant::now() + c.sample(rng)));
                    let line = format!("bot {} says hi at {:.0}", ctx.bot, wall_ms());
                    tokio::time::timeout(SEND_TIMEOUT, client.send_chat(&line)).await
                }
                _ = &mut ping => {
                    ping.as_mut().reset(profile.ping.map_or(far, |p| Instant::now() + p));
                    tokio::time::timeout(SEND_TIMEOUT, client.send_ping()).await
                }
                _ = &mut shuffle => {
                    shuffle.as_mut().reset(next_shuffle(rng));
                    let Some((pos, _)) = self.own_last else { continue };
                    let Some((x, y)) = self.steering.shuffle(pos, Instant::now(), rng) else { continue };
                    tokio::time::timeout(SEND_TIMEOUT, client.send_input(x, y)).await
                }
                _ = &mut quiet => {
                    let now = Instant::now();
                    quiet.as_mut().reset(now + self.period);
                    self.on_quiet_tick(now);
                    continue;
                }
                _ = &mut listen => {
                    let Some(s) = silence.as_mut() else { continue };
                    let at = now.elapsed();
                    // Looked at every MIN_PROBE_AFTER at least: a message since
                    // may have brought the Ping's time nearer.
                    let next = |due: Duration| now + due.min(at + silence::MIN_PROBE_AFTER);
                    match s.check(at, client.path(at)) {
                        Verdict::Wait(due) => {
                            listen.as_mut().reset(next(due));
                            continue;
                        }
                        Verdict::Probe(due) => {
                            listen.as_mut().reset(next(due));
                            tokio::time::timeout(SEND_TIMEOUT, client.send_ping()).await
                        }
                        Verdict::Dead(quiet) => {
                            let detail = format!("silent for {} ms: the shard stopped answering", quiet.as_millis());
                            return SessionEnd::new(Ending::Lost, Some((FailureKind::ConnectionLost, detail)));
                        }
                    }
                }
            };
            match sent {
                Ok(Ok(())) => ctx.stats.event(Event::Sent),
                Ok(Err(e)) => return SessionEnd::new(Ending::Lost, Some((FailureKind::ConnectionLost, e.to_string()))),
                Err(_) => {
                    return SessionEnd::new(Ending::Lost, Some((FailureKind::ConnectionLost, "send stuck".into())))
                }
            }
        }
    }

    /// The session is over: what was counted goes to the run's tallies, and
    /// the bot's slot of the shared table reads as empty.
    fn finish(&mut self) {
        let stats = self.ctx.stats;
        if let Some(c) = self.cells.as_mut() {
            c.flush(stats);
        }
        if let Some(o) = self.observer.as_mut() {
            o.flush(stats);
        }
        if let Some(board) = self.ctx.positions {
            board.withdraw(self.ctx.bot);
        }
    }

    /// Handles one received item (a message is heard by `silence`, whose
    /// clock started at `start`); Some when the session is over.
    fn on_incoming(
        &mut self,
        incoming: Incoming,
        client: &Client,
        rng: &mut SmallRng,
        silence: Option<&mut Silence>,
        start: Instant,
    ) -> Option<SessionEnd> {
        let bytes = match incoming {
            Incoming::Frame(b) => {
                if let Some(s) = silence {
                    s.heard(start.elapsed());
                }
                b
            }
            Incoming::Closed(code) => {
                if code == Some(CloseCode::TooSlow.0) {
                    self.ctx.stats.add(Tally::TooSlowCloses, 1);
                }
                let failure = Some((FailureKind::ServerClosed, format!("close code {code:?}")));
                let mut end = SessionEnd::new(Ending::Closed(code), failure);
                end.close_code = code;
                return Some(end);
            }
            Incoming::Broken(kind, detail) => {
                let ending = if kind == FailureKind::Protocol { Ending::Protocol } else { Ending::Lost };
                return Some(SessionEnd::new(ending, Some((kind, detail))));
            }
        };
        let now = Instant::now();
        let at_socket = client.received_at();
        let stats = self.ctx.stats;
        stats.frame(bytes.len());
        self.ctx.shared.received(bytes.len());
        if let Some(o) = self.observer.as_mut() {
            o.on_message(bytes.len());
        }
        match server::decode(&bytes) {
            Ok(ServerMsg::Pong(p)) => {
                let rtt_ms = wall_ms() - p.client_time_ms();
                if rtt_ms.is_finite() && rtt_ms >= 0.0 {
                    let rtt = Duration::from_secs_f64(rtt_ms / 1000.0);
                    stats.record(self.ctx.bot, Metric::Rtt, rtt);
                    self.resync.pong(rtt);
                }
            }
            Ok(ServerMsg::Chat(_)) => stats.event(Event::Chat),
            Ok(ServerMsg::Move(mv)) => {
                let mut end = SessionEnd::new(Ending::Moved, None);
                end.ticket = mv.resume_ticket().map(|t| t.bytes().to_vec());
                end.at = now;
                return Some(end);
            }
            Ok(ServerMsg::Welcome(_) | ServerMsg::Busy(_)) => {
                let detail = "welcome or busy inside a session".to_owned();
                return Some(SessionEnd::new(Ending::Protocol, Some((FailureKind::Protocol, detail))));
            }
            Ok(ServerMsg::View(v)) => {
                if let Err(e) = self.on_view(&v, bytes.len(), Arrival { now, at_socket }, rng) {
                    return Some(SessionEnd::new(Ending::Protocol, Some((FailureKind::Protocol, e.to_string()))));
                }
            }
            Ok(
                ServerMsg::Presence(_)
                | ServerMsg::Roster(_)
                | ServerMsg::Error(_)
                | ServerMsg::Names(_)
                | ServerMsg::PlaceStatus(_),
            ) => {}
            Ok(ServerMsg::Snapshot(_)) => {
                let detail = "a whole-shard snapshot sent to a client (protocol 4 sends view frames)".to_owned();
                return Some(SessionEnd::new(Ending::Protocol, Some((FailureKind::Protocol, detail))));
            }
            Ok(ServerMsg::CellBundle(_)) => {
                let detail = "a bundle between shards sent to a client".to_owned();
                return Some(SessionEnd::new(Ending::Protocol, Some((FailureKind::Protocol, detail))));
            }
            Err(e) => return Some(SessionEnd::new(Ending::Protocol, Some((FailureKind::Protocol, e.to_string())))),
        }
        None
    }

    /// A view frame of `len` bytes: each shard's first section of a tick
    /// times its gap (own or relayed); its items apply to what the bot holds,
    /// and each cell they changed is measured, charged its items' bytes (the
    /// first also the frame's and sections' headers, so that the cells'
    /// bytes add up to the frame's).
    ///
    /// Errors: an item that does not apply to what the bot holds.
    fn on_view(
        &mut self,
        v: &ViewFrame<'_>,
        len: usize,
        arrival: Arrival,
        rng: &mut SmallRng,
    ) -> Result<(), mino_protocol::held::HeldError> {
        let now = arrival.now;
        self.ctx.shared.received_cells(len);
        if let Some(o) = self.observer.as_mut() {
            o.on_parts(&FrameParts::of(v, len, self.reader.held()));
        }
        let since_ms = u64::try_from(now.saturating_duration_since(self.welcomed).as_millis()).unwrap_or(u64::MAX);
        let applied = self.reader.apply(v, len, since_ms);
        for i in 0..self.reader.sections().len() {
            let (shard, tick) = self.reader.sections()[i];
            self.shard_tick(shard, tick, arrival);
        }
        applied?;
        if self.reader.broken() {
            self.resync.ask(now, self.period);
        }
        // Each cell as held (read where it is held): the cell meter times
        // the own-cell and neighbour gaps; the cell holding the bot times
        // its age, gives its position (published, steered by, checked by an
        // observer); an observer notes who the cell shows.
        let (stats, bot) = (self.ctx.stats, self.ctx.bot);
        while let Some((u, players)) = self.reader.next_cell() {
            let c = CellFrame::held(u.shard, u.cell, u.tick, u.time_ms, players);
            let own = match self.cells.as_mut() {
                Some(m) => m.on_frame(&c, u.len, u.bodies, now, stats, bot),
                None => {
                    let own_tick = self.last_tick.iter().find(|t| t.0 == self.own_shard).map(|t| t.1);
                    own_in(&c, (self.own_shard, self.own_id), own_tick, &mut self.own_hint, &self.bounds)
                }
            };
            if let Some(own) = own {
                self.on_own(&own, now, rng);
            }
            if let Some(o) = self.observer.as_mut() {
                let c = CellFrame::held(u.shard, u.cell, u.tick, u.time_ms, self.reader.players(&u));
                o.on_cell(&c, u.len, u.bodies, now, stats, bot);
            }
        }
        Ok(())
    }

    /// The bot itself in an own-shard cell.
    fn on_own(&mut self, own: &Own, now: Instant, rng: &mut SmallRng) {
        let (stats, bot) = (self.ctx.stats, self.ctx.bot);
        let age_ms = (wall_ms() as u64 as u32).wrapping_sub(own.time_ms) as f64;
        if age_ms < 60_000.0 {
            stats.record(bot, Metric::SnapshotAge, Duration::from_secs_f64(age_ms / 1000.0));
        }
        let pos = own.position;
        self.own_last = Some((pos, now));
        self.ctx.shared.set_position(pos);
        self.check_back_in_place();
        if let Some(board) = self.ctx.positions {
            let report = Report { player: self.own_id, x: pos.0, y: pos.1, time_ms: own.time_ms, at: now };
            board.publish(bot, &report);
        }
        if own.new_tick {
            if let Some(o) = self.observer.as_mut() {
                o.still_held(self.reader.held().cells().flat_map(|(_, c)| c.entries.iter()), now, stats, bot);
                o.check(pos, now, stats, bot);
            }
        }
        self.steer_out = self.steering.on_position(pos, now, rng).or(self.steer_out);
    }

    /// A tick period passed: when no frame showed the bot in it (its cell
    /// did not change, so protocol 4 sent nothing), the bot is where it
    /// holds itself; it publishes that position (time: now on the wall
    /// clock, the shard's clock on this machine) and an observer checks
    /// its view, as a frame of the bot would have made it do.
    fn on_quiet_tick(&mut self, now: Instant) {
        let Some((pos, at)) = self.own_last else { return };
        if now.saturating_duration_since(at) < self.period + self.period / 2 {
            return;
        }
        let (stats, bot) = (self.ctx.stats, self.ctx.bot);
        if let Some(board) = self.ctx.positions {
            let report = Report { player: self.own_id, x: pos.0, y: pos.1, time_ms: wall_ms() as u64 as u32, at: now };
            board.publish(bot, &report);
        }
        if let Some(o) = self.observer.as_mut() {
            o.still_held(self.reader.held().cells().flat_map(|(_, c)| c.entries.iter()), now, stats, bot);
            o.check(pos, now, stats, bot);
        }
    }

    /// Times `shard`'s gap once a tick, at its first frame of `tick`; a
    /// frame of an older tick (a datagram overtaken by a newer one) times
    /// nothing.
    fn shard_tick(&mut self, shard: u32, tick: u32, arrival: Arrival) {
        match self.last_tick.iter_mut().find(|t| t.0 == shard) {
            Some(last) if last.1 == tick || (tick.wrapping_sub(last.1) as i32) < 0 => {}
            Some(last) => {
                last.1 = tick;
                self.shard_clock(shard, tick, arrival);
            }
            None => {
                self.last_tick.push((shard, tick));
                self.shard_clock(shard, tick, arrival);
            }
        }
    }

    /// Times the gap since `shard`'s previous frame (and, for the own
    /// shard, that gap less the ticks between that sent nothing:
    /// [`Metric::NewsGap`]).
    fn shard_clock(&mut self, shard: u32, tick: u32, arrival: Arrival) {
        let (stats, bot) = (self.ctx.stats, self.ctx.bot);
        let own = shard == self.own_shard;
        let now = arrival.now;
        stats.snapshot(own);
        if own {
            if let Some(gap) = arrival.at_socket.zip(self.own_at_socket).and_then(|(at, b)| at.duration_since(b).ok()) {
                stats.record(bot, Metric::SocketGap, gap);
            }
            self.own_at_socket = arrival.at_socket;
        }
        match self.clocks.iter_mut().find(|c| c.0 == shard) {
            Some(clock) => {
                let gap = now - clock.2;
                stats.record(bot, if own { Metric::SnapshotGap } else { Metric::RelayedGap }, gap);
                if own {
                    stats.record(
                        bot,
                        Metric::NewsGap,
                        crate::stats::news_gap(gap, tick.wrapping_sub(clock.1), self.period),
                    );
                }
                (clock.1, clock.2) = (tick, now);
                if let Some(longest) = own.then(|| self.freeze.gap(gap, now)).flatten() {
                    stats.record(bot, Metric::LongestFreeze, longest);
                }
            }
            None => {
                self.clocks.push((shard, tick, now));
                stats.shard_seen(shard);
            }
        }
    }

    /// A resumed Welcome put the player at `placed`: counts it misplaced when
    /// that is farther than the tolerance from where the bot last saw itself.
    fn check_placed(&mut self, placed: (f32, f32)) {
        let Some(ResumeCheck { last_position: Some((x, y)), .. }) = self.resume else { return };
        let jump = ((placed.0 - x).powi(2) + (placed.1 - y).powi(2)).sqrt();
        self.ctx.stats.resume_jump(jump);
        if jump > self.tolerance {
            self.ctx.stats.event(Event::Misplaced);
        }
    }

    /// The first own frame after a resume: the bot is back in place (timed
    /// from when its previous session closed).
    fn check_back_in_place(&mut self) {
        let Some(r) = self.resume.take() else { return };
        self.ctx.stats.record(self.ctx.bot, Metric::BackInPlace, r.closed_at.elapsed());
        self.ctx.stats.event(Event::BackInPlace);
    }
}

/// The bot (its shard and id) in cell `c` of its own shard, when the
/// place is one cell (no meter): at `hint` or found by search. `own_tick`
/// is the own shard's newest tick timed (a frame's sections are timed
/// before its cells): each cell of that tick gets `new_tick`, not only the
/// first (unlike [`CellMeter`], nothing here remembers the tick already
/// reported).
fn own_in(
    c: &CellFrame,
    (own_shard, own_id): (u32, PlayerId),
    own_tick: Option<u32>,
    hint: &mut usize,
    bounds: &wire::Bounds,
) -> Option<Own> {
    if c.shard_id.0 != own_shard {
        return None;
    }
    let p = c.find(own_id, hint)?;
    let new_tick = own_tick == Some(c.tick);
    Some(Own { position: quantize::world_position(bounds, p.x, p.y), time_ms: c.time_ms, new_tick })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resync_waits_a_round_trip_and_two_ticks_for_its_answer_then_asks_again() {
        let (t0, ms) = (Instant::now(), Duration::from_millis);
        let period = ms(50);
        let mut r = Resync::default();
        let asks = |r: &mut Resync, at: u64| {
            r.ask(t0 + ms(at), period);
            std::mem::take(&mut r.out)
        };
        // No Pong yet: 250 ms assumed, and two ticks.
        assert!(asks(&mut r, 0));
        assert!(!asks(&mut r, 349), "frames sent before the server took it");
        assert!(asks(&mut r, 350), "a cell missed after its whole form: that was lost too");
        r.pong(ms(40));
        assert_eq!(r.round_trip, Some(ms(40)));
        assert!(!asks(&mut r, 489));
        assert!(asks(&mut r, 490));
        r.pong(ms(80));
        assert_eq!(r.round_trip, Some(ms(50)), "smoothed: 3/4 old, 1/4 new");
        r.pong(ms(10_000));
        assert!(!asks(&mut r, 1489), "at most a second");
        assert!(asks(&mut r, 1490));
    }
}
