//! One player's connection, on either transport ([`Link`]): connect, Hello,
//! wait for Welcome (or Busy, Error, close), then send inputs, chat and
//! pings and receive verified frames: on a websocket every message, on
//! WebTransport the stream's messages and the datagrams' view frames, all
//! through [`Client::recv`] alike. The building block of
//! [`crate::bot::Bot`], and usable on its own by tests.

use crate::connection::{self, ConnectError, WsStream};
use crate::event::{ServerEvent, Welcomed};
use crate::failure::FailureKind;
use crate::reconnect::JoinFailure;
use crate::target::Target;
use crate::transport::Transport;
use crate::webtransport::{Ended, WtLink};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use mino_protocol::client as wire_client;
use mino_protocol::server::{self, ServerMsg};
use mino_protocol::wire::CloseCode;
use std::net::Ipv4Addr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::{frame::coding::CloseCode as WsCode, CloseFrame};
use tokio_tungstenite::tungstenite::{self, error::ProtocolError, Message};

/// What view frames a bot asks for in its Hello.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Frames {
    /// Deltas against what the bot holds, as the browser asks; over
    /// WebTransport too (datagram deltas: the bot checks each delta's base
    /// and asks for a resync when it missed a change).
    #[default]
    Deltas,
    /// Every cell it is due as a full form (a client without the
    /// capability: the control of a delta measurement).
    Full,
}

impl Frames {
    /// The Hello's capabilities for this choice.
    pub fn capabilities(self) -> wire_client::Capabilities {
        match self {
            Frames::Deltas => wire_client::Capabilities(
                wire_client::Capabilities::DELTAS.0 | wire_client::Capabilities::DATAGRAM_DELTAS.0,
            ),
            Frames::Full => wire_client::Capabilities::NONE,
        }
    }
}

/// What to say in the Hello.
#[derive(Clone, Copy, Debug, Default)]
pub struct JoinRequest<'a> {
    /// Display name, 1 to 24 characters.
    pub name: &'a str,
    /// Resume ticket from an earlier Welcome or Move.
    pub ticket: Option<&'a [u8]>,
    /// Access token for a future identity service.
    pub access_token: Option<&'a str>,
    /// What view frames to ask for.
    pub frames: Frames,
    /// How to reach the shard (WebTransport needs the target's offer).
    pub transport: Transport,
}

/// Why a join did not end in a Welcome.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// TCP or websocket handshake failed.
    #[error("connect: {0}")]
    Connect(ConnectError),
    /// The server is busy; retry after `retry_after_ms`.
    #[error("busy ({reason}), retry after {retry_after_ms} ms")]
    Busy {
        /// The server's reason.
        reason: String,
        /// Retry after, ms.
        retry_after_ms: u32,
    },
    /// The server answered Error with a close code.
    #[error("refused with {code}: {message}")]
    Refused {
        /// Close code (see `CloseCode` in mino.fbs).
        code: u16,
        /// The server's message.
        message: String,
    },
    /// The server closed without Welcome, Busy or Error.
    #[error("closed before welcome (code {code:?})")]
    Closed {
        /// The close frame's code, if any.
        code: Option<u16>,
    },
    /// No answer to Hello in time.
    #[error("no welcome in time")]
    Timeout,
    /// The connection broke or the server sent something unexpected.
    #[error("{0}: {1}")]
    Broken(FailureKind, String),
}

// Its text says the cause (`{0}`): not its error source too, or a chain
// printed with `{:#}` says it twice (an outside trial).
impl From<ConnectError> for JoinError {
    fn from(e: ConnectError) -> JoinError {
        JoinError::Connect(e)
    }
}

impl JoinError {
    /// The failure class to count; None for Busy (counted apart).
    pub fn failure(&self) -> Option<FailureKind> {
        match self {
            JoinError::Connect(e) => Some(e.kind),
            JoinError::Busy { .. } => None,
            JoinError::Refused { code, .. } if (4014..=4017).contains(code) => Some(FailureKind::TicketRefused),
            JoinError::Refused { .. } | JoinError::Closed { .. } => Some(FailureKind::Refused),
            JoinError::Timeout => Some(FailureKind::JoinTimeout),
            JoinError::Broken(k, _) => Some(*k),
        }
    }

    /// The reconnect policy's view of this failure.
    pub fn policy_view(&self) -> JoinFailure {
        match self {
            JoinError::Busy { retry_after_ms, .. } => JoinFailure::Busy(*retry_after_ms),
            JoinError::Refused { code, .. } => JoinFailure::Refused(*code),
            JoinError::Closed { code: Some(c) } if *c == CloseCode::ServerBusy.0 => JoinFailure::Busy(1000),
            JoinError::Closed { code: Some(c) } => JoinFailure::Refused(*c),
            _ => JoinFailure::Other,
        }
    }
}

