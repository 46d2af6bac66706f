//! The task of one websocket: waits for the Hello, resumes the session its
//! ticket names or asks for a new one, then loops over five things: inbound
//! messages (checked against limits, forwarded to the tick loop), its outbox
//! (the fan-out writes the tick's frames itself and wakes the session only when
//! the socket could not take them all), a timer for pings, the peer timeout and
//! the ticket's refresh, the tick loop's controls (session replaced, move), and
//! shutdown. Every way out is a [`CloseReason`]; after its close frame the
//! session lingers (see [`super::read_end`]) so the peer can read why.
//!
//! Pings and pongs from the peer count against a per-socket budget
//! (`--control-rate`, burst twice that); past it the socket closes with
//! [`CloseReason::ControlFlood`]. An admitted player's pings are answered in
//! the tick's one write, the newest only (see [`Outbox::pong_next_tick`]).
//!
//! The session, not the tick loop, waits for Redis: it claims a resumed session
//! (into a place reserved first, so a busy shard refuses before the ticket is
//! spent), registers a new one, and refreshes its ticket's TTL.

use super::command::Command;
use super::liveness::{Check, Liveness};
use super::outbox::{Outbox, SlowLimits, WriteError};
use super::read_end::{self, Linger, ReadEnd};
use super::socket::{Reader, WriteHalf};
use super::TokenBucket;
use crate::admission::Refusal;
use crate::auth::{AuthError, Identity, Verifier};
use crate::clock;
use crate::close::CloseReason;
use crate::config::Config;
use crate::metrics::{Metrics, Tally};
use crate::resume::store::SessionStore;
use crate::resume::{AccountGate, Claimed, ResumeError, Ticket};
use crate::shard::{Busy, Control, LinkId};
use crate::ws_frame;
use bytes::Bytes;
use futures_util::StreamExt;
use mino_protocol::client::{self, ClientMsg, Hello};
use mino_protocol::server as msg;
use mino_protocol::PlayerId;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{timeout, MissedTickBehavior};
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_util::sync::CancellationToken;

/// What every session shares: settings, metrics, the way to the tick loop and
/// the shutdown token. Cheap to clone.
#[derive(Clone)]
pub struct SessionContext {
    /// Server settings.
    pub config: Arc<Config>,
    /// Metrics.
    pub metrics: Metrics,
    /// Commands to the tick loop (bounded).
    pub commands: mpsc::Sender<Command>,
    /// Cancelled on shutdown.
    pub cancel: CancellationToken,
    /// Clustered: sessions and tickets in Redis.
    pub store: Option<SessionStore>,
    /// Verifies the Hello's access token.
    pub auth: Verifier,
}

/// Longest the server spends telling a peer why it closes, so a dead peer
/// cannot hold a closing task.
const CLOSE_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// Longest period of the session's timer (pings, peer timeout, ticket refresh).
const HOUSEKEEPING: Duration = Duration::from_secs(1);

/// Runs one session to its end. Never panics on anything the peer sends.
pub async fn serve(reader: Reader, writer: WriteHalf, ctx: SessionContext) {
    ctx.metrics.connections.inc();
    let cfg = &ctx.config;
    let limits = SlowLimits { ticks: cfg.outbound_ticks, time: cfg.write_timeout };
    let outbox = Arc::new(Outbox::new(writer, limits, cfg.unbatched_writes));
    let controls = control_budget(cfg, clock::now());
    // The context lives in the session only: a session task's memory is
    // mostly its future, held for as long as the player plays.
    let mut session = Session {
        ctx,
        reader,
        outbox,
        player: None,
        link: LinkId(0),
        ticket: None,
        account: None,
        controls,
        end: ReadEnd::Open,
        kicked: None,
    };
    let reason = session.run().await;
    Box::pin(session.close(reason)).await;
    let ctx = &session.ctx;
    if let Some(player) = session.player {
        // The tick loop is gone only at shutdown, when leaving no longer matters.
        let _ = Box::pin(ctx.commands.send(Command::Leave { player, link: session.link })).await;
    }
    ctx.metrics.closed(reason);
    let discarded = Box::pin(read_end::linger(&mut session.reader, Linger::after(session.end, reason))).await;
    ctx.metrics.connections.dec();
    tracing::debug!(player = ?session.player, reason = reason.label(), discarded, "session closed");
}

