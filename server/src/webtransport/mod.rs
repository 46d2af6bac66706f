//! WebTransport (HTTP/3 over QUIC, on UDP) beside the websocket, with the
//! `wtransport` crate (quinn underneath), on when `--webtransport-listen`
//! is given.
//!
//! A session is a player like any other: its client opens one
//! bidirectional stream that carries exactly the websocket's binary
//! messages (the same FlatBuffers, each with a 4-byte length prefix:
//! [`framing`]) from the Hello to the Error before a close, and the
//! session is admitted through the same path (token, resume, sign-in,
//! admission) and read by the same rules in the hub. View frames go as
//! datagrams, each a whole view frame within the connection's current
//! datagram limit ([`datagrams`]); the frame's plaintext is built once per
//! view by the core as for websockets, only QUIC's encryption is per
//! connection. A session is served full forms of what changed (the datagram
//! form, `shard/views.rs`), so every datagram stands alone: a lost one costs
//! walking cells one tick, and a change repeated 3 times or refreshed within
//! 64 ticks. A session whose Hello asks `DatagramDeltas` with `Deltas` is
//! served deltas instead (`Form::DatagramDeltas`): its client applies one
//! only onto the state it starts from and asks for a resync when a lost
//! datagram left it without (ARCHITECTURE.md, "WebTransport").
//!
//! Each session runs in a task of its own ([`session`]), as quinn's API
//! has it, for its stream: the hub hands it the stream's messages over a
//! bounded queue (`crate::hub::remote`) and sends its view frames as
//! datagrams itself, on the tick's thread (quinn's `send_datagram` is a
//! queue and a wake of the connection's driver), so a session's task wakes
//! only when its stream has something to say. A session's first views wait
//! until its task has written the welcome to the stream, and a whole tick
//! after it was queued (at most 20 ticks): sent with it, they overtook it
//! (the welcome goes by the task and the stream) and clients, which drop the
//! view frames that come before their Welcome, missed a standing place's
//! cells until the view's refresh.
//!
//! The certificate is the operator's (`--webtransport-cert`,
//! `--webtransport-key`), or one made at start: self-signed ECDSA P-256,
//! valid from an hour before to [`SELF_SIGNED_DAYS`] days after (browsers
//! take such a certificate by its SHA-256 hash, `serverCertificateHashes`,
//! only when it is valid two weeks at most in all), its hash logged and offered at the players' listener's
//! `/webtransport` ([`Offer`]), and renewed while the shard runs
//! ([`certificate`]).

pub mod certificate;
pub mod congestion;
pub mod datagrams;
pub mod framing;
mod session;

pub use certificate::{LiveOffer, SELF_SIGNED_DAYS};

use crate::config::{Certificate, Congestion, WebTransportConfig};
use crate::hub::remote::FromSession;
use crate::session::SessionContext;
use crate::throttle::{self, LogThrottle};
use congestion::FlooredFactory;
use serde::Serialize;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use wtransport::endpoint::endpoint_side::Server;
use wtransport::{Endpoint, Identity, ServerConfig};

/// QUIC keep-alive: a silent session is pinged this often, so a NAT keeps
/// its mapping and a gone peer is found within the idle timeout.
const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// Most bytes of a session's datagrams held unread, bytes. Clients send
/// none (everything they say goes on the stream), and the shard reads
/// none: what a client sends anyway is dropped, oldest first, beyond this,
/// instead of quinn's default 1.25 MB a session that a flood would fill.
/// It is also the largest datagram a client is told it may send.
pub const RECEIVE_QUEUE_BYTES: usize = 2_048;

/// Most bytes a session's client may have sent on one stream and the
/// shard not read yet (QUIC's stream flow control window), bytes. A client
/// sends only small messages (4 KiB at most: a Hello) on its one stream,
/// which the shard reads as they come; quinn's default, 1.25 MB a stream,
/// let a client fill streams the shard never reads (extra ones it opened)
/// and hold about 250 MB of the shard's memory a session (an outside trial).
pub const STREAM_RECEIVE_WINDOW_BYTES: u32 = 16 * 1024;

