//! A WebTransport test player (the `wtransport` crate's client): opens a
//! session to a shard started with `--webtransport-listen`, trusting the
//! certificate by the hash the shard offers at `/webtransport` (as a
//! browser's `serverCertificateHashes` does), then speaks the real
//! protocol: the websocket's messages on one bidirectional stream, each
//! with a 4-byte little-endian length prefix, and view frames received as
//! datagrams, applied to what the player holds
//! ([`mino_protocol::held::Held`]). Every read is bounded by [`WAIT`].

use crate::frame::{Frame, Welcome};
use crate::shard::Shard;
use crate::WAIT;
use mino_protocol::client::{self, Capabilities};
use mino_protocol::held::Held;
use mino_protocol::server::ServerMsg;
use mino_protocol::view::ViewFrame;
use wtransport::error::ConnectionError;
use wtransport::tls::Sha256Digest;
use wtransport::{ClientConfig, Connection, Endpoint, RecvStream, SendStream};

/// Bytes of the length prefix of a stream message.
const PREFIX_BYTES: usize = 4;

/// A WebTransport test player.
pub struct TransportPlayer {
    /// The session.
    pub conn: Connection,
    send: SendStream,
    recv: RecvStream,
    /// Bytes read off the stream, not yet a whole message.
    buf: Vec<u8>,
    /// What the Welcome said, once welcomed.
    pub welcome: Option<Welcome>,
    /// What datagrams told the player (from its Welcome on).
    held: Option<Held>,
    /// The sequence number of the last Input sent.
    seq: u32,
    /// The last datagram received, as it came.
    pub last_datagram: bytes::Bytes,
    /// When the session opened: the clock of the held cells' expiry.
    opened: std::time::Instant,
    /// What the player has received so far.
    pub received: Received,
    /// Kept alive as long as the session.
    _endpoint: Endpoint<wtransport::endpoint::endpoint_side::Client>,
}

/// What a session's client has received: to hold the shard's counts
/// (`mino_webtransport_*`) against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// Bytes read off the stream, length prefixes included.
    pub stream_bytes: u64,
    /// Whole messages read off the stream.
    pub stream_messages: u64,
    /// Datagrams received (read, or dropped unread by
    /// [`TransportPlayer::drop_arrived_datagrams`]).
    pub datagrams: u64,
    /// Their payloads' bytes (after WebTransport's header).
    pub datagram_bytes: u64,
}

