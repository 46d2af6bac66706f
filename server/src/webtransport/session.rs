//! One WebTransport session, in a task of its own for its whole life (the
//! quinn API's model; its cost a player is measured in
//! deploy/README.md, "WebTransport"):
//!
//! 1. the QUIC and HTTP/3 handshakes and the session's CONNECT, then the
//!    client's one bidirectional stream, within `--handshake-timeout-ms`;
//! 2. the Hello (length-prefixed on the stream, [`super::framing`]) and
//!    the same admission as a websocket's ([`SessionContext::admit`]),
//!    served full forms, or deltas when the Hello asks DATAGRAM_DELTAS
//!    with DELTAS (`shard::Form::of`);
//! 3. until it closes: the peer's messages go to the tick driver
//!    ([`FromSession`]), read there by the websocket's rules; what the hub
//!    hands the session ([`ToSession`]) is written on the stream; view
//!    frames the hub sends as datagrams itself, on the tick's thread
//!    ([`SessionDatagrams`], [`super::datagrams`]);
//! 4. the close: the Error message on the stream (for every close the peer
//!    can still hear, a drain's Moved included: browsers do not show the
//!    connection's close code to the page), the stream finished, the peer
//!    given a moment to read it and close (a browser drops what its page has
//!    not read when the connection closes), then the connection closed with the reason's close code as its application
//!    error code.

use super::datagrams;
use super::framing::{self, FramingError, MessageReader};
use crate::close::CloseReason;
use crate::hub::remote::{self, FromSession, ToSession};
use crate::hub::Handed;
use crate::metrics::{Metrics, SendPath, Transport, Unsent};
use crate::session::{Refused, SessionContext};
use crate::shard::LinkId;
use crate::websocket::frame as ws_frame;
use bytes::{Bytes, BytesMut};
use mino_protocol::client::{self, ClientMsg, Hello};
use mino_protocol::limits::MAX_CLIENT_MESSAGE_BYTES;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::{timeout, timeout_at};
use tokio_util::sync::PollSender;
use wtransport::endpoint::IncomingSession;
use wtransport::error::SendDatagramError;
use wtransport::{Connection, RecvStream, SendStream, VarInt};

/// Whether a view frame with a cell over the datagram limit was logged:
/// once a process (the first sign an operator needs; the metric counts
/// every one).
static TOO_BIG_LOGGED: AtomicBool = AtomicBool::new(false);

/// Longest the close's last messages may take to be acknowledged.
const CLOSE_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// Longest a close waits, once its last messages are acknowledged, for the
/// peer to close the session itself (a page closes it when it has read the
/// stream to its end). A browser drops what its page has not yet read of a
/// stream when the connection closes: closing at once lost the Error (and
/// so the kick's reason) now and then.
const CLOSE_PEER_TIMEOUT: Duration = Duration::from_secs(1);

/// Bytes WebTransport adds before a datagram's payload: the session's
/// quarter stream id (RFC 9297) as a QUIC variable-length integer (RFC 9000
/// section 16: 1, 2, 4 or 8 bytes).
fn datagram_header_bytes(conn: &Connection) -> usize {
    match conn.session_id().into_u64() / 4 {
        0..64 => 1,
        64..16_384 => 2,
        16_384..1_073_741_824 => 4,
        _ => 8,
    }
}

/// The lowest datagram limit of a connection a session's views are cut
/// to, bytes. QUIC's paths carry packets of 1,200 bytes (RFC 9000 section
/// 14), which leave a datagram over 1,100, so a lower limit is the peer's
/// own choice (its `max_datagram_frame_size`): such a session is served as
/// one that takes no datagrams (its views whole on its stream), instead of
/// having every view cut on the tick's thread into datagrams most cells
/// do not fit (counted as too big, and logged as wanting `--cell-size`).
/// The operator's `--webtransport-datagram-bytes` may still be lower.
const MIN_PEER_DATAGRAM_BYTES: usize = 1_000;

/// What every session shares.
#[derive(Clone)]
pub struct Shared {
    /// Admission, settings, metrics, the shutdown token.
    pub ctx: SessionContext,
    /// What sessions tell the tick driver.
    pub to_driver: mpsc::Sender<FromSession>,
    /// Each session's queue from the hub, items.
    pub queue: usize,
    /// Largest datagram sent, bytes (the connection's limit may be lower).
    pub datagram_bytes: usize,
}