/// Most bytes a session's client may have sent on all its streams and the
/// shard not read yet, bytes (quinn's default is unlimited): the most a
/// session can make the shard hold however many streams it opens.
pub const RECEIVE_WINDOW_BYTES: u32 = 64 * 1024;

/// Most bytes the shard holds for a session that its client has not
/// acknowledged yet, bytes (QUIC's send window; quinn's default is 8 times
/// its stream window, 10 MB): a session's stream takes events, rosters,
/// names and the views that do not go as datagrams, a few KB a tick, so
/// this is over a second of them. A client that stops acknowledging (its
/// network gone one way, or on purpose) then holds this much at most: the
/// session's writes wait, and `--write-timeout-ms` closes it as too slow,
/// as a websocket whose socket buffer is full (it held up to 10 MB and was
/// not found too slow before them: an outside review).
pub const SEND_WINDOW_BYTES: u64 = 256 * 1024;

/// Most bidirectional streams a session's client may have open at once:
/// HTTP/3's CONNECT request and the session's one stream, and room for a
/// browser's extra ones (more than 2 are never read: the bytes they may
/// hold are bounded by [`RECEIVE_WINDOW_BYTES`]).
pub const MAX_BIDI_STREAMS: u32 = 8;

/// Most unidirectional streams a session's client may have open at once:
/// HTTP/3's control and QPACK streams, and room for reserved (grease) ones.
pub const MAX_UNI_STREAMS: u32 = 16;

/// Why WebTransport could not start.
#[derive(Debug, thiserror::Error)]
pub enum WebTransportError {
    /// The operator's certificate or key could not be loaded.
    #[error("certificate: {0}")]
    Certificate(String),
    /// The self-signed certificate could not be made.
    #[error("self-signed certificate: {0}")]
    SelfSigned(String),
    /// The idle timeout is out of QUIC's range.
    #[error("idle timeout: {0}")]
    IdleTimeout(String),
    /// The UDP address could not be bound.
    #[error("bind {addr}: {error}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        error: std::io::Error,
    },
}

/// What a page needs to open a session, served at `/webtransport` as JSON:
/// `{"addr": "HOST:PORT", "port": PORT, "certificateHashes": [{"algorithm":
/// "sha-256", "value": HEX}]}` (no hashes with the operator's certificate,
/// which browsers verify as usual). The address is `--webtransport-advertise`
/// when given, else the bound UDP address, which may be unspecified
/// (`0.0.0.0`): the page then uses its own host with the port.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Offer {
    /// Where players reach it: the advertised address, or the bound one.
    pub addr: String,
    /// Its port.
    pub port: u16,
    /// The certificate's hashes, for `serverCertificateHashes`.
    #[serde(rename = "certificateHashes")]
    pub certificate_hashes: Vec<CertificateHash>,
}

/// One `serverCertificateHashes` entry.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CertificateHash {
    /// Always "sha-256".
    pub algorithm: &'static str,
    /// The certificate's SHA-256, 64 lowercase hex digits.
    pub value: String,
}

/// A bound WebTransport endpoint, not yet accepting.
pub struct Bound {
    endpoint: Endpoint<Server>,
    /// The bound UDP address.
    local: SocketAddr,
    offer: LiveOffer,
    datagram_bytes: usize,
    /// Set for a self-signed certificate.
    renew: Option<Renewal>,
}

impl Bound {
    /// Where it listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// What a page needs to open a session, as served now.
    pub fn offer(&self) -> &LiveOffer {
        &self.offer
    }
}

/// Loads or makes the certificate and binds the UDP address; sessions idle
/// for `idle` (the websocket's peer timeout) are closed.
///
/// Errors: [`WebTransportError`].
pub async fn bind(config: &WebTransportConfig, idle: Duration) -> Result<Bound, WebTransportError> {
    let made = certificate::make(config).await?;
    let renew = (config.certificate == Certificate::SelfSigned).then_some(config.renew_every);
    let server = server_config(config, made.identity, idle)?;
    let bind_error = |error| WebTransportError::Bind { addr: config.listen, error };
    let endpoint = Endpoint::server(server).map_err(bind_error)?;
    let addr = endpoint.local_addr().map_err(bind_error)?;
    match made.hashes.first() {
        Some(hash) => tracing::info!(
            %addr,
            sha256 = %hash.value,
            days = certificate::SELF_SIGNED_DAYS,
            renew_every_s = config.renew_every.as_secs(),
            "webtransport: self-signed certificate"
        ),
        None => tracing::info!(%addr, "webtransport: the operator's certificate"),
    }
    let offer = match &config.advertise {
        Some(advertised) => {
            Offer { addr: advertised.to_string(), port: advertised.port, certificate_hashes: made.hashes }
        }
        None => Offer { addr: addr.to_string(), port: addr.port(), certificate_hashes: made.hashes },
    };
    Ok(Bound {
        endpoint,
        local: addr,
        offer: LiveOffer::new(offer),
        datagram_bytes: config.datagram_bytes,
        renew: renew.map(|every| Renewal { every, config: config.clone(), idle }),
    })
}