/// The hex SHA-256 hashes a shard offers at `/webtransport`.
///
/// Panics: the shard does not answer it with JSON hashes.
pub async fn offered_hashes(shard: &Shard) -> Vec<Sha256Digest> {
    let offer = shard.get("/webtransport").await;
    assert_eq!(offer.status, 200, "/webtransport answers");
    let json: serde_json::Value = serde_json::from_slice(&offer.body).expect("/webtransport is JSON");
    let hashes = json["certificateHashes"].as_array().expect("certificateHashes").iter();
    hashes
        .map(|h| {
            assert_eq!(h["algorithm"], "sha-256");
            let hex = h["value"].as_str().expect("a hex value");
            let bytes: Vec<u8> =
                (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex")).collect();
            Sha256Digest::new(bytes.try_into().expect("32 bytes"))
        })
        .collect()
}

impl TransportPlayer {
    /// Opens a session and its stream to `shard` (no Hello yet).
    ///
    /// Panics: the shard has no WebTransport address, or no session within
    /// [`WAIT`].
    pub async fn connect(shard: &Shard) -> TransportPlayer {
        let hashes = offered_hashes(shard).await;
        TransportPlayer::connect_trusting(shard, hashes).await
    }

    /// Opens a session and its stream to `shard`, trusting the certificates
    /// of `hashes` (SHA-256 of the DER) instead of those the shard offers.
    ///
    /// Panics: as [`TransportPlayer::connect`].
    pub async fn connect_trusting(shard: &Shard, hashes: Vec<Sha256Digest>) -> TransportPlayer {
        TransportPlayer::connect_with(shard, hashes, None).await
    }

    /// Opens a session and its stream to `shard`, telling it the largest
    /// datagram frame this client takes is `max_datagram_frame_bytes`
    /// (QUIC's `max_datagram_frame_size`; quinn's receive buffer size): a
    /// peer that may set the shard's datagram limit below WebTransport's
    /// own header.
    ///
    /// Panics: as [`TransportPlayer::connect`].
    pub async fn connect_advertising(shard: &Shard, max_datagram_frame_bytes: usize) -> TransportPlayer {
        let hashes = offered_hashes(shard).await;
        TransportPlayer::connect_with(shard, hashes, Some(max_datagram_frame_bytes)).await
    }

    /// Opens a session and its stream to `shard` whose client lets the
    /// shard have at most `window` bytes it has not read on its streams
    /// (QUIC's stream and connection receive windows): a client that stops
    /// reading then holds the shard's writes back after that many bytes.
    ///
    /// Panics: as [`TransportPlayer::connect`].
    pub async fn connect_with_window(shard: &Shard, window: u32) -> TransportPlayer {
        let hashes = offered_hashes(shard).await;
        let mut transport = wtransport::quinn::TransportConfig::default();
        let window = wtransport::quinn::VarInt::from_u32(window);
        transport.stream_receive_window(window).receive_window(window);
        TransportPlayer::connect_tuned(shard, hashes, Some(transport)).await
    }

    /// Opens a session and its stream to `shard` through `addr` (a relay of
    /// the test's in front of the shard's UDP address), trusting the
    /// certificates the shard offers.
    ///
    /// Panics: as [`TransportPlayer::connect`].
    pub async fn connect_via(shard: &Shard, addr: std::net::SocketAddr) -> TransportPlayer {
        let hashes = offered_hashes(shard).await;
        TransportPlayer::connect_to(addr, hashes, None).await
    }

    /// Opens a session through `addr`, as [`TransportPlayer::connect_via`],
    /// with flow control windows of `window` bytes, as
    /// [`TransportPlayer::connect_with_window`].
    ///
    /// Panics: as [`TransportPlayer::connect`].
    pub async fn connect_via_with_window(shard: &Shard, addr: std::net::SocketAddr, window: u32) -> TransportPlayer {
        let hashes = offered_hashes(shard).await;
        let mut transport = wtransport::quinn::TransportConfig::default();
        let window = wtransport::quinn::VarInt::from_u32(window);
        transport.stream_receive_window(window).receive_window(window);
        TransportPlayer::connect_to(addr, hashes, Some(transport)).await
    }

    async fn connect_with(shard: &Shard, hashes: Vec<Sha256Digest>, datagram_frame: Option<usize>) -> TransportPlayer {
        let transport = datagram_frame.map(|bytes| {
            let mut transport = wtransport::quinn::TransportConfig::default();
            transport.datagram_receive_buffer_size(Some(bytes));
            transport
        });
        TransportPlayer::connect_tuned(shard, hashes, transport).await
    }

    async fn connect_tuned(
        shard: &Shard,
        hashes: Vec<Sha256Digest>,
        transport: Option<wtransport::quinn::TransportConfig>,
    ) -> TransportPlayer {
        let addr = shard.webtransport.expect("the shard was started with --webtransport-listen");
        TransportPlayer::connect_to(addr, hashes, transport).await
    }

    async fn connect_to(
        addr: std::net::SocketAddr,
        hashes: Vec<Sha256Digest>,
        transport: Option<wtransport::quinn::TransportConfig>,
    ) -> TransportPlayer {
        let mut config = ClientConfig::builder().with_bind_default().with_server_certificate_hashes(hashes).build();
        if let Some(transport) = transport {
            config.quic_config_mut().transport_config(std::sync::Arc::new(transport));
        }
        let endpoint = Endpoint::client(config).expect("a client endpoint");
        let url = format!("https://{addr}/");
        let conn =
            tokio::time::timeout(WAIT, endpoint.connect(url)).await.expect("a session in time").expect("a session");
        let opened = tokio::time::timeout(WAIT, async { conn.open_bi().await.expect("open").await })
            .await
            .expect("a stream in time")
            .expect("a stream");
        let (send, recv) = opened;
        TransportPlayer {
            conn,
            send,
            recv,
            buf: Vec::new(),
            welcome: None,
            held: None,
            seq: 0,
            last_datagram: bytes::Bytes::new(),
            opened: std::time::Instant::now(),
            received: Received::default(),
            _endpoint: endpoint,
        }
    }

    /// Connects and joins as `name` (full forms, as every session is
    /// served).
    ///
    /// Panics: not welcomed.
    pub async fn join(shard: &Shard, name: &str) -> TransportPlayer {
        let p = TransportPlayer::connect(shard).await;
        p.say_hello(name).await
    }

    /// Says Hello as `name` on an open session; the welcomed player.
    ///
    /// Panics: not welcomed.
    pub async fn say_hello(self, name: &str) -> TransportPlayer {
        match self.hello_with(name, None).await {
            Ok(p) => p,
            Err((frame, code)) => panic!("not welcomed: {frame:?} (close {code:?})"),
        }
    }

    /// Says Hello as `name` on an open session, with a resume ticket if
    /// given (asking for deltas, as the browser does: the server grants
    /// none on WebTransport); the welcomed player, or the message that came
    /// instead of a Welcome (a Busy, an Error) and the session's close code.
    ///
    /// Panics: nothing within [`WAIT`].
    pub async fn hello_with(
        mut self,
        name: &str,
        ticket: Option<&[u8]>,
    ) -> Result<TransportPlayer, (Frame, Option<u16>)> {
        let p = &mut self;
        let version = mino_protocol::PROTOCOL_VERSION;
        let hello = client::encode_hello_with(version, name, None, ticket, Capabilities::DELTAS);
        p.send(&hello).await;
        loop {
            match p.message().await {
                Frame::Welcome(w) => {
                    let held = Held::for_place(&w.bounds, w.speed, w.tick_hz, (w.cell_size, w.view_radius), usize::MAX);
                    p.held = Some(held.expiring(w.cell_expiry_ms));
                    p.welcome = Some(w);
                    return Ok(self);
                }
                other @ (Frame::Busy { .. } | Frame::Error(..)) => {
                    let (code, _) = p.closed().await;
                    return Err((other, code));
                }
                Frame::Closed(code) => return Err((Frame::Closed(code), code)),
                _ => {}
            }
        }
    }

    /// The resume ticket of its Welcome.
    ///
    /// Panics: not welcomed.
    pub fn ticket(&self) -> Vec<u8> {
        self.welcome.as_ref().expect("welcomed").ticket.clone()
    }

    /// The player's id.
    ///
    /// Panics: not welcomed.
    pub fn id(&self) -> u32 {
        self.welcome.as_ref().expect("welcomed").player_id
    }

    /// Sends one message on the stream, with its length prefix.
    ///
    /// Panics: the stream is closed.
    pub async fn send(&mut self, message: &[u8]) {
        let mut out = (message.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(message);
        self.send_raw(&out).await;
    }

    /// Writes bytes on the stream as they are (framing of the test's own).
    ///
    /// Panics: the stream is closed.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.send.write_all(bytes).await.expect("write on the stream");
    }

    /// Sends an Input walking towards `(x, y)`; returns its number.
    ///
    /// Panics: the stream is closed.
    pub async fn input(&mut self, x: f32, y: f32) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.send(&client::encode_input(self.seq, x, y)).await;
        self.seq
    }

    /// The next message on the stream, decoded ([`Frame::Closed`] with the
    /// session's close code once it ends).
    ///
    /// Panics: nothing within [`WAIT`].
    pub async fn message(&mut self) -> Frame {
        tokio::time::timeout(WAIT, self.read_message()).await.expect("a message in time")
    }

    async fn read_message(&mut self) -> Frame {
        let mut chunk = [0u8; 4096];
        loop {
            if self.buf.len() >= PREFIX_BYTES {
                let len = u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
                if self.buf.len() >= PREFIX_BYTES + len {
                    let message: Vec<u8> = self.buf.drain(..PREFIX_BYTES + len).skip(PREFIX_BYTES).collect();
                    self.received.stream_messages += 1;
                    return Frame::decode(&message);
                }
            }
            match self.recv.read(&mut chunk).await {
                Ok(Some(n)) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    self.received.stream_bytes += n as u64;
                }
                Ok(None) | Err(_) => return Frame::Closed(self.close_code().await),
            }
        }
    }

    /// The application close code of the session, once it is closed.
    async fn close_code(&self) -> Option<u16> {
        match tokio::time::timeout(WAIT, self.conn.closed()).await.expect("closed in time") {
            ConnectionError::ApplicationClosed(close) => u16::try_from(close.code().into_inner()).ok(),
            _ => None,
        }
    }

    /// Reads the stream until the session closes; returns the session's
    /// close code and the code of the Error message before it.
    pub async fn closed(&mut self) -> (Option<u16>, Option<u16>) {
        let mut error = None;
        loop {
            match self.message().await {
                Frame::Error(code, _) => error = Some(code),
                Frame::Closed(code) => return (code, error),
                _ => {}
            }
        }
    }

    /// Sends `count` WebTransport datagrams of this session, each `len`
    /// bytes of `0xEE` (no message: what a flood or a confused client
    /// sends), as fast as the connection takes them; returns how many went.
    ///
    /// Panics: the shard takes no datagrams this large.
    pub async fn flood_datagrams(&self, count: usize, len: usize) -> usize {
        // An HTTP/3 datagram: the session's quarter stream id (RFC 9297),
        // a QUIC varint, then the payload.
        let quarter = self.conn.session_id().into_u64() / 4;
        assert!(quarter < 64, "a one-byte quarter stream id");
        let mut datagram = vec![quarter as u8];
        datagram.resize(1 + len, 0xEE);
        self.send_quic_datagrams(count, datagram.into()).await
    }

    /// Sends `count` copies of `bytes` as QUIC datagrams as they are (not
    /// framed as this session's: `[0xEE, ..]` names no stream at all), as
    /// fast as the connection takes them; returns how many went (until the
    /// connection closed).
    ///
    /// Panics: the shard takes no datagrams this large.
    pub async fn send_quic_datagrams(&self, count: usize, bytes: bytes::Bytes) -> usize {
        let quic = self.conn.quic_connection();
        let most = quic.max_datagram_size().expect("the shard takes datagrams");
        assert!(bytes.len() <= most, "datagrams of {} bytes, over the shard's {most}", bytes.len());
        let mut sent = 0;
        for _ in 0..count {
            if quic.send_datagram_wait(bytes.clone()).await.is_err() {
                break;
            }
            sent += 1;
        }
        sent
    }

    /// The next datagram, a view frame applied to what the player holds:
    /// each cell it changed.
    ///
    /// Panics: none within [`WAIT`], the session closed, or the datagram is
    /// not a valid view frame that applies alone.
    pub async fn datagram(&mut self) -> Vec<Frame> {
        self.datagram_unless(|_| false).await.unwrap_or_default()
    }

    /// The next datagram, as [`TransportPlayer::datagram`], unless `lose`
    /// says it is lost on the way: then it is not applied, and `None`.
    ///
    /// Panics: as [`TransportPlayer::datagram`].
    pub async fn datagram_unless(&mut self, lose: impl Fn(&ViewFrame<'_>) -> bool) -> Option<Vec<Frame>> {
        let d = tokio::time::timeout(WAIT, self.conn.receive_datagram())
            .await
            .expect("a datagram in time")
            .expect("the session is open");
        self.last_datagram = d.payload();
        self.received.datagrams += 1;
        self.received.datagram_bytes += self.last_datagram.len() as u64;
        if let Ok(ServerMsg::View(frame)) = mino_protocol::server::decode(&self.last_datagram) {
            if lose(&frame) {
                return None;
            }
        }
        let now_ms = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        let held = self.held.as_mut().expect("welcomed");
        Some(Frame::read(&d.payload(), held, self.welcome.as_ref(), now_ms))
    }

    /// Drops the datagrams that have arrived and were not read, as a browser
    /// drops the view frames that come before its Welcome; how many.
    pub async fn drop_arrived_datagrams(&mut self) -> usize {
        let mut dropped = 0;
        // A zero timeout still polls once: what has arrived is taken.
        while let Ok(Ok(d)) = tokio::time::timeout(std::time::Duration::ZERO, self.conn.receive_datagram()).await {
            dropped += 1;
            self.received.datagrams += 1;
            self.received.datagram_bytes += d.payload().len() as u64;
        }
        dropped
    }

    /// What the player holds of datagrams.
    pub fn held(&self) -> Option<&Held> {
        self.held.as_ref()
    }
}