/// What [`Client::recv`] got.
#[derive(Debug)]
pub enum Incoming {
    /// A binary message (not yet verified; see [`server::decode`]).
    Frame(Bytes),
    /// The server closed with this code (None: no code).
    Closed(Option<u16>),
    /// The connection broke, or a text frame arrived (the protocol is binary only).
    Broken(FailureKind, String),
}

/// A connection on one of the transports.
pub enum Link {
    /// A websocket: every message on it.
    WebSocket(Box<WsStream>),
    /// A WebTransport session: messages on its stream, view frames as
    /// datagrams.
    WebTransport(Box<WtLink>),
}

/// Why a send failed.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The websocket is closed or broken.
    #[error(transparent)]
    WebSocket(#[from] tungstenite::Error),
    /// The WebTransport stream is closed.
    #[error("webtransport stream: {0}")]
    WebTransport(String),
}

/// A welcomed connection.
pub struct Client {
    link: Link,
    seq: u32,
}

/// Wall clock, ms since the Unix epoch.
pub fn wall_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0)
}

impl Client {
    /// Connects to `target` (from `source` if given), sends Hello and waits for
    /// the answer. `timeout` bounds the connect and, again, the wait for Welcome.
    ///
    /// Errors: [`JoinError`]; a Busy is an error too, carrying its retry-after.
    pub async fn join(
        target: &Target,
        source: Option<Ipv4Addr>,
        req: JoinRequest<'_>,
        timeout: Duration,
    ) -> Result<(Client, Welcomed), JoinError> {
        let link = match req.transport {
            Transport::WebSocket => Link::WebSocket(Box::new(connection::connect(target, source, timeout).await?)),
            Transport::WebTransport => {
                let live = target.webtransport.as_ref().ok_or_else(|| ConnectError {
                    kind: FailureKind::Handshake,
                    detail: format!("{}: no WebTransport offer read", target.url),
                })?;
                let offer = live.get();
                let link = match WtLink::connect(&offer, source, timeout).await {
                    Ok(link) => link,
                    // Its certificate or address may have changed since the
                    // offer was read: once more with the offer read again.
                    Err(e) => match live.reread(&target.url, crate::webtransport::offer(target)).await {
                        fresh if fresh != offer => WtLink::connect(&fresh, source, timeout).await?,
                        _ => return Err(e.into()),
                    },
                };
                Link::WebTransport(Box::new(link))
            }
        };
        let mut client = Client { link, seq: 0 };
        let version = mino_protocol::PROTOCOL_VERSION;
        let hello =
            wire_client::encode_hello_with(version, req.name, req.access_token, req.ticket, req.frames.capabilities());
        client.send(hello).await.map_err(|e| JoinError::Broken(FailureKind::ConnectionLost, e.to_string()))?;
        let deadline = Instant::now() + timeout;
        match tokio::time::timeout_at(deadline, client.first_answer()).await {
            Ok(Ok(w)) => Ok((client, w)),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(JoinError::Timeout),
        }
    }

    async fn first_answer(&mut self) -> Result<Welcomed, JoinError> {
        let mut refusal: Option<JoinError> = None;
        loop {
            let bytes = match self.recv().await {
                Incoming::Frame(b) => b,
                Incoming::Closed(code) => return Err(refusal.unwrap_or(JoinError::Closed { code })),
                Incoming::Broken(k, d) => return Err(refusal.unwrap_or(JoinError::Broken(k, d))),
            };
            match server::decode(&bytes) {
                Ok(ServerMsg::Welcome(w)) => return Ok(Welcomed::of(&w)),
                Ok(ServerMsg::Busy(b)) => {
                    let reason = b.reason().unwrap_or_default().to_owned();
                    refusal = Some(JoinError::Busy { reason, retry_after_ms: b.retry_after_ms() });
                }
                Ok(ServerMsg::Error(e)) => {
                    let message = e.message().unwrap_or_default().to_owned();
                    refusal = Some(JoinError::Refused { code: e.code().0, message });
                }
                // On WebTransport a view frame is a datagram, sent after the
                // Welcome but not ordered with the stream it is on: when the
                // Welcome's packet was lost and is resent, frames overtake it.
                // They are dropped, as the browser does (its `earlyViews`).
                Ok(ServerMsg::View(_)) if self.transport() == Transport::WebTransport => {}
                Ok(_) => return Err(JoinError::Broken(FailureKind::Protocol, "message before welcome".into())),
                Err(e) => return Err(JoinError::Broken(FailureKind::Protocol, e.to_string())),
            }
        }
    }