/// Serves one incoming session until it closes. Never panics on what the
/// peer sends.
pub(crate) async fn serve(incoming: Box<IncomingSession>, shared: Shared, under_way: super::Handshaking) {
    let limit = shared.ctx.config.listen.handshake_timeout;
    // The handshake's and the admission's futures are boxed: a session's
    // task is sized for its largest state, for as long as it lives.
    let connected = Box::pin(async { (*incoming).await.ok()?.accept().await.ok() });
    // A shutdown drops a handshake under way (one forged first packet
    // would otherwise hold the shard's exit for the whole handshake window).
    let connected = tokio::select! {
        () = shared.ctx.cancel.cancelled() => Ok(None),
        connected = timeout(limit, connected) => connected,
    };
    drop(under_way);
    let Ok(Some(conn)) = connected else {
        tracing::debug!("webtransport handshake failed or timed out");
        return;
    };
    let metrics = shared.ctx.metrics.clone();
    metrics.webtransport_sessions.inc();
    Session { conn, shared, link: None, welcomed: Arc::default() }.run(limit).await;
    metrics.webtransport_sessions.dec();
}

/// One established session.
struct Session {
    conn: Connection,
    shared: Shared,
    /// The link it was admitted under.
    link: Option<LinkId>,
    /// Set once its first messages (the Welcome) are written; the hub's
    /// [`SessionDatagrams`] reads it.
    welcomed: Arc<AtomicBool>,
}

impl Session {
    /// The session's life once established: its stream and its Hello
    /// within `limit` together (the websocket's second window: the
    /// handshake had the first), then its admission and play.
    async fn run(mut self, limit: Duration) {
        let cancel = self.shared.ctx.cancel.clone();
        let deadline = tokio::time::Instant::now() + limit;
        // Shut down while waiting: the websocket's handshake says the same.
        let stream = tokio::select! {
            () = cancel.cancelled() => Err(CloseReason::Shutdown),
            opened = timeout_at(deadline, self.conn.accept_bi()) => match opened {
                Ok(Ok(stream)) => Ok(stream),
                Ok(Err(_)) => Err(self.gone()),
                Err(_) => Err(CloseReason::HelloTimeout),
            },
        };
        let (mut send, mut recv) = match stream {
            Ok(stream) => stream,
            Err(reason) => return self.refuse(None, reason.into()).await,
        };
        let mut reader = MessageReader::new(MAX_CLIENT_MESSAGE_BYTES);
        let hello = tokio::select! {
            () = cancel.cancelled() => Err(CloseReason::Shutdown),
            hello = timeout_at(deadline, read_hello(&mut reader, &mut recv)) => hello.unwrap_or(Err(CloseReason::HelloTimeout)),
        };
        let hello = match hello {
            Ok(hello) => hello,
            // Its stream ended before a Hello: gone, or silent past QUIC's idle timeout.
            Err(CloseReason::ClientClosed) => return self.refuse(Some(&mut send), self.gone().into()).await,
            Err(reason) => return self.refuse(Some(&mut send), reason.into()).await,
        };
        // The shard grants deltas to a session only with DatagramDeltas
        // too (a client that checks each delta's base): otherwise full
        // forms, every datagram standing alone (`Form::of`; ARCHITECTURE.md,
        // "WebTransport").
        let (to, from_hub) = mpsc::channel(self.shared.queue);
        let ctx = self.shared.ctx.clone();
        let datagrams = Box::new(SessionDatagrams {
            conn: self.conn.clone(),
            metrics: self.shared.ctx.metrics.clone(),
            datagram_bytes: self.shared.datagram_bytes,
            welcomed: self.welcomed.clone(),
        });
        match Box::pin(ctx.admit(hello, || Some(Handed::Session(remote::Handover { to, datagrams })))).await {
            Err(refused) => return self.refuse(Some(&mut send), refused).await,
            Ok(link) => self.link = link,
        }
        self.serve(send, recv, reader, from_hub).await;
    }

