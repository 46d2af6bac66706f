//! The handshake of one websocket, in a task of its own until the player is
//! admitted: waits for the Hello (answering pings meanwhile), verifies its
//! access token, resumes the session its ticket names or signs an account in
//! (into a place reserved first, so a busy shard refuses before the ticket is
//! spent), and asks the tick driver to admit the player. Admitted or refused,
//! the socket is then handed to the driver's [`super::Hub`] and the task
//! ends: no task lives as long as a player plays.
//!
//! Clustered, the task waits for Redis once more before the welcome: the new
//! session is stored (or a resumed one placed) so that a resume elsewhere
//! finds the player where it was placed, even if this shard dies before any
//! snapshot of its lists it. The hub gathers the tick's frames meanwhile.
//!
//! Pings and pongs from the peer count against a per-socket budget
//! (`--control-rate`, burst twice that); past it the socket closes with
//! [`CloseReason::ControlFlood`]. The same budget goes on in the hub.

use super::command::{Command, Joined};
use super::conn::control_budget;
use super::conn::Handover;
use super::frames::{Frame, FrameReader, Next};
use super::rate_limit::{Budget, TokenBucket};
use super::read_end::{self, ReadEnd};
use super::socket::{ConnectionSlot, Upgraded};
use crate::admission::Refusal;
use crate::auth::{AuthError, Identity, Verifier};
use crate::clock;
use crate::close::CloseReason;
use crate::config::Config;
use crate::metrics::Metrics;
use crate::resume::store::SessionStore;
use crate::resume::{AccountGate, Claimed, ResumeError, Ticket};
use crate::shard::{Busy, LinkId};
use crate::ws_frame;
use bytes::Bytes;
use mino_protocol::client::{self, ClientMsg, Hello};
use mino_protocol::limits::MAX_CLIENT_MESSAGE_BYTES;
use mino_protocol::server as msg;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

/// What every handshake shares: settings, metrics, the way to the tick loop
/// and the shutdown token. Cheap to clone.
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

/// Longest a pong before the Hello may take to write.
const PONG_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// The handshake's read buffer, bytes (freed with the task; a Hello is far
/// smaller).
const HANDSHAKE_READ_BYTES: usize = 4096;

/// Why a handshake ended before admission: the reason and a frame to send
/// before the error and close frames (a Busy).
struct Refused {
    reason: CloseReason,
    first: Option<Bytes>,
}

impl From<CloseReason> for Refused {
    fn from(reason: CloseReason) -> Refused {
        Refused { reason, first: None }
    }
}

/// Runs one socket's handshake, then hands the socket to the tick driver's
/// hub. `already_read`: bytes the HTTP server read past the upgrade request;
/// `slot`: the connection's share of `--max-connections`, kept until it closes.
/// Never panics on anything the peer sends.
pub async fn serve<S: Upgraded>(stream: S, already_read: Bytes, slot: Option<ConnectionSlot>, ctx: SessionContext) {
    ctx.metrics.connections.inc();
    let budget = control_budget(&ctx.config);
    let controls = TokenBucket::full(&budget, clock::now());
    let mut hs = Handshake {
        ctx,
        stream: Some(stream),
        reader: FrameReader::new(MAX_CLIENT_MESSAGE_BYTES),
        controls,
        budget,
        end: ReadEnd::Open,
        slot,
    };
    let refused = match hs.run(already_read).await {
        Ok(()) => return,
        Err(refused) => refused,
    };
    let Refused { reason, first } = refused;
    let ctx = hs.ctx.clone();
    match hs.hand_over() {
        Some(conn) => {
            if ctx.commands.send(Command::Refuse { conn, reason, first }).await.is_err() {
                // The driver is gone (shutdown): the socket just closes.
                ctx.metrics.closed(reason);
                ctx.metrics.connections.dec();
            }
        }
        None => {
            ctx.metrics.closed(reason);
            ctx.metrics.connections.dec();
        }
    }
    tracing::debug!(reason = reason.label(), "handshake refused");
}