    /// What its transport says of its path now, `as_of` on the caller's
    /// clock (see [`crate::silence`]): a WebTransport session's round trip
    /// and packets received; nothing for a websocket.
    pub fn path(&self, as_of: std::time::Duration) -> crate::silence::Path {
        match &self.link {
            Link::WebSocket(_) => crate::silence::Path { as_of, ..crate::silence::Path::default() },
            Link::WebTransport(wt) => wt.path(as_of),
        }
    }

    /// The transport it is on.
    pub fn transport(&self) -> Transport {
        match self.link {
            Link::WebSocket(_) => Transport::WebSocket,
            Link::WebTransport(_) => Transport::WebTransport,
        }
    }

    /// When the message [`Client::recv`] returned last reached the socket
    /// (wall clock): the kernel's receive time of the read that brought its
    /// last bytes ([`crate::stamped`]). None over WebTransport and for reads
    /// without a stamp.
    pub fn received_at(&self) -> Option<SystemTime> {
        match &self.link {
            Link::WebSocket(ws) => connection::received_at(ws),
            Link::WebTransport(_) => None,
        }
    }

    /// Sends one binary message and flushes it.
    ///
    /// Errors: the connection is closed or broken.
    pub async fn send(&mut self, msg: Vec<u8>) -> Result<(), SendError> {
        match &mut self.link {
            Link::WebSocket(ws) => Ok(ws.send(Message::Binary(msg.into())).await?),
            Link::WebTransport(wt) => wt.send(&msg).await.map_err(SendError::WebTransport),
        }
    }

    /// Sends an Input walking towards `(x, y)` (`(0, 0)`: stand still) with the next sequence number.
    ///
    /// Errors: as [`Client::send`].
    pub async fn send_input(&mut self, x: f32, y: f32) -> Result<(), SendError> {
        self.seq = self.seq.wrapping_add(1);
        self.send(wire_client::encode_input(self.seq, x, y)).await
    }

    /// Sends a chat line. Errors: as [`Client::send`].
    pub async fn send_chat(&mut self, text: &str) -> Result<(), SendError> {
        self.send(wire_client::encode_chat(text)).await
    }

    /// Sends a Resync: the view whole again (deltas over datagrams, a change
    /// missed). Errors: as [`Client::send`].
    pub async fn send_resync(&mut self) -> Result<(), SendError> {
        self.send(wire_client::encode_resync()).await
    }

    /// Sends a Ping carrying the wall clock in ms. Errors: as [`Client::send`].
    pub async fn send_ping(&mut self) -> Result<(), SendError> {
        self.send(wire_client::encode_ping(wall_ms())).await
    }

    /// The next binary message (on WebTransport: of the stream, or a
    /// datagram), close or failure. Websocket pings are answered with pongs
    /// by the websocket layer while reading. Cancel-safe.
    pub async fn recv(&mut self) -> Incoming {
        let ws = match &mut self.link {
            Link::WebSocket(ws) => ws,
            Link::WebTransport(wt) => {
                return match wt.recv().await {
                    Ok(b) => Incoming::Frame(b),
                    Err(Ended::Closed(code)) => Incoming::Closed(code),
                    Err(Ended::Broken(kind, detail)) => Incoming::Broken(kind, detail),
                }
            }
        };
        loop {
            match ws.next().await {
                Some(Ok(Message::Binary(b))) => return Incoming::Frame(b),
                Some(Ok(Message::Close(frame))) => return Incoming::Closed(frame.map(|f| u16::from(f.code))),
                Some(Ok(Message::Text(_))) => return Incoming::Broken(FailureKind::Protocol, "text frame".into()),
                Some(Ok(_)) => continue,
                Some(Err(tungstenite::Error::Io(e))) => return Incoming::Broken(FailureKind::of_io(&e), e.to_string()),
                Some(Err(
                    tungstenite::Error::ConnectionClosed
                    | tungstenite::Error::AlreadyClosed
                    | tungstenite::Error::Protocol(ProtocolError::ResetWithoutClosingHandshake),
                ))
                | None => return Incoming::Broken(FailureKind::ConnectionLost, "closed without close frame".into()),
                Some(Err(e)) => return Incoming::Broken(FailureKind::Protocol, e.to_string()),
            }
        }
    }