/// The budget of pings and pongs a peer may send: `--control-rate` a second,
/// bursts of twice that.
fn control_budget(cfg: &Config, now: clock::Instant) -> TokenBucket {
    let rate = f64::from(cfg.control_rate);
    TokenBucket::new(rate, rate * 2.0, now)
}

struct Session {
    ctx: SessionContext,
    reader: Reader,
    outbox: Arc<Outbox>,
    player: Option<PlayerId>,
    /// This session's link at the shard core.
    link: LinkId,
    /// The player's current resume ticket.
    ticket: Option<Ticket>,
    /// The account the session belongs to (`None`: a guest's).
    account: Option<Box<str>>,
    /// Pings and pongs the peer may still send.
    controls: TokenBucket,
    /// Where the read side stands (decides the linger after the close).
    end: ReadEnd,
    /// The operator's reason when the player was kicked.
    kicked: Option<Arc<str>>,
}

impl Drop for Session {
    /// A session that ends without [`Session::close`] (a panic) leaves its
    /// outbox closed, so the fan-out stops writing to its socket.
    fn drop(&mut self) {
        self.outbox.abandon();
    }
}

/// The outcome of one inbound message.
enum Flow {
    Continue,
    Close(CloseReason),
}

/// What one read from the socket amounts to, once control frames and the
/// peer's close are accounted for.
enum Read {
    /// A binary message.
    Binary(Bytes),
    /// A ping within the budget: answer it with this pong.
    Ping(Bytes),
    /// Nothing for the caller (a pong within the budget).
    Nothing,
    /// The socket must close.
    Close(CloseReason),
}

impl Session {
    async fn run(&mut self) -> CloseReason {
        let hello = match timeout(self.ctx.config.handshake_timeout, Box::pin(self.read_hello())).await {
            Err(_) => return CloseReason::HelloTimeout,
            Ok(Err(reason)) => return reason,
            Ok(Ok(hello)) => hello,
        };
        let started = clock::now();
        let identity = match self.identify(&hello) {
            Ok(identity) => identity,
            Err(reason) => return reason,
        };
        let resume = match (hello.resume_ticket, &identity) {
            (Some(bytes), _) => {
                let account = identity.as_ref().map(|i| i.account.as_str());
                let require = identity.is_none() && self.ctx.auth.verify(None).is_err();
                match Box::pin(self.claim(bytes, account, require)).await {
                    Ok(claimed) => Some(claimed),
                    Err(reason) => return reason,
                }
            }
            (None, Some(identity)) => match Box::pin(self.login(identity, &hello.name)).await {
                Ok(claimed) => Some(claimed),
                Err(reason) => return reason,
            },
            (None, None) => None,
        };
        self.account = resume.as_ref().and_then(|c| c.account.as_deref()).map(Box::from);
        let claimed_in = started.elapsed();
        let resumed = resume.is_some();
        let (reply_tx, reply_rx) = oneshot::channel();
        let name = identity.and_then(|i| i.name).unwrap_or(hello.name);
        let outbox = self.outbox.clone();
        let join = Command::Join { name: name.clone(), resume, outbox, reply: reply_tx };
        if self.ctx.commands.send(join).await.is_err() {
            return CloseReason::Shutdown;
        }
        match reply_rx.await {
            Err(_) => CloseReason::Shutdown,
            Ok(Err(busy)) => Box::pin(self.busy(busy)).await,
            Ok(Ok(admitted)) => {
                let player = admitted.player;
                (self.player, self.link, self.ticket) = (Some(player), admitted.link, Some(admitted.ticket));
                if let Some(store) = &self.ctx.store {
                    // Before the welcome: from now on a resume elsewhere finds
                    // the player where it was placed, even if this shard dies
                    // before any snapshot of its lists it.
                    let stored = match resumed {
                        false => Box::pin(store.register(player, &name, admitted.ticket, admitted.position)).await,
                        true => Box::pin(store.placed(player, admitted.position)).await,
                    };
                    if let Err(e) = stored {
                        tracing::warn!(error = %e, %player, "session not stored in redis; it cannot resume elsewhere in place");
                    }
                }
                // The welcome, then the tick frames gathered meanwhile.
                let mut tally = Tally::default();
                let welcome = ws_frame::binary(&admitted.welcome);
                let opened = Box::pin(self.outbox.open(welcome, self.ctx.config.write_timeout, &mut tally)).await;
                self.ctx.metrics.count_writes(tally);
                if let Err(e) = opened {
                    return e.close_reason();
                }
                tracing::debug!(%player, resumed, ?claimed_in, welcomed_in = ?started.elapsed(), "welcomed");
                self.play(player).await
            }
        }
    }

