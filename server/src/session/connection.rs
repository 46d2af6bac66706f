//! The task of one websocket: waits for the Hello, asks the tick loop to admit
//! the player, then loops over three things: inbound messages (checked against
//! limits, forwarded to the tick loop), the shard's per-tick frames (batched and
//! written with one vectored write), and shutdown. Every way out is a
//! [`CloseReason`].

use super::socket::{Reader, Writer};
use super::{ws_frame, Batch, CloseReason, TokenBucket};
use crate::config::Config;
use crate::metrics::{Metrics, ReasonLabel};
use crate::shard::TickFrame;
use crate::tick::{now_ms, Command, JoinReply};
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
}

/// Longest the server spends telling a peer why it closes, so a dead peer
/// cannot hold a closing task.
const CLOSE_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// Runs one session to its end. Never panics on anything the peer sends.
pub async fn serve(reader: Reader, writer: Writer, ctx: SessionContext) {
    ctx.metrics.connections.inc();
    let mut session = Session { ctx: ctx.clone(), reader, writer, player: None, out: Vec::with_capacity(8) };
    let reason = session.run().await;
    session.close(reason).await;
    if let Some(player) = session.player {
        // The tick loop is gone only at shutdown, when leaving no longer matters.
        let _ = ctx.commands.send(Command::Leave { player }).await;
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
        let (reply_tx, reply_rx) = oneshot::channel();
        let join = Command::Join { name: hello.name, reply: reply_tx };
        if self.ctx.commands.send(join).await.is_err() {
            return CloseReason::Shutdown;
        }
        match reply_rx.await {
            Err(_) => CloseReason::Shutdown,
            Ok(JoinReply::Refused { refusal, retry_after_ms }) => {
                let busy = ws_frame::binary(&msg::encode_busy(refusal.as_str(), retry_after_ms));
                let _ = timeout(CLOSE_WRITE_TIMEOUT, self.writer.write_frames(&[busy])).await;
                CloseReason::Busy
            }
            Ok(JoinReply::Admitted { admitted, frames }) => {
                self.player = Some(admitted.player);
                if self.send_now(ws_frame::binary(&admitted.welcome)).await.is_err() {
                    return CloseReason::ClientClosed;
                }
                self.play(admitted.player, frames).await
            }
        }
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
    async fn play(&mut self, player: PlayerId, mut frames: broadcast::Receiver<Arc<TickFrame>>) -> CloseReason {
        let cfg = self.ctx.config.clone();
        let now = Instant::now();
        let std_now = std::time::Instant::now();
        let mut inputs = TokenBucket::new(f64::from(cfg.input_rate), f64::from(cfg.input_rate) * 2.0, std_now);
        let mut chats = TokenBucket::new(cfg.chat_rate, 5.0, std_now);
        let (mut last_heard, mut last_ping) = (now, now);
        let mut batch = Batch::default();
        let mut want_roster = true;
        let cancel = self.ctx.cancel.clone();
        loop {
            tokio::select! {
                () = cancel.cancelled() => return CloseReason::Shutdown,
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
