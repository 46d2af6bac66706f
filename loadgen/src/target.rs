//! Where bots connect: `ws://` and `wss://` URLs resolved once at start (and,
//! for WebTransport bots, each shard's `/webtransport` offer), bots spread
//! over them round-robin, and the local source addresses
//! (127.0.0.1..127.0.0.N) that loopback connections are spread over so a run
//! is not capped by one address's ephemeral ports.

use crate::tls::{Tls, TlsError, TlsOptions};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use tokio_tungstenite::tungstenite::http::Uri;

/// A websocket endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The URL as given (`ws://host:port/path` or `wss://host:port/path`).
    pub url: String,
    /// The address it resolved to at start.
    pub addr: SocketAddr,
    /// TLS settings for a `wss://` URL; None for `ws://`.
    pub tls: Option<Tls>,
    /// Where the shard takes WebTransport sessions, read from its
    /// `/webtransport` at start and again when a session cannot be opened
    /// (see [`LiveOffer`]); None: not read (a run without WebTransport bots).
    pub webtransport: Option<Arc<LiveOffer>>,
}

/// A shard's [`WebTransportOffer`] as bots see it now: read at start, and
/// read again (at most once every [`LiveOffer::REREAD_EVERY`], whatever the
/// bots asking) when a session could not be opened with it: a shard that
/// restarted, or renewed its self-signed certificate, offers another hash,
/// and bots that kept the first could never come back (an outside trial).
#[derive(Debug)]
pub struct LiveOffer {
    current: std::sync::RwLock<WebTransportOffer>,
    /// When it was last read.
    read_at: tokio::sync::Mutex<std::time::Instant>,
}

impl LiveOffer {
    /// The least time between two reads of one shard's offer (bots that
    /// fail together wait for one read; short, so that a renewal just after
    /// a read is not missed for long).
    pub const REREAD_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

    /// The offer read at start.
    pub fn new(offer: WebTransportOffer) -> LiveOffer {
        LiveOffer {
            current: std::sync::RwLock::new(offer),
            read_at: tokio::sync::Mutex::new(std::time::Instant::now()),
        }
    }

    /// The offer now.
    pub fn get(&self) -> WebTransportOffer {
        self.current.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Reads the offer again with `read` (`crate::webtransport::offer` of
    /// the shard at `url`, awaited only then) unless it was read within
    /// [`LiveOffer::REREAD_EVERY`] (bots that fail together wait for one
    /// read); the offer then (the one before when the read failed).
    pub async fn reread<E: std::fmt::Display>(
        &self,
        url: &str,
        read: impl std::future::Future<Output = Result<WebTransportOffer, E>>,
    ) -> WebTransportOffer {
        let mut at = self.read_at.lock().await;
        if at.elapsed() >= Self::REREAD_EVERY {
            *at = std::time::Instant::now();
            match read.await {
                Ok(offer) => *self.current.write().unwrap_or_else(std::sync::PoisonError::into_inner) = offer,
                Err(e) => tracing::debug!(%url, error = %e, "the WebTransport offer, read again"),
            }
        }
        self.get()
    }
}

impl PartialEq for LiveOffer {
    fn eq(&self, other: &LiveOffer) -> bool {
        self.get() == other.get()
    }
}

impl Eq for LiveOffer {}

/// A shard's WebTransport address and the certificates to trust, as its
/// `/webtransport` answers (`{"addr", "port", "certificateHashes"}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebTransportOffer {
    /// The UDP address of its `--webtransport-listen` (an unspecified
    /// address in the offer is replaced by the websocket URL's).
    pub addr: SocketAddr,
    /// SHA-256 of the DER of each certificate to trust by hash (a browser's
    /// `serverCertificateHashes`: a shard's self-signed one); empty: the
    /// operator's certificate, verified against the system's roots.
    pub hashes: Vec<[u8; 32]>,
    /// The name the offer gave (`--webtransport-advertise HOST:PORT`),
    /// resolved to `addr` when read: the name a certificate is checked
    /// against. None: the offer gave an address.
    pub name: Option<String>,
}

/// Why a `--url` is unusable.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// Not a URL.
    #[error("invalid URL {0:?}")]
    Invalid(String),
    /// Neither `ws://` nor `wss://`.
    #[error("unsupported scheme in {0:?}: use ws:// or wss://")]
    Scheme(String),
    /// A port that is not 1 to 65535.
    #[error("bad port in {0:?}: use 1 to 65535")]
    Port(String),
    /// The host did not resolve.
    #[error("cannot resolve {0:?}: {1}")]
    Resolve(String, String),
    /// The TLS settings for a `wss://` URL could not be built.
    #[error(transparent)]
    Tls(#[from] TlsError),
}

impl Target {
    /// Parses `url` and resolves its host (IPv4 preferred); a `wss://` URL
    /// trusts the public web roots only (see [`Target::resolve_with`]).
    ///
    /// Errors: [`TargetError`].
    pub async fn resolve(url: &str) -> Result<Target, TargetError> {
        Target::resolve_with(url, None).await
    }