/// One socket's handshake.
struct Handshake<S> {
    ctx: SessionContext,
    /// `None` once handed over.
    stream: Option<S>,
    reader: FrameReader,
    controls: TokenBucket,
    budget: Budget,
    end: ReadEnd,
    slot: Option<ConnectionSlot>,
}

impl<S: Upgraded> Handshake<S> {
    async fn run(&mut self, already_read: Bytes) -> Result<(), Refused> {
        let (cancel, limit) = (self.ctx.cancel.clone(), self.ctx.config.handshake_timeout);
        let read = Box::pin(self.read_hello(already_read));
        let hello = tokio::select! {
            () = cancel.cancelled() => return Err(CloseReason::Shutdown.into()),
            hello = timeout(limit, read) => match hello {
                Err(_) => return Err(CloseReason::HelloTimeout.into()),
                Ok(hello) => hello?,
            },
        };
        let started = clock::now();
        let identity = self.identify(&hello)?;
        let resume = match (hello.resume_ticket, &identity) {
            (Some(bytes), _) => {
                let account = identity.as_ref().map(|i| i.account.as_str());
                let require = identity.is_none() && self.ctx.auth.verify(None).is_err();
                Some(Box::pin(self.claim(bytes, account, require)).await?)
            }
            (None, Some(identity)) => Some(Box::pin(self.login(identity, &hello.name)).await?),
            (None, None) => None,
        };
        let account = resume.as_ref().and_then(|c| c.account.as_deref()).map(Box::from);
        let claimed_in = started.elapsed();
        let resumed = resume.is_some();
        let name = identity.and_then(|i| i.name).unwrap_or(hello.name);
        let store = self.ctx.store.clone();
        let commands = self.ctx.commands.clone();
        let Some(conn) = self.hand_over() else { return Err(CloseReason::ClientClosed.into()) };
        let (reply_tx, reply_rx) = oneshot::channel();
        let join = Command::Join { name: name.clone(), resume, account, conn, hold: store.is_some(), reply: reply_tx };
        if commands.send(join).await.is_err() {
            return Ok(());
        }
        // From here on the socket is the hub's, admitted or refused.
        let Ok(Ok(joined)) = reply_rx.await else { return Ok(()) };
        let Joined { player, link, ticket, position } = joined;
        if let Some(store) = store {
            let mut guard = WelcomeGuard { link, commands: &commands, armed: true };
            let stored = match resumed {
                false => Box::pin(store.register(player, &name, ticket, position)).await,
                true => Box::pin(store.placed(player, position)).await,
            };
            if let Err(e) = stored {
                tracing::warn!(error = %e, %player, "session not stored in redis; it cannot resume elsewhere in place");
            }
            guard.armed = false;
            let _ = commands.send(Command::Welcome { link }).await;
        }
        tracing::debug!(%player, resumed, ?claimed_in, welcomed_in = ?started.elapsed(), "welcomed");
        Ok(())
    }

    /// The socket and what was read of it, for the hub. `None` when the
    /// socket cannot be handed over (already handed, or the runtime refused
    /// to give it up).
    fn hand_over(&mut self) -> Option<Box<Handover>> {
        let socket = match self.stream.take()?.into_socket() {
            Ok(socket) => socket,
            Err(e) => {
                tracing::warn!(error = %e, "socket could not be handed to the hub");
                return None;
            }
        };
        let reader = std::mem::replace(&mut self.reader, FrameReader::new(MAX_CLIENT_MESSAGE_BYTES));
        let controls = self.controls.clone();
        let unbatched = self.ctx.config.unbatched_writes;
        Some(Box::new(Handover { socket, reader, controls, end: self.end, unbatched, slot: self.slot.take() }))
    }

    /// A Busy frame to send before the close.
    fn busy(busy: Busy) -> Refused {
        let Busy { refusal, retry_after_ms } = busy;
        let frame = ws_frame::binary(&msg::encode_busy(Refusal::label(refusal), retry_after_ms));
        Refused { reason: CloseReason::Busy, first: Some(frame) }
    }

