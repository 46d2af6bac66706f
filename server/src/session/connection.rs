//! The task of one websocket: waits for the Hello, asks the tick loop to admit
//! the player, then loops over three things: inbound messages (checked against
//! limits, forwarded to the tick loop), the shard's per-tick frames (batched and
//! written with one flush), and shutdown. Every way out is a [`CloseReason`].

use super::{Batch, CloseReason, TokenBucket};
use crate::config::Config;
use crate::metrics::{Metrics, ReasonLabel};
use crate::shard::TickFrame;
use crate::tick::{now_ms, Command, JoinReply};
use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use mino_protocol::client::{self, ClientMsg, Hello};
use mino_protocol::server as msg;
use mino_protocol::PlayerId;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::time::{timeout, Instant};
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

type Sink = SplitSink<WebSocket, Message>;
type Stream = SplitStream<WebSocket>;

/// Longest the server spends telling a peer why it closes, so a dead peer
/// cannot hold a closing task.
const CLOSE_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// Runs one session to its end. Never panics on anything the peer sends.
pub async fn serve(ws: WebSocket, ctx: SessionContext) {
    ctx.metrics.connections.inc();
    let (sink, stream) = ws.split();
    let mut session = Session { ctx: ctx.clone(), sink, stream, player: None };
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
    sink: Sink,
    stream: Stream,
    player: Option<PlayerId>,
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
                let busy = msg::encode_busy(refusal.as_str(), retry_after_ms);
                let _ = timeout(CLOSE_WRITE_TIMEOUT, self.sink.send(Message::Binary(busy))).await;
                CloseReason::Busy
            }
            Ok(JoinReply::Admitted { admitted, frames }) => {
                self.player = Some(admitted.player);
                if self.send_now([admitted.welcome]).await.is_err() {
                    return CloseReason::ClientClosed;
                }
                self.play(admitted.player, frames).await
            }
        }
    }

    /// Reads until the first application message, which must be a valid Hello.
    async fn read_hello(&mut self) -> Result<Hello, CloseReason> {
        loop {
            let data = match self.stream.next().await {
                None => return Err(CloseReason::ClientClosed),
                Some(Err(e)) => return Err(classify(e)),
                Some(Ok(Message::Binary(data))) => data,
                Some(Ok(Message::Text(_))) => return Err(CloseReason::TextFrame),
                Some(Ok(Message::Close(_))) => return Err(CloseReason::ClientClosed),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
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
        let mut inputs =
            TokenBucket::new(f64::from(cfg.input_rate), f64::from(cfg.input_rate) * 2.0, std::time::Instant::now());
        let mut chats = TokenBucket::new(cfg.chat_rate, 5.0, std::time::Instant::now());
        let (mut last_heard, mut last_ping) = (now, now);
        let mut batch = Batch::default();
        let mut want_roster = true;
        let cancel = self.ctx.cancel.clone();
        loop {
            tokio::select! {
                () = cancel.cancelled() => return CloseReason::Shutdown,
                inbound = self.stream.next() => {
                    last_heard = Instant::now();
                    let flow = match inbound {
                        None => Flow::Close(CloseReason::ClientClosed),
                        Some(Err(e)) => Flow::Close(classify(e)),
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
            Message::Ping(_) | Message::Pong(_) => return Flow::Continue,
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
                // Answered at once, with its own flush, so the measured ping is true.
                let pong = msg::encode_pong(client_time_ms, now_ms());
                return match self.send_now([pong]).await {
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

    /// Feeds the whole batch (and a ping when due) and flushes once: one write.
    async fn write_batch(&mut self, batch: &mut Batch, ping: bool) -> Result<(), axum::Error> {
        let m = &self.ctx.metrics;
        let (mut frames, mut bytes) = (0u64, 0u64);
        for frame in batch.drain() {
            frames += 1;
            bytes += frame.len() as u64;
            self.sink.feed(Message::Binary(frame)).await?;
        }
        if ping {
            self.sink.feed(Message::Ping(bytes::Bytes::new())).await?;
        }
        self.sink.flush().await?;
        m.frames_sent.inc_by(frames);
        m.bytes_sent.inc_by(bytes);
        m.writes.inc();
        Ok(())
    }

    /// Sends frames outside the tick batch, flushed at once.
    async fn send_now<const N: usize>(&mut self, frames: [bytes::Bytes; N]) -> Result<(), axum::Error> {
        let m = &self.ctx.metrics;
        for frame in frames {
            m.frames_sent.inc();
            m.bytes_sent.inc_by(frame.len() as u64);
            self.sink.feed(Message::Binary(frame)).await?;
        }
        self.sink.flush().await?;
        m.writes.inc();
        Ok(())
    }

    /// Tells the peer why (Error message for protocol faults) and sends the close
    /// frame, bounded by [`CLOSE_WRITE_TIMEOUT`].
    async fn close(&mut self, reason: CloseReason) {
        if reason == CloseReason::ClientClosed {
            let _ = timeout(CLOSE_WRITE_TIMEOUT, self.sink.close()).await;
            return;
        }
        let code = reason.code();
        let sink = &mut self.sink;
        let _ = timeout(CLOSE_WRITE_TIMEOUT, async move {
            if reason.tells_peer() {
                sink.feed(Message::Binary(msg::encode_error(code, reason.message()))).await?;
            }
            let frame = CloseFrame { code: code.0, reason: reason.message().into() };
            sink.send(Message::Close(Some(frame))).await?;
            sink.close().await
        })
        .await;
    }
}

/// Maps a websocket error to a close reason: size limits and protocol faults
/// are the peer's; anything else means the connection is gone.
fn classify(e: axum::Error) -> CloseReason {
    let inner = e.into_inner();
    match inner.downcast_ref::<tungstenite::Error>() {
        Some(tungstenite::Error::Capacity(_)) => CloseReason::TooBig,
        Some(tungstenite::Error::Protocol(_) | tungstenite::Error::Utf8(_)) => CloseReason::Malformed,
        _ => CloseReason::ClientClosed,
    }
}