    /// Like [`Target::resolve`], with `tls` as the settings of a `wss://` URL
    /// (None: the public web roots). `tls` is ignored for `ws://`.
    ///
    /// Errors: [`TargetError`].
    pub async fn resolve_with(url: &str, tls: Option<&Tls>) -> Result<Target, TargetError> {
        let (host, port) = host_port(url)?;
        let tls = match (is_tls(url), tls) {
            (false, _) => None,
            (true, Some(t)) => Some(t.clone()),
            (true, None) => Some(Tls::new(&TlsOptions::default())?),
        };
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|e| TargetError::Resolve(url.to_owned(), e.to_string()))?
            .collect();
        let addr = addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or(addrs.first())
            .copied()
            .ok_or_else(|| TargetError::Resolve(url.to_owned(), "no address".into()))?;
        Ok(Target { url: url.to_owned(), addr, tls, webtransport: None })
    }

    /// True when the target is on IPv4 loopback, where 127.0.0.x source
    /// addresses can be used.
    pub fn is_loopback_v4(&self) -> bool {
        matches!(self.addr.ip(), IpAddr::V4(ip) if ip.is_loopback())
    }
}

/// Host and port of a `ws://` or `wss://` URL (port 80 or 443 when absent).
pub fn host_port(url: &str) -> Result<(String, u16), TargetError> {
    let uri: Uri = url.parse().map_err(|_| TargetError::Invalid(url.to_owned()))?;
    let default_port = match uri.scheme_str() {
        Some("ws") => 80,
        Some("wss") => 443,
        Some(_) => return Err(TargetError::Scheme(url.to_owned())),
        None => return Err(TargetError::Invalid(url.to_owned())),
    };
    let host = uri.host().ok_or_else(|| TargetError::Invalid(url.to_owned()))?;
    let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
    match given_port(uri.authority().map_or("", |a| a.as_str())) {
        Ok(port) => Ok((host, port.unwrap_or(default_port))),
        Err(()) => Err(TargetError::Port(url.to_owned())),
    }
}

/// The port an URL's authority (`[user@]host[:port]`) gives: None when it
/// gives none; Err when it is not 1 to 65535 (`http::Uri` reads a port past
/// 65535 as no port at all, and the default port would be dialled).
#[allow(clippy::result_unit_err)]
pub fn given_port(authority: &str) -> Result<Option<u16>, ()> {
    let authority = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    match authority.rsplit_once(':').map(|(_, p)| p).filter(|p| !p.contains(']')) {
        None | Some("") => Ok(None),
        Some(p) => match p.parse::<u16>() {
            Ok(port) if port > 0 => Ok(Some(port)),
            _ => Err(()),
        },
    }
}

/// True for a `wss://` URL (case-insensitive scheme).
pub fn is_tls(url: &str) -> bool {
    url.get(..6).is_some_and(|s| s.eq_ignore_ascii_case("wss://"))
}

/// The target of bot `bot` on attempt `attempt`: bots start round-robin over
/// the targets and each new attempt moves to the next one.
pub fn pick(targets: usize, bot: usize, attempt: usize) -> usize {
    (bot + attempt) % targets.max(1)
}

/// Local source addresses to bind before connecting.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceAddrs {
    addrs: Vec<Ipv4Addr>,
}

impl SourceAddrs {
    /// 127.0.0.1..=127.0.0.n when every target is IPv4 loopback and n > 0;
    /// otherwise none (the kernel picks the source).
    pub fn for_targets(targets: &[Target], n: u8) -> SourceAddrs {
        if n == 0 || targets.is_empty() || !targets.iter().all(Target::is_loopback_v4) {
            return SourceAddrs::default();
        }
        SourceAddrs { addrs: (1..=n).map(|i| Ipv4Addr::new(127, 0, 0, i)).collect() }
    }