    /// Closes a session refused before the hub took it.
    async fn refuse(&self, send: Option<&mut SendStream>, refused: Refused) {
        let Refused { reason, first } = refused;
        self.shared.ctx.metrics.closed(Transport::WebTransport, reason);
        let first = first.map(|f| f.slice_ref(ws_frame::payload(&f)));
        close(&self.conn, send, reason, reason.message(), first, &self.shared.ctx.metrics).await;
        tracing::debug!(reason = reason.label(), "webtransport handshake refused");
    }

    /// The admitted session's life: the peer's messages to the driver, the
    /// hub's to the peer, until the hub says close.
    async fn serve(
        &self,
        mut send: SendStream,
        mut recv: RecvStream,
        mut reader: MessageReader,
        mut from_hub: mpsc::Receiver<ToSession>,
    ) {
        let write_timeout = self.shared.ctx.config.socket.write_timeout;
        let metrics = &self.shared.ctx.metrics;
        let mut reading = self.link.is_some();
        let mut out = BytesMut::new();
        // Set once a write failed or timed out: the driver was told and its
        // close is on the way. The messages queued before it are dropped,
        // and the close writes nothing: each write would wait out the write
        // timeout again for a peer that does not read (an outside trial's
        // session lingered 60 s, its slot held, after its player was gone).
        let mut stalled = false;
        // What waits for room in the queue every session shares with the
        // driver (a message of the peer's, then at most the session's end):
        // the stream is not read meanwhile (the peer's flow control holds
        // the rest back), but the hub's messages are still written. The
        // sender keeps its place in line while other branches run.
        let mut pending: VecDeque<FromSession> = VecDeque::new();
        let mut to_driver = PollSender::new(self.shared.to_driver.clone());
        // The connection closed: its end is told, and the hub's close waited for.
        let mut closed = false;
        loop {
            tokio::select! {
                item = from_hub.recv() => {
                    let Some(item) = item else {
                        let send = (!stalled).then_some(&mut send);
                        if self.link.is_none() {
                            // Never admitted, and no close came: the tick
                            // driver was gone before it took the Join (the
                            // shard stopping, or its core panicked on it).
                            let Refused { reason, .. } = self.shared.ctx.unanswered();
                            metrics.closed(Transport::WebTransport, reason);
                            close(&self.conn, send, reason, reason.message(), None, metrics).await;
                            return;
                        }
                        // The hub dropped the session without a close: the
                        // shard is stopping (its close did not fit the queue,
                        // or the tick driver is gone), else its queue was
                        // full: too slow.
                        let reason =
                            if self.shared.ctx.cancel.is_cancelled() { CloseReason::Shutdown } else { CloseReason::TooSlow };
                        close(&self.conn, send, reason, reason.message(), None, metrics).await;
                        return;
                    };
                    let messages = match item {
                        ToSession::Close { reason, text, first } => {
                            close(&self.conn, (!stalled).then_some(&mut send), reason, &text, first, metrics).await;
                            return;
                        }
                        _ if stalled => continue,
                        ToSession::Message(m) => vec![m],
                        ToSession::Messages(messages) => messages,
                    };
                    out.clear();
                    for m in &messages {
                        framing::put(&mut out, m);
                    }
                    let failed = match timeout(write_timeout, send.write_all(&out)).await {
                        // The first messages hold the Welcome: the hub may now
                        // send views (see `hub::remote::Datagrams::welcomed`).
                        Ok(Ok(())) => {
                            self.welcomed.store(true, Ordering::Release);
                            metrics.webtransport_stream_messages.inc_by(messages.len() as u64);
                            metrics.webtransport_sent(SendPath::Stream, out.len());
                            None
                        }
                        Ok(Err(_)) => Some(CloseReason::ClientClosed),
                        Err(_) => Some(CloseReason::TooSlow),
                    };
                    if let Some(reason) = failed {
                        stalled = true;
                        self.ends(&mut pending, reason);
                    }
                }
                room = poll_fn(|cx| to_driver.poll_reserve(cx)), if !pending.is_empty() => match room {
                    Ok(()) => {
                        if let Some(said) = pending.pop_front() {
                            let _ = to_driver.send_item(said);
                        }
                    }
                    // The tick driver is gone: read no more, and write what
                    // the hub queued (its close) until its queue ends.
                    Err(_) => {
                        reading = false;
                        pending.clear();
                    }
                },
                message = reader.next(&mut recv), if reading && pending.is_empty() => match message {
                    Ok(Some(message)) => {
                        let Some(link) = self.link else { continue };
                        pending.push_back(FromSession::Message(link, message));
                    }
                    Ok(None) | Err(FramingError::Truncated | FramingError::Failed) => {
                        reading = false;
                        self.ends(&mut pending, self.gone());
                    }
                    Err(FramingError::TooBig(_)) => {
                        reading = false;
                        self.ends(&mut pending, CloseReason::TooBig);
                    }
                },
                _ = self.conn.closed(), if !closed => {
                    if self.link.is_none() {
                        // Nothing to tell, nor to wait for.
                        return;
                    }
                    // Told as its end; the hub's close (or the end of its
                    // queue) ends the task, its writes failing meanwhile.
                    closed = true;
                    reading = false;
                    stalled = true;
                    self.ends(&mut pending, self.gone());
                }
            }
        }
    }