    /// Sends Busy; the close code follows.
    async fn busy(&mut self, busy: Busy) -> CloseReason {
        let Busy { refusal, retry_after_ms } = busy;
        let busy = ws_frame::binary(&msg::encode_busy(Refusal::label(refusal), retry_after_ms));
        let _ = self.send(busy, CLOSE_WRITE_TIMEOUT).await;
        CloseReason::Busy
    }

    /// The Hello's verified identity (`None`: a guest). A Hello without a
    /// token but with a ticket passes here even when guests are refused: its
    /// claim admits only an account's session.
    fn identify(&self, hello: &Hello) -> Result<Option<Identity>, CloseReason> {
        match self.ctx.auth.verify(hello.access_token.as_deref()) {
            Ok(identity) => Ok(identity),
            Err(AuthError::Missing) if hello.resume_ticket.is_some() => Ok(None),
            Err(e) => {
                self.ctx.metrics.auth_refused(e);
                tracing::debug!(reason = e.label(), "access token refused");
                Err(e.into())
            }
        }
    }

    /// Holds a place at the tick driver for a resume or a sign-in.
    async fn reserve(&mut self) -> Result<(), CloseReason> {
        let (tx, rx) = oneshot::channel();
        self.ctx.commands.send(Command::Reserve { reply: tx }).await.map_err(|_| CloseReason::Shutdown)?;
        match rx.await {
            Err(_) => Err(CloseReason::Shutdown),
            Ok(Err(busy)) => Err(self.busy(busy).await),
            Ok(Ok(())) => Ok(()),
        }
    }

    /// Gives back the place held by [`Session::reserve`].
    fn unreserve(&self, e: &dyn std::fmt::Display) {
        let _ = self.ctx.commands.try_send(Command::Unreserve);
        tracing::debug!(error = %e, "resume or sign-in refused");
    }

    /// Reserves a place, then claims the session the ticket names (in Redis,
    /// or standalone at the tick loop), of `account` when the Hello had a
    /// token and of any account when `require` (guests refused); gives the
    /// place back if refused.
    async fn claim(&mut self, ticket: Vec<u8>, account: Option<&str>, require: bool) -> Result<Claimed, CloseReason> {
        self.reserve().await?;
        let gate = AccountGate { account, require };
        let claimed = match &self.ctx.store {
            Some(store) => {
                let now = clock::wall_ms();
                let next = Ticket::issue(now, &mut rand::rng());
                store.claim(&ticket, next, now, gate).await
            }
            None => {
                let (tx, rx) = oneshot::channel();
                let (account, require_account) = (account.map(str::to_owned), require);
                let asked = self.ctx.commands.send(Command::ClaimLocal { ticket, account, require_account, reply: tx });
                match (asked.await, rx.await) {
                    (Ok(()), Ok(answer)) => answer,
                    _ => return Err(CloseReason::Shutdown),
                }
            }
        };
        claimed.map_err(|e| {
            self.unreserve(&e);
            if e == ResumeError::GuestSession {
                self.ctx.metrics.auth_refused(AuthError::Missing);
            }
            CloseReason::from(e)
        })
    }

