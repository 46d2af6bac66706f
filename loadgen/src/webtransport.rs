//! A bot's WebTransport session (the `wtransport` crate's client, quinn
//! underneath): the shard's offer read from its `/webtransport` ([`offer`]),
//! a session opened to it trusting the certificate by the offered SHA-256
//! hash as a browser's `serverCertificateHashes` does (no verification is
//! ever switched off), and then the websocket's messages on one
//! bidirectional stream, each after a 4-byte little-endian length, with
//! view frames arriving as datagrams ([`WtLink`]). Each bot has its own
//! endpoint (its own UDP socket and port, like a browser tab), bound to the
//! bot's source address on loopback runs.

use crate::connection::ConnectError;
use crate::failure::FailureKind;
use crate::scrape;
use crate::target::{Target, WebTransportOffer};
use bytes::{Buf, Bytes, BytesMut};
use mino_protocol::limits::MAX_SERVER_MESSAGE_BYTES;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;
use wtransport::endpoint::endpoint_side;
use wtransport::error::ConnectionError;
use wtransport::tls::Sha256Digest;
use wtransport::{ClientConfig, Connection, Endpoint, RecvStream, SendStream, VarInt};

/// Bytes of a stream message's length prefix.
pub const PREFIX_BYTES: usize = 4;

/// Bytes read off the stream at once.
const READ_CHUNK_BYTES: usize = 4 * 1024;

/// How long a bot waits for the session's close code once its stream ended:
/// the shard closes a session a second after the peer acknowledged its
/// stream's end, if the peer did not close it first (the server's
/// `CLOSE_PEER_TIMEOUT`, for browsers, which drop what the page has not
/// read when the session closes), so at one second, as before, every close
/// by the shard was taken for a lost connection (an outside review).
const CLOSE_CODE_WAIT: Duration = Duration::from_secs(3);

/// A bot that sends nothing (it stands still) sends a QUIC ping this often,
/// so its shard hears from it within the idle timeout.
const KEEP_ALIVE: Duration = Duration::from_secs(1);

/// The websocket's Normal close (1000), as the application error code a
/// bot closes its session with.
const NORMAL_CLOSE: u32 = 1000;

/// Why a shard's offer could not be read.
#[derive(Debug, thiserror::Error)]
pub enum OfferError {
    /// A `wss://` URL reaches a proxy; nginx does not proxy WebTransport.
    #[error("{0}: WebTransport bots need each shard's own ws:// URL (a proxy does not carry WebTransport)")]
    Proxy(String),
    /// The GET failed or was not answered 200 (or 204).
    #[error("the shard's /webtransport: {0}")]
    Get(scrape::ScrapeError),
    /// The shard offers no WebTransport (started without
    /// `--webtransport-listen`: 204, no offer).
    #[error("the shard's /webtransport: the shard offers no WebTransport (started without --webtransport-listen)")]
    NotOffered,
    /// The offer gives a name that does not resolve.
    #[error("{url}: the offered WebTransport address {name:?} does not resolve: {detail}")]
    Resolve {
        /// The URL read.
        url: String,
        /// The name offered.
        name: String,
        /// Why.
        detail: String,
    },
    /// The answer is not the offer's JSON.
    #[error("{url}: not a WebTransport offer: {detail}")]
    Answer {
        /// The URL read.
        url: String,
        /// What was wrong.
        detail: String,
    },
}

// Its text says the cause (`{0}`): not its error source too, or a chain
// printed with `{:#}` says it twice (an outside trial).
impl From<scrape::ScrapeError> for OfferError {
    fn from(e: scrape::ScrapeError) -> OfferError {
        OfferError::Get(e)
    }
}

/// The offer's JSON, as the shard writes it.
#[derive(serde::Deserialize)]
struct OfferJson {
    /// An address (IP:PORT, [IPv6]:PORT), or a name (HOST:PORT) for a shard
    /// advertised by its certificate's name.
    addr: String,
    #[serde(rename = "certificateHashes", default)]
    certificate_hashes: Vec<HashJson>,
}