    /// Queues the session's end for `reason` after what waits for the
    /// driver (nothing for a session never admitted).
    fn ends(&self, pending: &mut VecDeque<FromSession>, reason: CloseReason) {
        if let Some(link) = self.link {
            pending.push_back(FromSession::Closed(link, reason));
        }
    }

    /// Why the peer is gone when its stream or connection ended:
    /// [`CloseReason::PeerTimeout`] when QUIC's idle timeout (the peer
    /// timeout) closed the connection, as a silent websocket is closed,
    /// else [`CloseReason::ClientClosed`] (it closed, or its stream ended).
    fn gone(&self) -> CloseReason {
        match self.conn.quic_connection().close_reason() {
            Some(wtransport::quinn::ConnectionError::TimedOut) => CloseReason::PeerTimeout,
            _ => CloseReason::ClientClosed,
        }
    }
}

/// A session's datagrams, sent by the hub on the tick's thread.
struct SessionDatagrams {
    conn: Connection,
    metrics: Metrics,
    /// Largest datagram sent, bytes (the connection's limit may be lower).
    datagram_bytes: usize,
    /// Set by the session's task once it has written its first messages.
    welcomed: Arc<AtomicBool>,
}

impl std::fmt::Debug for SessionDatagrams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionDatagrams").field("datagram_bytes", &self.datagram_bytes).finish_non_exhaustive()
    }
}

impl remote::Datagrams for SessionDatagrams {
    fn welcomed(&self) -> bool {
        self.welcomed.load(Ordering::Acquire)
    }

    /// Sends a view frame as datagrams within the connection's current
    /// limit (read at every send), counting what cannot go; the cells over
    /// the limit come back, for the stream.
    fn send_view(&self, view: &Bytes) -> Option<Bytes> {
        let metrics = &self.metrics;
        // quinn's limit less the session's header, computed here: a peer
        // may advertise a datagram frame size under the header (wtransport's
        // own max_datagram_size() then underflows).
        let limit = self.conn.quic_connection().max_datagram_size();
        let Some(limit) = limit
            .and_then(|l| l.checked_sub(datagram_header_bytes(&self.conn)))
            .filter(|l| *l >= MIN_PEER_DATAGRAM_BYTES)
        else {
            // A peer that takes no datagrams, or only small ones, gets its
            // views on the stream, as a cell too big for one does (it
            // played blind before).
            metrics.unsent(Unsent::NoDatagrams, 1);
            return Some(view.clone());
        };
        let cut = datagrams::cut(view, limit.min(self.datagram_bytes));
        if cut.too_big > 0 {
            metrics.unsent(Unsent::TooBig, cut.too_big as u64);
            if !TOO_BIG_LOGGED.swap(true, Ordering::Relaxed) {
                let limit = limit.min(self.datagram_bytes);
                tracing::warn!(
                    "a view frame's cell is over the datagram limit ({limit} bytes): WebTransport sessions get \
                     such cells on their stream, where a lost packet delays them as on a websocket (logged once; \
                     mino_webtransport_unsent_total{{reason=\"too_big\"}} counts them). Without area of interest \
                     (--cell-size) the place is one cell, which outgrows a datagram past about 150 players"
                );
            }
        }
        for datagram in cut.datagrams {
            // A full queue (the path is slower than the frames): quinn drops
            // the oldest waiting datagrams, stale by now, to make room for
            // this one; counted once a datagram that displaced any.
            let space = self.conn.quic_connection().datagram_send_buffer_space();
            if space < datagram.len() + datagram_header_bytes(&self.conn) {
                metrics.unsent(Unsent::Congested, 1);
            }
            match self.conn.send_datagram(&datagram) {
                Ok(()) => {
                    metrics.webtransport_datagrams.inc();
                    metrics.webtransport_sent(SendPath::Datagram, datagram.len());
                }
                Err(SendDatagramError::UnsupportedByPeer) => metrics.unsent(Unsent::NoDatagrams, 1),
                Err(SendDatagramError::NotConnected | SendDatagramError::TooLarge) => {
                    metrics.unsent(Unsent::Failed, 1);
                }
            }
        }
        cut.stream
    }
}