/// The endpoint's settings with `identity`: the bound address, keep-alive,
/// the idle timeout, the congestion controller, the datagram queues and
/// what a client may make the shard hold of its streams.
///
/// Errors: [`WebTransportError::IdleTimeout`].
fn server_config(
    config: &WebTransportConfig,
    identity: Identity,
    idle: Duration,
) -> Result<ServerConfig, WebTransportError> {
    let mut transport = wtransport::config::QuicTransportConfig::default();
    let varint = wtransport::quinn::VarInt::from_u32;
    transport
        .stream_receive_window(varint(STREAM_RECEIVE_WINDOW_BYTES))
        .receive_window(varint(RECEIVE_WINDOW_BYTES))
        .max_concurrent_bidi_streams(varint(MAX_BIDI_STREAMS))
        .max_concurrent_uni_streams(varint(MAX_UNI_STREAMS))
        .send_window(SEND_WINDOW_BYTES);
    transport.datagram_send_buffer_size(config.send_queue_bytes);
    transport.datagram_receive_buffer_size(Some(RECEIVE_QUEUE_BYTES));
    let floor = config.window_floor_bytes;
    match config.congestion {
        Congestion::Cubic => transport.congestion_controller_factory(Arc::new(FlooredFactory {
            inner: Arc::new(wtransport::quinn::congestion::CubicConfig::default()),
            floor,
        })),
        Congestion::Bbr => transport.congestion_controller_factory(Arc::new(FlooredFactory {
            inner: Arc::new(wtransport::quinn::congestion::BbrConfig::default()),
            floor,
        })),
    };
    Ok(ServerConfig::builder()
        .with_bind_address(config.listen)
        .with_custom_transport(identity, transport)
        .keep_alive_interval(Some(KEEP_ALIVE))
        .max_idle_timeout(Some(idle))
        .map_err(|e| WebTransportError::IdleTimeout(e.to_string()))?
        .build())
}

/// How a self-signed certificate is renewed: every `every`, with the
/// endpoint's settings.
struct Renewal {
    every: Duration,
    config: WebTransportConfig,
    idle: Duration,
}

impl Renewal {
    /// Makes a new certificate, gives it to the endpoint for new sessions
    /// and offers its hash. A failure is logged; the old one stays.
    fn renew(&self, endpoint: &Endpoint<Server>, offer: &LiveOffer) {
        let made = match certificate::self_signed(&self.config) {
            Ok(m) => m,
            Err(e) => return tracing::error!(error = %e, "webtransport: certificate not renewed"),
        };
        let hashes = made.hashes;
        let reloaded = server_config(&self.config, made.identity, self.idle)
            .map_err(|e| e.to_string())
            .and_then(|c| endpoint.reload_config(c, false).map_err(|e| e.to_string()));
        if let Err(e) = reloaded {
            return tracing::error!(error = %e, "webtransport: certificate not renewed");
        }
        let sha256 = hashes.first().map(|h| h.value.clone()).unwrap_or_default();
        offer.set(certificate::offer(&offer.get(), hashes));
        tracing::info!(%sha256, days = certificate::SELF_SIGNED_DAYS, "webtransport: self-signed certificate renewed (open sessions keep theirs)");
    }
}

/// What the accept loop hands every session.
pub struct Serving {
    /// Admission, settings, metrics, the shutdown token.
    pub ctx: SessionContext,
    /// What sessions tell the tick driver.
    pub to_driver: mpsc::Sender<FromSession>,
    /// Each session's queue from the hub, items.
    pub queue: usize,
}

