//! The task of one websocket: waits for the Hello, resumes the session its
//! ticket names or asks for a new one, then loops over four things: inbound
//! messages (checked against limits, forwarded to the tick loop), the shard's
//! per-tick frames (batched and written with one vectored write), the tick
//! loop's controls (session replaced, move), and shutdown. Every way out is a
//! [`CloseReason`].
//!
//! The session, not the tick loop, waits for Redis: it claims a resumed session
//! (into a place reserved first, so a busy shard refuses before the ticket is
//! spent), registers a new one, and refreshes its ticket's TTL.

use super::socket::{Reader, Writer};
use super::{ws_frame, Batch, CloseReason, TokenBucket};
use crate::config::Config;
use crate::metrics::{Metrics, ReasonLabel};
use crate::resume::store::SessionStore;
use crate::resume::{Claimed, Ticket};
use crate::shard::TickFrame;
use crate::tick::{now_ms, Command, Control, JoinReply, CONTROL_QUEUE};
use bytes::Bytes;
use futures_util::StreamExt;
use mino_protocol::client::{self, ClientMsg, Hello};
use mino_protocol::server as msg;
use mino_protocol::PlayerId;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::time::{timeout, Instant};
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
}

/// Longest the server spends telling a peer why it closes, so a dead peer
/// cannot hold a closing task.
const CLOSE_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// Runs one session to its end. Never panics on anything the peer sends.
pub async fn serve(reader: Reader, writer: Writer, ctx: SessionContext) {
    ctx.metrics.connections.inc();
    let mut session =
        Session { ctx: ctx.clone(), reader, writer, player: None, link: 0, ticket: None, out: Vec::with_capacity(8) };
    let reason = session.run().await;
    session.close(reason).await;
    if let Some(player) = session.player {
        // The tick loop is gone only at shutdown, when leaving no longer matters.
        let _ = ctx.commands.send(Command::Leave { player, link: session.link }).await;
    }
    ctx.metrics.connections.dec();
    ctx.metrics.sockets_closed.get_or_create(&ReasonLabel { reason: reason.label() }).inc();
    tracing::debug!(player = ?session.player, reason = reason.label(), "session closed");
}

struct Session {
    ctx: SessionContext,
    reader: Reader,
    writer: Writer,
    player: Option<PlayerId>,
    /// This session's link number at the tick loop.
    link: u64,
    /// The player's current resume ticket.
    ticket: Option<Ticket>,
    /// Frames of the next write; reused.
    out: Vec<Bytes>,
}

/// The outcome of one inbound message.
enum Flow {
    Continue,
    Close(CloseReason),
}

impl Session {
    async fn run(&mut self) -> CloseReason {
        let hello = match timeout(self.ctx.config.handshake_timeout, self.read_hello()).await {
            Err(_) => return CloseReason::HelloTimeout,
            Ok(Err(reason)) => return reason,
            Ok(Ok(hello)) => hello,
        };
        let started = std::time::Instant::now();
        let resume = match hello.resume_ticket {
            None => None,
            Some(bytes) => match self.claim(bytes).await {
                Ok(claimed) => Some(claimed),
                Err(reason) => return reason,
            },
        };
        let claimed_in = started.elapsed();
        let resumed = resume.is_some();
        let (control_tx, control_rx) = mpsc::channel(CONTROL_QUEUE);
        let (reply_tx, reply_rx) = oneshot::channel();
        let name = hello.name;
        let join = Command::Join { name: name.clone(), resume, control: control_tx, reply: reply_tx };
        if self.ctx.commands.send(join).await.is_err() {
            return CloseReason::Shutdown;
        }
        match reply_rx.await {
            Err(_) => CloseReason::Shutdown,
            Ok(JoinReply::Refused { refusal, retry_after_ms }) => self.busy(refusal.as_str(), retry_after_ms).await,
            Ok(JoinReply::Admitted { admitted, link, frames }) => {
                let player = admitted.player;
                (self.player, self.link, self.ticket) = (Some(player), link, Some(admitted.ticket));
                if let Some(store) = &self.ctx.store {
                    if !resumed {
                        if let Err(e) = store.register(player, &name, admitted.ticket).await {
                            tracing::warn!(error = %e, %player, "session not stored in redis; it cannot resume elsewhere");
                        }
                    }
                }
                if self.send_now(ws_frame::binary(&admitted.welcome)).await.is_err() {
                    return CloseReason::ClientClosed;
                }
                tracing::debug!(%player, resumed, ?claimed_in, welcomed_in = ?started.elapsed(), "welcomed");
                self.play(player, frames, control_rx).await
            }
        }
    }

    /// Sends Busy; the close code follows.
    async fn busy(&mut self, reason: &str, retry_after_ms: u32) -> CloseReason {
        let busy = ws_frame::binary(&msg::encode_busy(reason, retry_after_ms));
        let _ = timeout(CLOSE_WRITE_TIMEOUT, self.writer.write_frames(&[busy])).await;
        CloseReason::Busy
    }