    /// The next server message, verified and copied.
    ///
    /// Errors: the close or failure that ended the stream instead, or a frame
    /// that failed verification (as `Broken(Protocol, ..)`).
    pub async fn recv_event(&mut self) -> Result<ServerEvent, Incoming> {
        match self.recv().await {
            Incoming::Frame(b) => {
                ServerEvent::decode(&b).map_err(|e| Incoming::Broken(FailureKind::Protocol, e.to_string()))
            }
            other => Err(other),
        }
    }

    /// Closes with 1000 (Normal) and waits up to `linger` for the server's close.
    /// (WebTransport: finishes its stream, then closes the session with
    /// 1000.)
    pub async fn close(self, linger: Duration) {
        let mut ws = match self.link {
            Link::WebSocket(ws) => ws,
            Link::WebTransport(wt) => return wt.close(linger).await,
        };
        let frame = CloseFrame { code: WsCode::Normal, reason: "".into() };
        let _ = tokio::time::timeout(linger, async {
            if WsStream::close(&mut ws, Some(frame)).await.is_ok() {
                while let Some(Ok(_)) = ws.next().await {}
            }
        })
        .await;
    }

    /// Drops the connection without a close frame (like a crashed client).
    pub fn abort(self) {
        drop(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::wire::Bounds;
    use mino_protocol::{PlayerId, ShardId};
    use tokio::net::TcpListener;

    /// A one-socket fake shard: accepts, reads Hello, answers with `reply` and
    /// closes with `close_code` if given.
    async fn fake(reply: Bytes, close_code: Option<u16>) -> Target {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr");
        tokio::spawn(async move {
            let Ok((tcp, _)) = l.accept().await else {
                return;
            };
            let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
                return;
            };
            let Some(Ok(Message::Binary(hello))) = ws.next().await else {
                return;
            };
            assert!(matches!(wire_client::decode(&hello), Ok(wire_client::ClientMsg::Hello(_))));
            let _ = ws.send(Message::Binary(reply)).await;
            if let Some(code) = close_code {
                let _ = ws.close(Some(CloseFrame { code: WsCode::from(code), reason: "".into() })).await;
            }
            while let Some(Ok(_)) = ws.next().await {}
        });
        Target { url: format!("ws://{addr}/ws"), addr, tls: None, webtransport: None }
    }

    fn req() -> JoinRequest<'static> {
        JoinRequest { name: "bot", ..Default::default() }
    }

    #[tokio::test]
    async fn welcome_is_returned_with_its_ticket() {
        let welcome = server::encode_welcome(&server::WelcomeInfo {
            player_id: PlayerId(5),
            shard_id: ShardId(2),
            tick_hz: 20,
            bounds: Bounds::new(0.0, 0.0, 1000.0, 1000.0),
            speed: 120.0,
            resume_ticket: &[9; 16],
            server_time_ms: 1,
            name: "bot",
            position: (3.0, 4.0),
            resumed: false,
            aoi: None,
            capabilities: mino_protocol::client::Capabilities::DELTAS,
            cell_expiry_ms: 0,
        });
        let t = fake(welcome, None).await;
        let (_c, w) = Client::join(&t, None, req(), Duration::from_secs(2)).await.expect("welcome");
        assert_eq!((w.player_id, w.shard_id, w.ticket.len(), w.position), (PlayerId(5), ShardId(2), 16, (3.0, 4.0)));
    }

    #[tokio::test]
    async fn busy_then_close_is_busy_with_retry_after() {
        let t = fake(server::encode_busy("full", 250), Some(CloseCode::ServerBusy.0)).await;
        let err = Client::join(&t, None, req(), Duration::from_secs(2)).await.err().expect("busy");
        assert!(matches!(err, JoinError::Busy { retry_after_ms: 250, .. }), "{err}");
        assert_eq!(err.failure(), None);
        assert_eq!(err.policy_view(), JoinFailure::Busy(250));
    }

    #[tokio::test]
    async fn error_then_close_is_a_refusal_with_its_code() {
        let t = fake(server::encode_error(CloseCode::TicketUsed, "used"), Some(CloseCode::TicketUsed.0)).await;
        let err = Client::join(&t, None, req(), Duration::from_secs(2)).await.err().expect("refused");
        assert!(matches!(err, JoinError::Refused { code: 4015, .. }), "{err}");
        assert_eq!(err.failure(), Some(FailureKind::TicketRefused));
    }

    #[tokio::test]
    async fn garbage_answer_is_a_protocol_failure() {
        let t = fake(Bytes::from_static(&[1, 2, 3, 4]), None).await;
        let err = Client::join(&t, None, req(), Duration::from_secs(2)).await.err().expect("garbage");
        assert_eq!(err.failure(), Some(FailureKind::Protocol));
    }
}