#[derive(serde::Deserialize)]
struct HashJson {
    algorithm: String,
    value: String,
}

/// Reads the WebTransport offer of the shard behind `target`
/// (`ws://H:P/..` → `http://H:P/webtransport`); an unspecified address in
/// it is replaced by the URL's.
///
/// Errors: [`OfferError`].
pub async fn offer(target: &Target) -> Result<WebTransportOffer, OfferError> {
    if crate::target::is_tls(&target.url) {
        return Err(OfferError::Proxy(target.url.clone()));
    }
    let url = format!("http://{}/webtransport", target.addr);
    let text = scrape::get(&url).await?;
    if text.trim().is_empty() {
        return Err(OfferError::NotOffered);
    }
    let mut offer =
        parse_offer(&text, target.addr.ip()).map_err(|detail| OfferError::Answer { url: url.clone(), detail })?;
    if let Some(name) = &offer.name {
        // The name, resolved once here (IPv4 first, as the websocket URL's),
        // for the bots' sockets; the session still asks for the name.
        let unresolved = |detail: String| OfferError::Resolve { url: url.clone(), name: name.clone(), detail };
        let found: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), offer.addr.port()))
            .await
            .map_err(|e| unresolved(e.to_string()))?
            .collect();
        let first = found.iter().find(|a| a.is_ipv4()).or(found.first()).copied();
        offer.addr = first.ok_or_else(|| unresolved("no address".into()))?;
    }
    Ok(offer)
}

/// The offer in `text`, its unspecified address replaced by `host`; a name
/// is kept (and its address left unspecified) for [`offer`] to resolve.
fn parse_offer(text: &str, host: IpAddr) -> Result<WebTransportOffer, String> {
    let json: OfferJson = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut hashes = Vec::with_capacity(json.certificate_hashes.len());
    for h in &json.certificate_hashes {
        if !h.algorithm.eq_ignore_ascii_case("sha-256") {
            return Err(format!("hash algorithm {:?} (sha-256 expected)", h.algorithm));
        }
        hashes.push(hex32(&h.value).ok_or_else(|| format!("not 32 hex bytes: {:?}", h.value))?);
    }
    let (mut addr, name) = match json.addr.parse::<SocketAddr>() {
        Ok(addr) => (addr, None),
        Err(_) => {
            let (name, port) = json.addr.rsplit_once(':').ok_or_else(|| format!("addr {:?}: no port", json.addr))?;
            let port: u16 = port.parse().map_err(|_| format!("addr {:?}: bad port", json.addr))?;
            if name.is_empty() || name.contains(['/', '[', ']', ' ', ':', '@']) {
                return Err(format!("addr {:?}: not HOST:PORT", json.addr));
            }
            (SocketAddr::from(([0, 0, 0, 0], port)), Some(name.to_owned()))
        }
    };
    if addr.ip().is_unspecified() && name.is_none() {
        addr.set_ip(host);
    }
    Ok(WebTransportOffer { addr, hashes, name })
}

/// The offer's name resolves to the address it was resolved to when the
/// offer was read (one lookup a run, not a session; the bots' sockets are
/// bound for that address's family).
#[derive(Debug)]
struct Resolved(SocketAddr);

impl wtransport::config::DnsResolver for Resolved {
    fn resolve(&self, _host: &str) -> std::pin::Pin<Box<dyn wtransport::config::DnsLookupFuture>> {
        let addr = self.0;
        Box::pin(async move { Ok(Some(addr)) })
    }
}