    /// Reserves a place, then claims the session the ticket names (in Redis,
    /// or standalone at the tick loop); gives the place back if refused.
    async fn claim(&mut self, ticket: Vec<u8>) -> Result<Claimed, CloseReason> {
        let (tx, rx) = oneshot::channel();
        self.ctx.commands.send(Command::Reserve { reply: tx }).await.map_err(|_| CloseReason::Shutdown)?;
        match rx.await {
            Err(_) => return Err(CloseReason::Shutdown),
            Ok(Err((refusal, retry_after_ms))) => return Err(self.busy(refusal.as_str(), retry_after_ms).await),
            Ok(Ok(())) => {}
        }
        let claimed = match &self.ctx.store {
            Some(store) => {
                let now = now_ms();
                let next = Ticket::issue(now, &mut rand::rng());
                store.claim(&ticket, next, now).await
            }
            None => {
                let (tx, rx) = oneshot::channel();
                let asked = self.ctx.commands.send(Command::ClaimLocal { ticket, reply: tx }).await;
                match (asked, rx.await) {
                    (Ok(()), Ok(answer)) => answer,
                    _ => return Err(CloseReason::Shutdown),
                }
            }
        };
        claimed.map_err(|e| {
            let _ = self.ctx.commands.try_send(Command::Unreserve);
            tracing::debug!(error = %e, "resume refused");
            CloseReason::from(e)
        })
    }