    /// The source address of bot `bot` (round-robin), or None to let the kernel pick.
    pub fn pick(&self, bot: usize) -> Option<Ipv4Addr> {
        (!self.addrs.is_empty()).then(|| self.addrs[bot % self.addrs.len()])
    }

    /// How many addresses are used (0: kernel's choice, i.e. one).
    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    /// True when the kernel picks the source address.
    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(addr: &str) -> Target {
        Target { url: format!("ws://{addr}/ws"), addr: addr.parse().expect("addr"), tls: None, webtransport: None }
    }

    #[test]
    fn parses_ws_and_wss_urls_and_refuses_others() {
        assert_eq!(host_port("ws://127.0.0.1:8080/ws").ok(), Some(("127.0.0.1".into(), 8080)));
        assert_eq!(host_port("ws://example.test/ws").ok(), Some(("example.test".into(), 80)));
        assert_eq!(host_port("ws://[::1]:9/ws").ok(), Some(("::1".into(), 9)));
        assert_eq!(host_port("wss://h/ws").ok(), Some(("h".into(), 443)));
        assert_eq!(host_port("wss://h:8443/ws").ok(), Some(("h".into(), 8443)));
        assert!(matches!(host_port("http://h/ws"), Err(TargetError::Scheme(_))));
        assert!(host_port("not a url").is_err());
        for bad in ["ws://127.0.0.1:99999/ws", "ws://127.0.0.1:0/ws", "wss://[::1]:70000/ws", "ws://h:x1/ws"] {
            assert!(matches!(host_port(bad), Err(TargetError::Port(_))), "{bad}");
        }
        assert_eq!(host_port("ws://u:p@h:81/ws").ok(), Some(("h".into(), 81)));
        assert_eq!(host_port("ws://[::1]/ws").ok(), Some(("::1".into(), 80)));
        assert!(is_tls("wss://h/ws") && is_tls("WSS://h/ws") && !is_tls("ws://h/ws"));
    }

    #[tokio::test]
    async fn resolves_loopback() {
        let t = Target::resolve("ws://127.0.0.1:9/ws").await.expect("resolves");
        assert!(t.is_loopback_v4());
        assert_eq!(t.addr.port(), 9);
        assert!(t.tls.is_none());
    }

    #[tokio::test]
    async fn wss_targets_carry_the_given_tls_settings() {
        let tls = Tls::new(&TlsOptions { insecure: true, ..TlsOptions::default() }).expect("tls");
        let t = Target::resolve_with("wss://127.0.0.1:9/ws", Some(&tls)).await.expect("resolves");
        assert_eq!(t.tls.as_ref(), Some(&tls));
        let plain = Target::resolve_with("ws://127.0.0.1:9/ws", Some(&tls)).await.expect("resolves");
        assert!(plain.tls.is_none());
        assert!(Target::resolve("wss://127.0.0.1:9/ws").await.expect("web roots").tls.is_some());
    }

    #[test]
    fn bots_spread_round_robin_and_move_on_after_each_attempt() {
        let firsts: Vec<usize> = (0..6).map(|b| pick(3, b, 0)).collect();
        assert_eq!(firsts, [0, 1, 2, 0, 1, 2]);
        assert_eq!(pick(3, 2, 1), 0);
        assert_eq!(pick(1, 5, 7), 0);
        assert_eq!(pick(0, 5, 7), 0);
    }

    #[test]
    fn source_addresses_only_for_loopback_v4() {
        let lo = [target("127.0.0.1:1"), target("127.0.0.1:2")];
        let s = SourceAddrs::for_targets(&lo, 4);
        assert_eq!(s.len(), 4);
        assert_eq!(s.pick(0), Some(Ipv4Addr::new(127, 0, 0, 1)));
        assert_eq!(s.pick(5), Some(Ipv4Addr::new(127, 0, 0, 2)));
        assert!(SourceAddrs::for_targets(&lo, 0).pick(1).is_none());
        let mixed = [target("127.0.0.1:1"), target("[::1]:2")];
        assert!(SourceAddrs::for_targets(&mixed, 4).is_empty());
    }
}