/// 64 hex digits as 32 bytes.
fn hex32(text: &str) -> Option<[u8; 32]> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        out[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

/// How a session's reading ended.
#[derive(Debug)]
pub enum Ended {
    /// The shard closed the session with this application code (the
    /// websocket's close code), or with none.
    Closed(Option<u16>),
    /// The session broke (timed out, reset, a malformed stream).
    Broken(FailureKind, String),
}

/// One open session: its stream (both halves) and what was read of it.
pub struct WtLink {
    conn: Connection,
    send: SendStream,
    recv: RecvStream,
    /// Stream bytes read, not yet a whole message.
    buf: BytesMut,
    /// Kept as long as the session: its UDP socket and driver.
    _endpoint: Endpoint<endpoint_side::Client>,
}

impl WtLink {
    /// Opens a session to `offer` (from `source` when given and the shard
    /// is on IPv4) and its bidirectional stream, within `timeout`, which is
    /// also the session's QUIC idle timeout: a session that hears nothing
    /// from its shard this long is over. A shard that died without closing
    /// (killed, its machine gone) is noticed sooner, by the session's
    /// silence (`crate::silence`: a websocket's TCP is reset at once by the
    /// dead process's kernel, UDP has no such signal); the idle timeout is
    /// the bound behind it. A live shard is never this silent: it sends a
    /// view frame every tick a bot's cells change, and acknowledges the
    /// bot's keep-alive pings when they do not. (The idle timeout bounds the
    /// handshake too, so a shorter one would cut handshakes a loaded shard
    /// is still finishing.)
    ///
    /// Errors: [`ConnectError`]: the endpoint could not bind (a local
    /// failure), no session in time (a timeout), a refused handshake.
    pub async fn connect(
        offer: &WebTransportOffer,
        source: Option<Ipv4Addr>,
        timeout: Duration,
    ) -> Result<WtLink, ConnectError> {
        match tokio::time::timeout(timeout, WtLink::open(offer, source, timeout)).await {
            Ok(r) => r,
            Err(_) => Err(ConnectError {
                kind: FailureKind::ConnectTimeout,
                detail: format!("no WebTransport session in {timeout:?}"),
            }),
        }
    }

    async fn open(offer: &WebTransportOffer, source: Option<Ipv4Addr>, idle: Duration) -> Result<WtLink, ConnectError> {
        let bind = match (source, offer.addr) {
            (Some(ip), SocketAddr::V4(_)) => SocketAddr::new(IpAddr::V4(ip), 0),
            (_, SocketAddr::V4(_)) => SocketAddr::from(([0, 0, 0, 0], 0)),
            (_, SocketAddr::V6(_)) => SocketAddr::from(([0u16; 8], 0)),
        };
        let builder = ClientConfig::builder().with_bind_address(bind);
        let builder = if offer.hashes.is_empty() {
            builder.with_native_certs()
        } else {
            builder.with_server_certificate_hashes(offer.hashes.iter().map(|h| Sha256Digest::new(*h)))
        };
        let config = builder
            .dns_resolver(Resolved(offer.addr))
            .keep_alive_interval(Some(KEEP_ALIVE))
            .max_idle_timeout(Some(idle))
            .map_err(|e| ConnectError { kind: FailureKind::Io, detail: format!("idle timeout: {e}") })?
            .build();
        let endpoint = Endpoint::client(config).map_err(|e| ConnectError {
            kind: FailureKind::of_io(&e),
            detail: format!("WebTransport endpoint on {bind}: {e}"),
        })?;
        // A certificate refused (a hash the shard no longer offers, a name
        // it does not carry) is told apart from other handshake failures
        // by the words quinn's error gives it.
        let handshake = |e: &dyn std::fmt::Display| {
            let detail = e.to_string();
            let kind = if detail.contains("certificate") { FailureKind::Tls } else { FailureKind::Handshake };
            ConnectError { kind, detail }
        };
        // By the offer's name when it gave one (the certificate is checked
        // against it), reaching the address it was resolved to.
        let url = match &offer.name {
            Some(name) => format!("https://{name}:{}/", offer.addr.port()),
            None => format!("https://{}/", offer.addr),
        };
        let conn = endpoint.connect(url).await.map_err(|e| handshake(&e))?;
        let (send, recv) = conn.open_bi().await.map_err(|e| handshake(&e))?.await.map_err(|e| handshake(&e))?;
        Ok(WtLink { conn, send, recv, buf: BytesMut::with_capacity(READ_CHUNK_BYTES), _endpoint: endpoint })
    }

    /// The session's smoothed round trip and the UDP datagrams it has
    /// received (quinn's counts, read now: `as_of`): whether the shard's
    /// QUIC stack still answers, whatever its tick does.
    pub fn path(&self, as_of: Duration) -> crate::silence::Path {
        let received = self.conn.quic_connection().stats().udp_rx.datagrams;
        crate::silence::Path { rtt: Some(self.conn.rtt()), packets: Some(received), as_of }
    }

    /// Sends one message on the stream, after its length.
    ///
    /// Errors: the stream is closed (the text says why).
    pub async fn send(&mut self, message: &[u8]) -> Result<(), String> {
        let mut out = Vec::with_capacity(PREFIX_BYTES + message.len());
        out.extend_from_slice(&(message.len() as u32).to_le_bytes());
        out.extend_from_slice(message);
        self.send.write_all(&out).await.map_err(|e| e.to_string())
    }

    /// The next message of the stream or datagram (a view frame), as it
    /// came; the stream is read first when both are ready. Cancel-safe:
    /// what was read of a message stays buffered.
    ///
    /// Errors: how the session ended ([`Ended`]); a length over the
    /// protocol's largest server message is a protocol failure.
    pub async fn recv(&mut self) -> Result<Bytes, Ended> {
        loop {
            if let Some(message) = self.buffered()? {
                return Ok(message);
            }
            let mut chunk = [0u8; READ_CHUNK_BYTES];
            tokio::select! {
                biased;
                read = self.recv.read(&mut chunk) => match read {
                    Ok(Some(n)) => self.buf.extend_from_slice(&chunk[..n]),
                    Ok(None) | Err(_) => return Err(self.ended().await),
                },
                datagram = self.conn.receive_datagram() => match datagram {
                    Ok(d) => return Ok(d.payload()),
                    Err(e) => return Err(ended_by(e)),
                },
            }
        }
    }

    /// A whole message at the head of the buffer, if there is one.
    fn buffered(&mut self) -> Result<Option<Bytes>, Ended> {
        if self.buf.len() < PREFIX_BYTES {
            return Ok(None);
        }
        let len = u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if len > MAX_SERVER_MESSAGE_BYTES {
            return Err(Ended::Broken(FailureKind::Protocol, format!("a {len}-byte stream message")));
        }
        if self.buf.len() < PREFIX_BYTES + len {
            return Ok(None);
        }
        self.buf.advance(PREFIX_BYTES);
        Ok(Some(self.buf.split_to(len).freeze()))
    }

    /// The stream ended: how the session did (its close code, if it comes
    /// within [`CLOSE_CODE_WAIT`]).
    async fn ended(&self) -> Ended {
        match tokio::time::timeout(CLOSE_CODE_WAIT, self.conn.closed()).await {
            Ok(e) => ended_by(e),
            Err(_) => Ended::Broken(FailureKind::ConnectionLost, "the stream ended, the session stayed".into()),
        }
    }

    /// Closes the session with 1000 (Normal) and waits up to `linger` for
    /// what the shard sends until it is gone.
    pub async fn close(self, linger: Duration) {
        let _ = tokio::time::timeout(linger, async {
            let mut send = self.send;
            let _ = send.finish().await;
        })
        .await;
        self.conn.close(VarInt::from_u32(NORMAL_CLOSE), b"");
    }
}

/// What a session's error says of its end.
fn ended_by(e: ConnectionError) -> Ended {
    match e {
        ConnectionError::ApplicationClosed(close) => Ended::Closed(u16::try_from(close.code().into_inner()).ok()),
        ConnectionError::TimedOut => Ended::Broken(FailureKind::ConnectionLost, "session timed out".into()),
        other => Ended::Broken(FailureKind::ConnectionLost, other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";

    #[test]
    fn an_errors_cause_is_said_once_in_its_chain() {
        // Its text and its source both said it: "…: status 503: …: status 503".
        let scrape = scrape::ScrapeError::Timeout("http://127.0.0.1:9/webtransport".into());
        let chains = [
            format!("{:#}", anyhow::Error::from(OfferError::from(scrape))),
            format!(
                "{:#}",
                anyhow::Error::from(crate::client::JoinError::from(ConnectError {
                    kind: FailureKind::ConnectTimeout,
                    detail: "no connection in 2s".into()
                }))
            ),
        ];
        for (chain, once) in chains.iter().zip(["no answer within", "no connection in 2s"]) {
            assert_eq!(chain.matches(once).count(), 1, "{chain}");
        }
    }

    #[test]
    fn an_offer_gives_the_address_and_hashes() {
        let text = format!(
            r#"{{"addr":"0.0.0.0:4433","port":4433,"certificateHashes":[{{"algorithm":"sha-256","value":"{HASH}"}}]}}"#
        );
        let offer = parse_offer(&text, IpAddr::V4(Ipv4Addr::new(127, 0, 0, 9))).expect("offer");
        assert_eq!(offer.addr, "127.0.0.9:4433".parse().expect("addr"), "unspecified: the URL's host");
        assert_eq!(offer.hashes.len(), 1);
        assert_eq!((offer.hashes[0][0], offer.hashes[0][1], offer.hashes[0][31]), (0x00, 0x11, 0xff));
        let given = parse_offer(r#"{"addr":"10.0.0.2:5","port":5}"#, IpAddr::V4(Ipv4Addr::LOCALHOST)).expect("offer");
        assert_eq!((given.addr, given.hashes.len(), given.name), ("10.0.0.2:5".parse().expect("addr"), 0, None));
        let v6 = parse_offer(r#"{"addr":"[::1]:7","port":7}"#, IpAddr::V4(Ipv4Addr::LOCALHOST)).expect("offer");
        assert_eq!(v6.addr, "[::1]:7".parse().expect("addr"));
        // A name (--webtransport-advertise game.example.com:4433): kept, to
        // resolve and to check the certificate against.
        let named = parse_offer(r#"{"addr":"game.example.com:4433","port":4433}"#, IpAddr::V4(Ipv4Addr::LOCALHOST));
        let named = named.expect("offer");
        assert_eq!((named.name.as_deref(), named.addr.port()), (Some("game.example.com"), 4433));
        for bad in ["game.example.com", "game.example.com:x", ":5", "a b:5", "::1:5", "u@host:5"] {
            let text = format!(r#"{{"addr":"{bad}","port":5}}"#);
            assert!(parse_offer(&text, IpAddr::V4(Ipv4Addr::LOCALHOST)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bad_offer_says_why() {
        let host = IpAddr::V4(Ipv4Addr::LOCALHOST);
        assert!(parse_offer("not json", host).is_err());
        let md5 = r#"{"addr":"1.2.3.4:5","certificateHashes":[{"algorithm":"md5","value":"00"}]}"#;
        assert!(parse_offer(md5, host).expect_err("md5").contains("md5"));
        let short = r#"{"addr":"1.2.3.4:5","certificateHashes":[{"algorithm":"sha-256","value":"0011"}]}"#;
        assert!(parse_offer(short, host).expect_err("short").contains("32 hex bytes"));
    }

    #[tokio::test]
    async fn a_proxy_url_has_no_offer() {
        let t = Target {
            url: "wss://127.0.0.1:1/ws".into(),
            addr: "127.0.0.1:1".parse().expect("addr"),
            tls: None,
            webtransport: None,
        };
        assert!(matches!(offer(&t).await, Err(OfferError::Proxy(_))));
    }
}