/// Accepts sessions until `cancel` fires, each served in a task on
/// `tracker`; a client's address is validated first (a Retry) once
/// [`RETRY_FROM_HANDSHAKES`] handshakes (or half the cap) are under way;
/// at most `--max-connections` sessions at once (more are refused at the
/// QUIC handshake, counted in `mino_connections_over_cap_total`). A
/// self-signed certificate is renewed here, every
/// `--webtransport-cert-renew-s`.
pub async fn accept_loop(bound: Bound, serving: Serving, tracker: TaskTracker, cancel: CancellationToken) {
    let Serving { ctx, to_driver, queue } = serving;
    ctx.metrics.expect_webtransport();
    let cap = ctx.config.listen.max_connections;
    let slots = Arc::new(Semaphore::new(cap));
    let metrics = ctx.metrics.clone();
    let mut over_cap = LogThrottle::new(throttle::WINDOW);
    let handshaking = Arc::new(AtomicUsize::new(0));
    let retry_from = RETRY_FROM_HANDSHAKES.min(cap / 2);
    let shared = session::Shared { ctx, to_driver, queue, datagram_bytes: bound.datagram_bytes };
    let mut renew_at = bound.renew.as_ref().map(|r| tokio::time::Instant::now() + r.every);
    loop {
        let incoming = tokio::select! {
            () = cancel.cancelled() => break,
            () = crate::clock::sleep_until_or_never(renew_at) => {
                if let Some(r) = &bound.renew {
                    r.renew(&bound.endpoint, &bound.offer);
                    renew_at = Some(tokio::time::Instant::now() + r.every);
                }
                continue;
            }
            () = crate::clock::sleep_until_or_never(over_cap.pending_until()) => {
                if let Some(refused) = over_cap.flush(crate::clock::now()) {
                    tracing::warn!(
                        cap,
                        refused,
                        "webtransport session cap reached (--max-connections {cap}): {refused} more session(s) \
                         refused since the last such line"
                    );
                }
                continue;
            }
            incoming = bound.endpoint.accept() => incoming,
        };
        // Under pressure, the client's address first (QUIC's Retry, RFC
        // 9000 section 8.1): a handshake packet's source may be forged, and
        // each took a session slot for the handshake's timeout (10 s), so 60
        // packets of 1.2 KB locked every player out (an outside trial). A
        // Retry costs the client a round trip, against the page's 1.5 s to
        // be up, so only once many handshakes are under way.
        if !incoming.remote_address_validated() && handshaking.load(Ordering::Relaxed) >= retry_from {
            incoming.retry();
            continue;
        }
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            metrics.connections_over_cap.inc();
            if let Some(refused) = over_cap.failed(crate::clock::now()) {
                tracing::warn!(
                    peer = %incoming.remote_address(),
                    cap,
                    refused,
                    "webtransport session cap reached (--max-connections {cap}): {refused} session(s) refused \
                     since the last such line (at most one a {:?})",
                    throttle::WINDOW
                );
            }
            incoming.refuse();
            continue;
        };
        let shared = shared.clone();
        // Boxed before the task takes it: the task is sized for everything
        // it holds, for as long as the session lives.
        let incoming = Box::new(incoming);
        let under_way = Handshaking::start(&handshaking);
        tracker.spawn(async move {
            session::serve(incoming, shared, under_way).await;
            drop(permit);
        });
    }
}

/// Handshakes under way from which a client whose address is not
/// validated is sent a Retry first (or half of `--max-connections`, if
/// fewer): forged handshake packets then hold at most this many session
/// slots, each for the handshake's timeout, and players pay the Retry's
/// round trip only while they do.
pub const RETRY_FROM_HANDSHAKES: usize = 64;

/// One handshake under way, counted while it lives (the session's task
/// drops it once established, refused or timed out).
pub(crate) struct Handshaking(Arc<AtomicUsize>);

impl Handshaking {
    fn start(count: &Arc<AtomicUsize>) -> Handshaking {
        count.fetch_add(1, Ordering::Relaxed);
        Handshaking(count.clone())
    }
}

impl Drop for Handshaking {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