/// Reads the first message, which must be a Hello of this protocol version.
async fn read_hello(reader: &mut MessageReader, recv: &mut RecvStream) -> Result<Hello, CloseReason> {
    let message = match reader.next(recv).await {
        Ok(Some(message)) => message,
        Ok(None) | Err(FramingError::Truncated | FramingError::Failed) => return Err(CloseReason::ClientClosed),
        Err(FramingError::TooBig(_)) => return Err(CloseReason::TooBig),
    };
    match client::decode(&message) {
        Err(e) => Err(CloseReason::from(&e)),
        Ok(ClientMsg::Hello(h)) if h.protocol_version != mino_protocol::PROTOCOL_VERSION => {
            Err(CloseReason::ProtocolVersion)
        }
        Ok(ClientMsg::Hello(h)) => Ok(h),
        Ok(_) => Err(CloseReason::HelloExpected),
    }
}

/// Whether a session's close tells the peer why with an Error message on
/// the stream: every close the peer can still hear (not when it left or went
/// silent). More than a websocket's ([`CloseReason::tells_peer`]: its close
/// frame carries the code) because the connection's application close code
/// does not reach a browser's page (Chromium 156: `closed` rejects with
/// "Connection lost", no code): a drain's Moved, a Busy, a protocol error
/// reach the page's close policy only as this Error.
fn tells_peer(reason: CloseReason) -> bool {
    !matches!(reason, CloseReason::ClientClosed | CloseReason::PeerTimeout)
}

/// The Error message closing a session for `reason` with `text`, if it
/// tells the peer ([`tells_peer`]): the websocket's, and the same for the
/// closes whose code a websocket's close frame alone carries.
fn error_message(reason: CloseReason, text: &str) -> Option<Bytes> {
    remote::error_message(reason, text)
        .or_else(|| tells_peer(reason).then(|| mino_protocol::server::encode_error(reason.code(), text)))
}

/// Closes a session: `first` and the Error message of `reason` (if it tells
/// the peer, [`tells_peer`]) on the stream, the stream finished (acknowledged, within
/// [`CLOSE_WRITE_TIMEOUT`]), the peer given [`CLOSE_PEER_TIMEOUT`] to read
/// it and close, then the connection closed with the reason's close code and
/// `text`. What QUIC took whole is counted in `metrics`.
async fn close(
    conn: &Connection,
    send: Option<&mut SendStream>,
    reason: CloseReason,
    text: &str,
    first: Option<Bytes>,
    metrics: &Metrics,
) {
    let code = reason.code();
    if let Some(send) = send {
        let mut out = BytesMut::new();
        let mut messages = 0;
        for message in first.into_iter().chain(error_message(reason, text)) {
            framing::put(&mut out, &message);
            messages += 1;
        }
        let flushed = async {
            if !out.is_empty() {
                send.write_all(&out).await?;
                metrics.webtransport_stream_messages.inc_by(messages);
                metrics.webtransport_sent(SendPath::Stream, out.len());
            }
            send.finish().await
        };
        if let Ok(Ok(())) = timeout(CLOSE_WRITE_TIMEOUT, flushed).await {
            let _ = timeout(CLOSE_PEER_TIMEOUT, conn.closed()).await;
        }
    }
    let text = text.as_bytes();
    conn.close(VarInt::from_u32(u32::from(code.0)), &text[..text.len().min(123)]);
}
