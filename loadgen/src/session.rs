//! One welcomed session of a bot: it walks and chats as its profile says and
//! measures everything it receives (snapshot gaps per shard, snapshot age,
//! round trips, its own position, being back in place after a resume) until
//! the server closes, the connection breaks, a Move arrives, or the run stops.

use crate::client::{wall_ms, Client, Incoming};
use crate::event::Welcomed;
use crate::failure::FailureKind;
use crate::profile::Profile;
use crate::reconnect::Ending;
use crate::stats::{Event, Metric, Stats};
use crate::status::BotShared;
use mino_protocol::server::{self, ServerMsg};
use mino_protocol::{quantize, wire, PlayerId};
use rand::rngs::SmallRng;
use std::time::Duration;
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

/// A send that does not finish in this time means the connection is stuck.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// Ticks of movement a resumed player may be away from where the bot last saw
/// it (the bot's last snapshot can be a tick older than the server's, and the
/// first snapshot after resuming a tick newer), plus one world unit of rounding.
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

/// Who is measuring: the bot's index (stats stripe), shared state and profile.
pub struct SessionCtx<'a> {
    /// Bot index.
    pub bot: usize,
    /// The run's stats.
    pub stats: &'a Stats,
    /// The bot's observable state.
    pub shared: &'a BotShared,
    /// What the bot does.
    pub profile: &'a Profile,
}

struct Measure<'a> {
    ctx: &'a SessionCtx<'a>,
    own_shard: u32,
    own_id: PlayerId,
    own_hint: usize,
    clocks: Vec<(u32, Instant)>,
    resume: Option<ResumeCheck>,
    tolerance: f32,
    /// World bounds (cell frames do not carry them).
    bounds: wire::Bounds,
    /// Area of interest: the tick of the newest frame seen of each shard, so
    /// a shard's gap is timed once a tick, not once a cell.
    last_tick: Vec<(u32, u32)>,
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
    let step = welcome.speed / f32::from(welcome.tick_hz.max(1));
    let mut m = Measure {
        ctx,
        own_shard: welcome.shard_id.0,
        own_id: welcome.player_id,
        own_hint: 0,
        clocks: Vec::with_capacity(4),
        resume,
        tolerance: step * RESUME_TOLERANCE_TICKS + 1.0,
        bounds: welcome.bounds,
        last_tick: Vec::with_capacity(4),
    };
    let profile = ctx.profile;
    let now = Instant::now();
    let far = now + Duration::from_secs(86_400 * 365);
    let turn = sleep_until(if profile.turn.is_some() { now } else { far });
    let chat = sleep_until(profile.chat.map_or(far, |c| now + c.sample(rng)));
    let ping = sleep_until(profile.ping.map_or(far, |p| now + p));
    tokio::pin!(turn, chat, ping);
    loop {
        let sent = tokio::select! {
            biased;
            _ = cancel.cancelled() => return SessionEnd::new(Ending::Stopped, None),
            incoming = client.recv() => match m.on_incoming(incoming) {
                Some(end) => return end,
                None => continue,
            },
            _ = &mut turn => {
                let next = profile.turn.map_or(far, |t| Instant::now() + t.sample(rng));
                turn.as_mut().reset(next);
                let (x, y) = profile.direction(rng);
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
        };
        match sent {
            Ok(Ok(())) => ctx.stats.event(Event::Sent),
            Ok(Err(e)) => return SessionEnd::new(Ending::Lost, Some((FailureKind::ConnectionLost, e.to_string()))),
            Err(_) => return SessionEnd::new(Ending::Lost, Some((FailureKind::ConnectionLost, "send stuck".into()))),
        }
    }
}