    /// An account signs in: reserves a place, then takes the account's live
    /// session over wherever it is (its older socket is told "session
    /// replaced"), or makes its first one; gives the place back if refused.
    async fn login(&mut self, identity: &Identity, hello_name: &str) -> Result<Claimed, CloseReason> {
        self.reserve().await?;
        let name = identity.name.clone().unwrap_or_else(|| hello_name.to_owned());
        let account = identity.account.clone();
        let claimed = match &self.ctx.store {
            Some(store) => {
                let (tx, rx) = oneshot::channel();
                self.ctx.commands.send(Command::NewId { reply: tx }).await.map_err(|_| CloseReason::Shutdown)?;
                let player = match rx.await {
                    Err(_) => return Err(CloseReason::Shutdown),
                    Ok(Err(busy)) => {
                        self.unreserve(&"no player id");
                        return Err(self.busy(busy).await);
                    }
                    Ok(Ok(player)) => player,
                };
                let next = Ticket::issue(clock::wall_ms(), &mut rand::rng());
                store.login(&account, &name, next, player).await.map_err(CloseReason::from)
            }
            None => {
                let (tx, rx) = oneshot::channel();
                let asked = self.ctx.commands.send(Command::LoginLocal { account, name, reply: tx });
                match (asked.await, rx.await) {
                    (Ok(()), Ok(Ok(claimed))) => Ok(claimed),
                    (Ok(()), Ok(Err(busy))) => {
                        self.unreserve(&"no player id");
                        return Err(self.busy(busy).await);
                    }
                    _ => return Err(CloseReason::Shutdown),
                }
            }
        };
        claimed.inspect_err(|e| self.unreserve(&e.label()))
    }

    /// Takes one read from the socket: control frames against the budget,
    /// the peer's close answered as RFC 6455 section 7.4 says, read errors
    /// classified; notes where the read side stands.
    fn read(&mut self, inbound: Option<Result<Message, tungstenite::Error>>) -> Read {
        let message = match inbound {
            None => {
                self.end = ReadEnd::Gone;
                return Read::Close(CloseReason::ClientClosed);
            }
            Some(Err(e)) => {
                let (reason, end) = read_end::classify(&e);
                self.end = end;
                return Read::Close(reason);
            }
            Some(Ok(m)) => m,
        };
        match message {
            Message::Binary(data) => Read::Binary(data),
            Message::Text(_) => Read::Close(CloseReason::TextFrame),
            Message::Close(frame) => {
                self.end = ReadEnd::PeerClosed;
                Read::Close(CloseReason::answering(frame.map(|f| u16::from(f.code))))
            }
            Message::Ping(_) | Message::Pong(_) if !self.controls.try_take(clock::now()) => {
                Read::Close(CloseReason::ControlFlood)
            }
            Message::Ping(payload) => Read::Ping(ws_frame::pong(&payload)),
            Message::Pong(_) | Message::Frame(_) => Read::Nothing,
        }
    }

    /// Reads until the first application message, which must be a valid Hello.
    /// Pings before it are answered at once (the socket is not yet in the
    /// tick's fan-out), within the control budget.
    async fn read_hello(&mut self) -> Result<Hello, CloseReason> {
        loop {
            let inbound = self.reader.next().await;
            let data = match self.read(inbound) {
                Read::Binary(data) => data,
                Read::Close(reason) => return Err(reason),
                Read::Nothing => continue,
                Read::Ping(pong) => {
                    if let Err(e) = self.send(pong, self.ctx.config.write_timeout).await {
                        return Err(e.close_reason());
                    }
                    continue;
                }
            };
            return match client::decode(&data) {
                Err(e) => Err(CloseReason::from(&e)),
                Ok(ClientMsg::Hello(h)) if h.protocol_version != mino_protocol::PROTOCOL_VERSION => {
                    Err(CloseReason::ProtocolVersion)
                }
                Ok(ClientMsg::Hello(h)) => Ok(h),
                Ok(_) => Err(CloseReason::HelloExpected),
            };
        }
    }

