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

use super::admit::Refused;
use super::command::{Ask, Command};
use crate::auth::Verifier;
use crate::clock;
use crate::close::CloseReason;
use crate::config::Config;
use crate::hub::conn::{control_budget, Handover};
use crate::hub::rate_limit::{Budget, TokenBucket};
use crate::hub::Handed;
use crate::metrics::{Metrics, Transport};
use crate::resume::store::SessionStore;
use crate::socket::{ConnectionSlot, Upgraded};
use crate::websocket::closing::{self, ReadEnd};
use crate::websocket::frame as ws_frame;
use crate::websocket::reader::{Frame, FrameReader, Next};
use bytes::Bytes;
use mino_protocol::client::{self, ClientMsg, Hello};
use mino_protocol::limits::MAX_CLIENT_MESSAGE_BYTES;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
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

/// Runs one socket's handshake, then hands the socket to the tick driver's
/// hub. `already_read`: bytes the HTTP server read past the upgrade request;
/// `slot`: the connection's share of `--max-connections`, kept until it closes.
/// Never panics on anything the peer sends.
pub async fn serve<S: Upgraded>(stream: S, already_read: Bytes, slot: Option<ConnectionSlot>, ctx: SessionContext) {
    ctx.metrics.connections.inc();
    let budget = control_budget(&ctx.config.socket);
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
            if ctx.commands.send(Ask::Refuse { conn, reason, first }.into()).await.is_err() {
                // The driver is gone (shutdown): the socket just closes.
                ctx.metrics.closed(Transport::Websocket, reason);
                ctx.metrics.connections.dec();
            }
        }
        None => {
            ctx.metrics.closed(Transport::Websocket, reason);
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
        let (cancel, limit) = (self.ctx.cancel.clone(), self.ctx.config.listen.handshake_timeout);
        let read = Box::pin(self.read_hello(already_read));
        let hello = tokio::select! {
            () = cancel.cancelled() => return Err(CloseReason::Shutdown.into()),
            hello = timeout(limit, read) => match hello {
                Err(_) => return Err(CloseReason::HelloTimeout.into()),
                Ok(hello) => hello?,
            },
        };
        let ctx = self.ctx.clone();
        ctx.admit(hello, || self.hand_over().map(Handed::Socket)).await.map(|_| ())
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
        let writes = self.ctx.config.socket.writes;
        Some(Box::new(Handover { socket, reader, controls, end: self.end, writes, slot: self.slot.take() }))
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
            return (Some(Err(closing::classify(e).into())), pong);
        }
        (hello, pong)
    }
}