impl Measure<'_> {
    /// Handles one received item; Some when the session is over.
    fn on_incoming(&mut self, incoming: Incoming) -> Option<SessionEnd> {
        let bytes = match incoming {
            Incoming::Frame(b) => b,
            Incoming::Closed(code) => {
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
        let stats = self.ctx.stats;
        stats.frame(bytes.len());
        match server::decode(&bytes) {
            Ok(ServerMsg::Snapshot(s)) => self.on_snapshot(&s, now),
            Ok(ServerMsg::Pong(p)) => {
                let rtt_ms = wall_ms() - p.client_time_ms();
                if rtt_ms.is_finite() && rtt_ms >= 0.0 {
                    stats.record(self.ctx.bot, Metric::Rtt, Duration::from_secs_f64(rtt_ms / 1000.0));
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
            Ok(ServerMsg::Cell(c)) => self.on_cell(&c, now),
            Ok(
                ServerMsg::Presence(_)
                | ServerMsg::Roster(_)
                | ServerMsg::Error(_)
                | ServerMsg::Names(_)
                | ServerMsg::PlaceStatus(_),
            ) => {}
            Ok(ServerMsg::CellBundle(_)) => {
                let detail = "a bundle between shards sent to a client".to_owned();
                return Some(SessionEnd::new(Ending::Protocol, Some((FailureKind::Protocol, detail))));
            }
            Err(e) => return Some(SessionEnd::new(Ending::Protocol, Some((FailureKind::Protocol, e.to_string())))),
        }
        None
    }

    fn on_snapshot(&mut self, s: &wire::Snapshot<'_>, now: Instant) {
        let (stats, bot) = (self.ctx.stats, self.ctx.bot);
        let shard = s.shard_id();
        let own = shard == self.own_shard;
        stats.snapshot(own);
        match self.clocks.iter_mut().find(|c| c.0 == shard) {
            Some(clock) => {
                stats.record(bot, if own { Metric::SnapshotGap } else { Metric::RelayedGap }, now - clock.1);
                clock.1 = now;
            }
            None => {
                self.clocks.push((shard, now));
                stats.shard_seen(shard);
            }
        }
        if !own {
            return;
        }
        let age_ms = wall_ms() - s.server_time_ms() as f64;
        if age_ms.is_finite() && age_ms >= 0.0 {
            stats.record(bot, Metric::SnapshotAge, Duration::from_secs_f64(age_ms / 1000.0));
        }
        if let Some(pos) = self.own_position(s) {
            self.ctx.shared.set_position(pos);
            self.check_back_in_place(pos);
        }
    }

    /// A cell frame (area of interest): a shard's first frame of a tick times
    /// its gap (own or relayed), and the frame holding the bot times its age
    /// and gives its position.
    fn on_cell(&mut self, c: &mino_protocol::cell::CellView<'_>, now: Instant) {
        let key = c.key();
        let (shard, tick) = (key.shard_id(), key.tick());
        match self.last_tick.iter_mut().find(|t| t.0 == shard) {
            Some(last) if last.1 == tick => {}
            Some(last) => {
                last.1 = tick;
                self.shard_clock(shard, now);
            }
            None => {
                self.last_tick.push((shard, tick));
                self.shard_clock(shard, now);
            }
        }
        if shard != self.own_shard {
            return;
        }
        let Some(p) = c.players().iter().find(|p| server::player_id(p) == self.own_id) else { return };
        let age_ms = (wall_ms() as u64 as u32).wrapping_sub(key.time_ms()) as f64;
        if age_ms < 60_000.0 {
            self.ctx.stats.record(self.ctx.bot, Metric::SnapshotAge, Duration::from_secs_f64(age_ms / 1000.0));
        }
        let pos = quantize::world_position(&self.bounds, p.x(), p.y());
        self.ctx.shared.set_position(pos);
        self.check_back_in_place(pos);
    }

    /// Times the gap since `shard`'s previous frame.
    fn shard_clock(&mut self, shard: u32, now: Instant) {
        let (stats, bot) = (self.ctx.stats, self.ctx.bot);
        let own = shard == self.own_shard;
        stats.snapshot(own);
        match self.clocks.iter_mut().find(|c| c.0 == shard) {
            Some(clock) => {
                stats.record(bot, if own { Metric::SnapshotGap } else { Metric::RelayedGap }, now - clock.1);
                clock.1 = now;
            }
            None => {
                self.clocks.push((shard, now));
                stats.shard_seen(shard);
            }
        }
    }

    /// The bot's own position in `s`, world units; checks last tick's index first.
    fn own_position(&mut self, s: &wire::Snapshot<'_>) -> Option<(f32, f32)> {
        let players = s.players()?;
        let bounds = s.bounds()?;
        let at = |i: usize| (i < players.len() && server::player_id(players.get(i)) == self.own_id).then_some(i);
        let i = at(self.own_hint).or_else(|| (0..players.len()).find_map(at))?;
        self.own_hint = i;
        let p = players.get(i);
        Some(quantize::world_position(bounds, p.x(), p.y()))
    }

    fn check_back_in_place(&mut self, pos: (f32, f32)) {
        let Some(r) = self.resume.take() else { return };
        let stats = self.ctx.stats;
        stats.record(self.ctx.bot, Metric::BackInPlace, r.closed_at.elapsed());
        stats.event(Event::BackInPlace);
        if let Some((x, y)) = r.last_position {
            let jump = ((pos.0 - x).powi(2) + (pos.1 - y).powi(2)).sqrt();
            stats.resume_jump(jump);
            if jump > self.tolerance {
                stats.event(Event::Misplaced);
            }
        }
    }
}