    /// The main loop of an admitted player.
    async fn play(&mut self, player: PlayerId) -> CloseReason {
        let cfg = self.ctx.config.clone();
        let now = clock::now();
        let mut inputs = TokenBucket::new(f64::from(cfg.input_rate), f64::from(cfg.input_rate) * 2.0, now);
        let mut chats = TokenBucket::new(cfg.chat_rate, 5.0, now);
        let mut last_refresh = now;
        let period = HOUSEKEEPING.min(cfg.ping_interval).min(cfg.peer_timeout / 4);
        let mut liveness = Liveness::new(cfg.ping_interval, cfg.peer_timeout, period, now);
        let mut housekeeping = tokio::time::interval_at(now + period, period);
        housekeeping.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let cancel = self.ctx.cancel.clone();
        let outbox = self.outbox.clone();
        loop {
            tokio::select! {
                () = cancel.cancelled() => return CloseReason::Shutdown,
                told = outbox.told() => match told {
                    Control::Close(reason) => return reason,
                    Control::Move(next) => return Box::pin(self.moved(player, next)).await,
                    Control::Kick(why) => {
                        self.kicked = Some(why);
                        return CloseReason::Kicked;
                    }
                },
                inbound = self.reader.next() => {
                    liveness.heard(clock::now());
                    let flow = match self.read(inbound) {
                        Read::Binary(data) => Box::pin(self.inbound(player, data, &mut inputs, &mut chats)).await,
                        Read::Ping(pong) => {
                            outbox.pong_next_tick(pong);
                            Flow::Continue
                        }
                        Read::Nothing => Flow::Continue,
                        Read::Close(reason) => Flow::Close(reason),
                    };
                    if let Flow::Close(reason) = flow {
                        return reason;
                    }
                }
                // The socket could not take a tick's frames at once: finish them.
                () = outbox.woken() => {
                    if let Err(e) = Box::pin(self.drain(cfg.write_timeout)).await {
                        return e.close_reason();
                    }
                }
                _ = housekeeping.tick() => {
                    // The instant of the check, not the one it was due at:
                    // a stall shows as a check far later than its period.
                    let now = clock::now();
                    match liveness.check(now) {
                        Check::Silent => return CloseReason::PeerTimeout,
                        Check::Ping => outbox.ping_next_tick(),
                        Check::Fine => {}
                    }
                    if now.duration_since(last_refresh) >= cfg.ticket_ttl / 3 {
                        last_refresh = now;
                        Box::pin(self.refresh_ticket(player)).await;
                    }
                }
            }
        }
    }

    /// Handles one binary message of an admitted player.
    async fn inbound(
        &mut self,
        player: PlayerId,
        data: Bytes,
        inputs: &mut TokenBucket,
        chats: &mut TokenBucket,
    ) -> Flow {
        let now = clock::now();
        let command = match client::decode(&data) {
            Err(e) => return Flow::Close(CloseReason::from(&e)),
            Ok(ClientMsg::Hello(_)) => return Flow::Close(CloseReason::Malformed),
            Ok(ClientMsg::Input { dir, seq }) => {
                if !inputs.try_take(now) {
                    return Flow::Close(CloseReason::InputFlood);
                }
                Command::Input { player, dir, seq }
            }
            Ok(ClientMsg::Names(ids)) => {
                if !inputs.try_take(now) {
                    return Flow::Close(CloseReason::InputFlood);
                }
                return Box::pin(self.names(ids)).await;
            }
            Ok(ClientMsg::Chat(text)) => {
                if !chats.try_take(now) {
                    return Flow::Close(CloseReason::ChatFlood);
                }
                Command::Chat { player, text }
            }
            Ok(ClientMsg::Ping { client_time_ms }) => {
                if !inputs.try_take(now) {
                    return Flow::Close(CloseReason::InputFlood);
                }
                // Answered at once, with its own write, so the measured ping is true.
                let pong = ws_frame::binary(&msg::encode_pong(client_time_ms, clock::wall_ms()));
                return match self.send(pong, self.ctx.config.write_timeout).await {
                    Ok(()) => Flow::Continue,
                    Err(e) => Flow::Close(e.close_reason()),
                };
            }
        };
        match self.ctx.commands.send(command).await {
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Close(CloseReason::Shutdown),
        }
    }