    /// Reads until the first application message, which must be a valid Hello.
    async fn read_hello(&mut self) -> Result<Hello, CloseReason> {
        loop {
            let data = match self.reader.next().await {
                None => return Err(CloseReason::ClientClosed),
                Some(Err(e)) => return Err(classify(&e)),
                Some(Ok(Message::Binary(data))) => data,
                Some(Ok(Message::Text(_))) => return Err(CloseReason::TextFrame),
                Some(Ok(Message::Close(_))) => return Err(CloseReason::ClientClosed),
                Some(Ok(Message::Ping(p))) => {
                    let _ = self.send_now(ws_frame::pong(&p)).await;
                    continue;
                }
                Some(Ok(Message::Pong(_) | Message::Frame(_))) => continue,
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
    async fn play(
        &mut self,
        player: PlayerId,
        mut frames: broadcast::Receiver<Arc<TickFrame>>,
        mut control: mpsc::Receiver<Control>,
    ) -> CloseReason {
        let cfg = self.ctx.config.clone();
        let now = Instant::now();
        let std_now = std::time::Instant::now();
        let mut inputs = TokenBucket::new(f64::from(cfg.input_rate), f64::from(cfg.input_rate) * 2.0, std_now);
        let mut chats = TokenBucket::new(cfg.chat_rate, 5.0, std_now);
        let (mut last_heard, mut last_ping, mut last_refresh) = (now, now, now);
        let mut batch = Batch::default();
        let mut want_roster = true;
        let cancel = self.ctx.cancel.clone();
        loop {
            tokio::select! {
                () = cancel.cancelled() => return CloseReason::Shutdown,
                ctl = control.recv() => match ctl {
                    Some(Control::Close(reason)) => return reason,
                    Some(Control::Move(next)) => return self.moved(player, next).await,
                    None => return CloseReason::Shutdown,
                },
                inbound = self.reader.next() => {
                    last_heard = Instant::now();
                    let flow = match inbound {
                        None => Flow::Close(CloseReason::ClientClosed),
                        Some(Err(e)) => Flow::Close(classify(&e)),
                        Some(Ok(m)) => self.inbound(player, m, &mut inputs, &mut chats).await,
                    };
                    if let Flow::Close(reason) = flow {
                        return reason;
                    }
                }
                frame = frames.recv() => {
                    let first = match frame {
                        Ok(f) => f,
                        Err(RecvError::Lagged(_)) => return CloseReason::TooSlow,
                        Err(RecvError::Closed) => return CloseReason::Shutdown,
                    };
                    batch.add(&first, want_roster);
                    loop {
                        match frames.try_recv() {
                            Ok(f) => batch.add(&f, want_roster),
                            Err(TryRecvError::Lagged(_)) => return CloseReason::TooSlow,
                            Err(TryRecvError::Empty | TryRecvError::Closed) => break,
                        }
                    }
                    want_roster &= !batch.has_roster();
                    let now = Instant::now();
                    if now.duration_since(last_heard) > cfg.peer_timeout {
                        return CloseReason::PeerTimeout;
                    }
                    if now.duration_since(last_refresh) >= cfg.ticket_ttl / 3 {
                        last_refresh = now;
                        self.refresh_ticket(player).await;
                    }
                    let ping = now.duration_since(last_ping) >= cfg.ping_interval;
                    if ping {
                        last_ping = now;
                    }
                    match timeout(cfg.write_timeout, self.write_batch(&mut batch, ping)).await {
                        Err(_) => return CloseReason::TooSlow,
                        Ok(Err(_)) => return CloseReason::ClientClosed,
                        Ok(Ok(())) => {}
                    }
                }
            }
        }
    }

    /// Handles one inbound message of an admitted player.
    async fn inbound(
        &mut self,
        player: PlayerId,
        m: Message,
        inputs: &mut TokenBucket,
        chats: &mut TokenBucket,
    ) -> Flow {
        let data = match m {
            Message::Binary(data) => data,
            Message::Text(_) => return Flow::Close(CloseReason::TextFrame),
            Message::Close(_) => return Flow::Close(CloseReason::ClientClosed),
            Message::Ping(p) => {
                return match self.send_now(ws_frame::pong(&p)).await {
                    Ok(()) => Flow::Continue,
                    Err(_) => Flow::Close(CloseReason::ClientClosed),
                };
            }
            Message::Pong(_) | Message::Frame(_) => return Flow::Continue,
        };
        let now = std::time::Instant::now();
        let command = match client::decode(&data) {
            Err(e) => return Flow::Close(CloseReason::from(&e)),
            Ok(ClientMsg::Hello(_)) => return Flow::Close(CloseReason::Malformed),
            Ok(ClientMsg::Input { dir, .. }) => {
                if !inputs.try_take(now) {
                    return Flow::Close(CloseReason::InputFlood);
                }
                Command::Input { player, dir }
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
                let pong = ws_frame::binary(&msg::encode_pong(client_time_ms, now_ms()));
                return match self.send_now(pong).await {
                    Ok(()) => Flow::Continue,
                    Err(_) => Flow::Close(CloseReason::ClientClosed),
                };
            }
        };
        match self.ctx.commands.send(command).await {
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Close(CloseReason::Shutdown),
        }
    }

    /// Keeps the session and ticket alive in Redis while the player plays.
    async fn refresh_ticket(&self, player: PlayerId) {
        if let (Some(store), Some(ticket)) = (&self.ctx.store, self.ticket) {
            if let Err(e) = store.refresh(player, ticket).await {
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
        let _ = timeout(CLOSE_WRITE_TIMEOUT, self.send_now(frame)).await;
        CloseReason::Moved
    }

    /// Writes the whole batch (and a ping when due) with one vectored write.
    async fn write_batch(&mut self, batch: &mut Batch, ping: bool) -> std::io::Result<()> {
        self.out.clear();
        self.out.extend(batch.drain());
        let frames = self.out.len() as u64;
        if ping {
            self.out.push(ws_frame::ping());
        }
        let bytes: usize = self.out.iter().map(Bytes::len).sum();
        let writes = if self.ctx.config.unbatched_writes {
            for frame in &self.out {
                self.writer.write_frames(std::slice::from_ref(frame)).await?;
            }
            self.out.len() as u64
        } else {
            self.writer.write_frames(&self.out).await?;
            1
        };
        self.out.clear();
        let m = &self.ctx.metrics;
        m.frames_sent.inc_by(frames);
        m.bytes_sent.inc_by(bytes as u64);
        m.writes.inc_by(writes);
        Ok(())
    }

    /// Writes one frame outside the tick batch, at once.
    async fn send_now(&mut self, frame: Bytes) -> std::io::Result<()> {
        let len = frame.len() as u64;
        self.writer.write_frames(&[frame]).await?;
        let m = &self.ctx.metrics;
        m.frames_sent.inc();
        m.bytes_sent.inc_by(len);
        m.writes.inc();
        Ok(())
    }

    /// Tells the peer why (Error message for protocol faults), sends the close
    /// frame and half-closes, bounded by [`CLOSE_WRITE_TIMEOUT`].
    async fn close(&mut self, reason: CloseReason) {
        let code = reason.code();
        let mut frames = Vec::with_capacity(2);
        if reason.tells_peer() {
            frames.push(ws_frame::binary(&msg::encode_error(code, reason.message())));
        }
        frames.push(ws_frame::close(code.0, reason.message()));
        let writer = &mut self.writer;
        let _ = timeout(CLOSE_WRITE_TIMEOUT, async move {
            if writer.write_frames(&frames).await.is_ok() {
                writer.shutdown().await;
            }
        })
        .await;
    }
}

/// Maps a websocket read error to a close reason: size limits and protocol
/// faults are the peer's; anything else means the connection is gone.
fn classify(e: &tungstenite::Error) -> CloseReason {
    match e {
        tungstenite::Error::Capacity(_) => CloseReason::TooBig,
        tungstenite::Error::Protocol(_) | tungstenite::Error::Utf8(_) => CloseReason::Malformed,
        _ => CloseReason::ClientClosed,
    }
}