    /// The Hello's verified identity (`None`: a guest). A Hello without a
    /// token but with a ticket passes here even when guests are refused: its
    /// claim admits only an account's session.
    fn identify(&self, hello: &Hello) -> Result<Option<Identity>, Refused> {
        match self.ctx.auth.verify(hello.access_token.as_deref()) {
            Ok(identity) => Ok(identity),
            Err(AuthError::Missing) if hello.resume_ticket.is_some() => Ok(None),
            Err(e) => {
                self.ctx.metrics.auth_refused(e);
                tracing::debug!(reason = e.label(), "access token refused");
                Err(CloseReason::from(e).into())
            }
        }
    }

    /// Holds a place at the tick driver for a resume or a sign-in.
    async fn reserve(&mut self) -> Result<(), Refused> {
        let (tx, rx) = oneshot::channel();
        self.ctx.commands.send(Command::Reserve { reply: tx }).await.map_err(|_| CloseReason::Shutdown)?;
        match rx.await {
            Err(_) => Err(self.unanswered()),
            Ok(Err(busy)) => Err(Self::busy(busy)),
            Ok(Ok(())) => Ok(()),
        }
    }

    /// Why a request the tick driver took got no answer: the shard is
    /// stopping, or the core panicked on it (caught, counted and logged
    /// there), which the peer hears as 1011.
    fn unanswered(&self) -> Refused {
        if self.ctx.cancel.is_cancelled() {
            CloseReason::Shutdown.into()
        } else {
            CloseReason::Internal.into()
        }
    }

    /// Gives back the place held by [`Handshake::reserve`].
    fn unreserve(&self, e: &dyn std::fmt::Display) {
        let _ = self.ctx.commands.try_send(Command::Unreserve);
        tracing::debug!(error = %e, "resume or sign-in refused");
    }