    /// Answers a NamesRequest (the tick driver knows the names).
    async fn names(&self, ids: Vec<u32>) -> Flow {
        let (reply, answer) = oneshot::channel();
        if self.ctx.commands.send(Command::Names { ids, reply }).await.is_err() {
            return Flow::Close(CloseReason::Shutdown);
        }
        let Ok(names) = answer.await else { return Flow::Close(CloseReason::Shutdown) };
        match self.send(ws_frame::binary(&names), self.ctx.config.write_timeout).await {
            Ok(()) => Flow::Continue,
            Err(e) => Flow::Close(e.close_reason()),
        }
    }

    /// Keeps the session and ticket alive in Redis while the player plays.
    async fn refresh_ticket(&self, player: PlayerId) {
        if let (Some(store), Some(ticket)) = (&self.ctx.store, self.ticket) {
            if let Err(e) = store.refresh(player, ticket, self.account.as_deref()).await {
                tracing::debug!(error = %e, "ticket refresh failed");
            }
        }
    }

    /// Draining: hands the player a fresh ticket in a Move, then closes.
    async fn moved(&mut self, player: PlayerId, next: Ticket) -> CloseReason {
        if let (Some(store), Some(old)) = (&self.ctx.store, self.ticket) {
            if let Err(e) = store.reissue(player, old, next).await {
                tracing::warn!(error = %e, %player, "move ticket not stored; the player rejoins as new");
            }
        }
        self.ticket = Some(next);
        let frame = ws_frame::binary(&msg::encode_move(next.as_bytes(), "shard draining"));
        let _ = self.send(frame, CLOSE_WRITE_TIMEOUT).await;
        CloseReason::Moved
    }

    /// Writes one frame after everything queued, waiting at most `limit`.
    async fn send(&self, frame: Bytes, limit: Duration) -> Result<(), WriteError> {
        let mut tally = Tally::default();
        let sent = self.outbox.send(&[frame], limit, &mut tally).await;
        self.ctx.metrics.count_writes(tally);
        sent
    }

    /// Finishes what the fan-out could not write at once, waiting at most `limit`.
    async fn drain(&self, limit: Duration) -> Result<(), WriteError> {
        let mut tally = Tally::default();
        let drained = self.outbox.drain(limit, &mut tally).await;
        self.ctx.metrics.count_writes(tally);
        drained
    }

    /// Tells the peer why (Error message for protocol faults), sends the close
    /// frame and half-closes, bounded by [`CLOSE_WRITE_TIMEOUT`].
    async fn close(&mut self, reason: CloseReason) {
        let code = reason.code();
        // A kick says the operator's reason (the close frame as much of it as fits).
        let text = match self.kicked.take() {
            Some(why) => format!("{}: {why}", reason.message()),
            None => reason.message().to_owned(),
        };
        let mut frames = Vec::with_capacity(2);
        if reason.tells_peer() {
            frames.push(ws_frame::binary(&msg::encode_error(code, &text)));
        }
        frames.push(ws_frame::close(code.0, &text));
        let mut tally = Tally::default();
        self.outbox.close(&frames, CLOSE_WRITE_TIMEOUT, &mut tally).await;
        self.ctx.metrics.count_writes(tally);
    }
}