    /// Reserves a place, then claims the session the ticket names (in Redis,
    /// or standalone at the tick loop), of `account` when the Hello had a
    /// token and of any account when `require` (guests refused); gives the
    /// place back if refused.
    async fn claim(&mut self, ticket: Vec<u8>, account: Option<&str>, require: bool) -> Result<Claimed, Refused> {
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
                if asked.await.is_err() {
                    return Err(CloseReason::Shutdown.into());
                }
                match rx.await {
                    Ok(answer) => answer,
                    Err(_) => {
                        self.unreserve(&"the claim got no answer");
                        return Err(self.unanswered());
                    }
                }
            }
        };
        claimed.map_err(|e| {
            self.unreserve(&e);
            if e == ResumeError::GuestSession {
                self.ctx.metrics.auth_refused(AuthError::Missing);
            }
            CloseReason::from(e).into()
        })
    }

    /// An account signs in: reserves a place, then takes the account's live
    /// session over wherever it is (its older socket is told "session
    /// replaced"), or makes its first one; gives the place back if refused.
    async fn login(&mut self, identity: &Identity, hello_name: &str) -> Result<Claimed, Refused> {
        self.reserve().await?;
        let name = identity.name.clone().unwrap_or_else(|| hello_name.to_owned());
        let account = identity.account.clone();
        let claimed = match &self.ctx.store {
            Some(store) => {
                let (tx, rx) = oneshot::channel();
                self.ctx.commands.send(Command::NewId { reply: tx }).await.map_err(|_| CloseReason::Shutdown)?;
                let player = match rx.await {
                    Err(_) => {
                        self.unreserve(&"no answer for a player id");
                        return Err(self.unanswered());
                    }
                    Ok(Err(busy)) => {
                        self.unreserve(&"no player id");
                        return Err(Self::busy(busy));
                    }
                    Ok(Ok(player)) => player,
                };
                let next = Ticket::issue(clock::wall_ms(), &mut rand::rng());
                store.login(&account, &name, next, player).await.map_err(CloseReason::from)
            }
            None => {
                let (tx, rx) = oneshot::channel();
                let asked = self.ctx.commands.send(Command::LoginLocal { account, name, reply: tx });
                if asked.await.is_err() {
                    return Err(CloseReason::Shutdown.into());
                }
                match rx.await {
                    Ok(Ok(claimed)) => Ok(claimed),
                    Ok(Err(busy)) => {
                        self.unreserve(&"no player id");
                        return Err(Self::busy(busy));
                    }
                    Err(_) => {
                        self.unreserve(&"the sign-in got no answer");
                        return Err(self.unanswered());
                    }
                }
            }
        };
        claimed.map_err(|e| {
            self.unreserve(&e.label());
            e.into()
        })
    }

    /// Reads until the first application message, which must be a valid
    /// Hello; the bytes after it stay in the reader for the hub. Pings before
    /// it are answered at once, within the control budget.
    async fn read_hello(&mut self, already_read: Bytes) -> Result<Hello, Refused> {
        let mut buf = vec![0u8; HANDSHAKE_READ_BYTES.max(already_read.len())];
        buf[..already_read.len()].copy_from_slice(&already_read);
        let mut n = already_read.len();
        loop {
            let (hello, pong) = self.frames(&mut buf[..n]);
            if let Some(pong) = pong {
                let Some(stream) = self.stream.as_mut() else { return Err(CloseReason::ClientClosed.into()) };
                match timeout(PONG_WRITE_TIMEOUT, stream.write_all(&pong)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => {
                        self.end = ReadEnd::Gone;
                        return Err(CloseReason::ClientClosed.into());
                    }
                    Err(_) => return Err(CloseReason::TooSlow.into()),
                }
            }
            if let Some(hello) = hello {
                return hello;
            }
            let Some(stream) = self.stream.as_mut() else { return Err(CloseReason::ClientClosed.into()) };
            n = match stream.read(&mut buf).await {
                Ok(0) | Err(_) => {
                    self.end = ReadEnd::Gone;
                    return Err(CloseReason::ClientClosed.into());
                }
                Ok(n) => n,
            };
        }
    }

    /// Feeds bytes to the reader until the first message: the Hello (or why
    /// not), and the pong for the newest ping seen before it.
    fn frames(&mut self, input: &mut [u8]) -> (Option<Result<Hello, Refused>>, Option<Bytes>) {
        let Handshake { reader, controls, budget, end, .. } = self;
        let mut hello = None;
        let mut pong = None;
        let now = clock::now();
        let fed = reader.feed(input, &mut |frame| {
            let outcome = match frame {
                Frame::Binary(data) => match client::decode(data) {
                    Err(e) => Err(CloseReason::from(&e)),
                    Ok(ClientMsg::Hello(h)) if h.protocol_version != mino_protocol::PROTOCOL_VERSION => {
                        Err(CloseReason::ProtocolVersion)
                    }
                    Ok(ClientMsg::Hello(h)) => Ok(h),
                    Ok(_) => Err(CloseReason::HelloExpected),
                },
                Frame::Text(_) | Frame::TextRefused => Err(CloseReason::TextFrame),
                Frame::Ping(_) | Frame::Pong if !controls.try_take(budget, now) => Err(CloseReason::ControlFlood),
                Frame::Ping(payload) => {
                    pong = Some(ws_frame::pong(payload));
                    return Next::More;
                }
                Frame::Pong => return Next::More,
                Frame::Close(code) => {
                    *end = ReadEnd::PeerClosed;
                    Err(CloseReason::answering(code))
                }
            };
            hello = Some(outcome.map_err(Refused::from));
            Next::Stop
        });
        if let Err(e) = fed {
            self.end = ReadEnd::Broken;
            return (Some(Err(read_end::classify(e).into())), pong);
        }
        (hello, pong)
    }
}

/// Releases a held welcome if the handshake task ends before it is done
/// with Redis (a panic): the player is never left unwelcomed.
struct WelcomeGuard<'a> {
    link: LinkId,
    commands: &'a mpsc::Sender<Command>,
    armed: bool,
}

impl Drop for WelcomeGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            // The queue is bounded: if full, the hub welcomes the player
            // after its backstop (`HELD_MAX`).
            let _ = self.commands.try_send(Command::Welcome { link: self.link });
        }
    }
}
