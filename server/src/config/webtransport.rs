//! WebTransport (HTTP/3 over QUIC, UDP): off unless `--webtransport-listen`
//! is given; the certificate is the operator's or made at start.

use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The WebTransport listener's flags.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "WebTransport")]
pub struct WebTransportArgs {
    /// Serve WebTransport sessions on this UDP address (IP:PORT; port 0
    /// picks a free one), beside the websocket: the same messages on one
    /// reliable stream, view frames as datagrams. Off when not given.
    /// Printed on stdout as "mino-server webtransport on https://ADDR".
    #[arg(long, env = "MINO_WEBTRANSPORT_LISTEN")]
    pub webtransport_listen: Option<SocketAddr>,

    /// The address players reach this shard's WebTransport by, HOST:PORT
    /// (the port always; HOST a name, an IPv4 or a [bracketed] IPv6
    /// address: play.example.com:4433, 10.0.0.1:4433, [2001:db8::1]:4433), offered at
    /// /webtransport instead of the listen address: for a shard behind NAT
    /// or a port forward, on another machine than the nginx that serves the
    /// page, or with the operator's certificate (its name, which the
    /// browser checks). Without it the page is offered the listen address
    /// (an unspecified one, 0.0.0.0 or [::], means the page's own host).
    #[arg(long, env = "MINO_WEBTRANSPORT_ADVERTISE", requires = "webtransport_listen", value_parser = parse_advertised)]
    pub webtransport_advertise: Option<Advertised>,

    /// The certificate chain (PEM) WebTransport presents, the operator's
    /// (the same as nginx's, in files the shard's user can read; read once,
    /// at start). Without it (and --webtransport-key) a
    /// self-signed ECDSA P-256 certificate valid 13 days (from an hour
    /// before, for a browser whose clock is behind) is made at start;
    /// its SHA-256 hash is logged and served at /webtransport for the
    /// page's serverCertificateHashes.
    #[arg(long, env = "MINO_WEBTRANSPORT_CERT", requires = "webtransport_listen", requires = "webtransport_key")]
    pub webtransport_cert: Option<PathBuf>,

    /// The private key (PEM, PKCS#8) of --webtransport-cert.
    #[arg(long, env = "MINO_WEBTRANSPORT_KEY", requires = "webtransport_listen", requires = "webtransport_cert")]
    pub webtransport_key: Option<PathBuf>,

    /// Largest datagram sent, bytes: each view frame is cut to the lower of
    /// this and the connection's current limit (a little over 1,200 bytes
    /// on most paths). 64 to 65,535.
    #[arg(long, env = "MINO_WEBTRANSPORT_DATAGRAM_BYTES", requires = "webtransport_listen", default_value_t = 65_535, value_parser = clap::value_parser!(u16).range(64..))]
    pub webtransport_datagram_bytes: u16,

    /// Most bytes of datagrams waiting to be sent on one session, bytes:
    /// when the path is slower than the frames (a congestion window
    /// closed by loss, a slow link), a new frame's datagrams push out the
    /// oldest waiting ones, which are stale by then, instead of queueing
    /// behind them; counted as `mino_webtransport_unsent_total{reason=
    /// "congested"}`. It must hold a tick's frame of a session, or the
    /// frame's last datagrams push out its first before quinn sends any: at
    /// least twice --view-budget-bytes (refused otherwise); the default,
    /// 64 KiB, is 8 ticks at the default view budget and a whole shard of
    /// about 8,000 players' full forms (8 bytes a player). quinn's own
    /// default is 1 MB, a minute of stale frames on a slow path. 16,384 to
    /// 1,048,576.
    #[arg(long, env = "MINO_WEBTRANSPORT_SEND_QUEUE_BYTES", requires = "webtransport_listen", default_value_t = 65_536, value_parser = clap::value_parser!(u32).range(16_384..=1_048_576))]
    pub webtransport_send_queue_bytes: u32,

    /// The congestion controller of each session (QUIC's, per connection):
    /// `cubic` (quinn's default) or `bbr` (quinn's BBR, which it calls
    /// experimental), either with its window floored at
    /// --webtransport-window-floor-bytes. Behind a link losing 2 % of
    /// packets each way with a 40 ms round trip, 200 walkers' longest
    /// freeze p99 was 154 ms with cubic and 153 ms with bbr
    /// (benches/RESULTS.md, section 16).
    #[arg(long, env = "MINO_WEBTRANSPORT_CONGESTION", requires = "webtransport_listen", value_enum, default_value_t = Congestion::Cubic)]
    pub webtransport_congestion: Congestion,

    /// The least congestion window of a session, bytes (0: none, the
    /// controller's own minimum of two packets). A session's frames are
    /// bounded by the tick, so its flow never fills a window and CUBIC
    /// never regrows one that loss cut: on a path with random loss the
    /// window falls to two packets for good and each frame after a loss
    /// waits for acknowledgements (`webtransport/congestion.rs`; behind 2 %
    /// loss each way the longest freeze p99 was 178 ms without the
    /// floor, 154 ms with it). The default, 16 KiB, is two ticks at
    /// the default view budget: a session sending more than this a round
    /// trip is still held to its path by the controller. Below it a session
    /// does not back off on loss (so on a truly full path it keeps sending
    /// up to this a round trip); persistent congestion and ECN marks lift
    /// it for 2 s. 0 to 1,048,576.
    #[arg(long, env = "MINO_WEBTRANSPORT_WINDOW_FLOOR_BYTES", requires = "webtransport_listen", default_value_t = 16_384, value_parser = clap::value_parser!(u32).range(0..=1_048_576))]
    pub webtransport_window_floor_bytes: u32,

    /// The self-signed certificate (no --webtransport-cert) is replaced by
    /// a new one this often, seconds: new sessions get it and /webtransport
    /// offers its hash; open sessions keep theirs. 1 to 1,036,800 (12 days:
    /// it is valid 13); default 10 days.
    #[arg(long, env = "MINO_WEBTRANSPORT_CERT_RENEW_S", requires = "webtransport_listen", default_value_t = 864_000, value_parser = clap::value_parser!(u64).range(1..=1_036_800))]
    pub webtransport_cert_renew_s: u64,
}

/// A QUIC congestion controller (`--webtransport-congestion`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Congestion {
    /// CUBIC (RFC 9438), loss-based: quinn's default.
    #[default]
    Cubic,
    /// BBR (draft-cardwell-iccrg-bbr), model-based: quinn's experimental one.
    Bbr,
}

/// An address players reach WebTransport by (`--webtransport-advertise`):
/// a host (a DNS name, an IPv4 address, or an IPv6 address in brackets) and
/// a UDP port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advertised {
    /// The host as written (IPv6 with its brackets).
    pub host: String,
    /// The UDP port (1 to 65,535).
    pub port: u16,
}

impl std::fmt::Display for Advertised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// Parses `HOST:PORT` for [`Advertised`]: the host a DNS name or an IPv4
/// address (letters, digits, '.', '-') or a bracketed IPv6 address, the
/// port 1 to 65,535.
fn parse_advertised(s: &str) -> Result<Advertised, String> {
    let (host, port) = s
        .rsplit_once(':')
        .filter(|(_, port)| !port.ends_with(']'))
        .ok_or_else(|| format!("{s:?} is not HOST:PORT (an IPv6 address in brackets, then :PORT)"))?;
    let port: u16 = port.parse().map_err(|_| format!("{port:?} is not a port"))?;
    if port == 0 {
        return Err("port 0 cannot be reached".into());
    }
    let name = !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    let ipv6 = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .is_some_and(|h| h.parse::<std::net::Ipv6Addr>().is_ok());
    if !name && !ipv6 {
        return Err(format!("{host:?} is not a host name, an IPv4 address or a [bracketed] IPv6 address"));
    }
    Ok(Advertised { host: host.to_owned(), port })
}

/// Whose certificate WebTransport presents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Certificate {
    /// The operator's: a PEM chain and its key.
    Files {
        /// The chain.
        cert: PathBuf,
        /// The key.
        key: PathBuf,
    },
    /// One made at start, self-signed, valid under 14 days in all (what
    /// browsers take by hash), and renewed while the shard runs.
    SelfSigned,
}

/// WebTransport's settings (see [`WebTransportArgs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebTransportConfig {
    /// The UDP address.
    pub listen: SocketAddr,
    /// The address offered to pages instead of `listen`, if given.
    pub advertise: Option<Advertised>,
    /// The certificate.
    pub certificate: Certificate,
    /// Largest datagram sent, bytes (the connection's own limit may be
    /// lower).
    pub datagram_bytes: usize,
    /// The sessions' congestion controller.
    pub congestion: Congestion,
    /// The least congestion window, bytes (0: none).
    pub window_floor_bytes: u64,
    /// Most bytes of datagrams waiting on one session.
    pub send_queue_bytes: usize,
    /// How often a self-signed certificate is replaced.
    pub renew_every: std::time::Duration,
}

impl WebTransportArgs {
    /// The typed settings; `None` when WebTransport is off.
    pub fn config(&self) -> Option<WebTransportConfig> {
        let listen = self.webtransport_listen?;
        let certificate = match (&self.webtransport_cert, &self.webtransport_key) {
            (Some(cert), Some(key)) => Certificate::Files { cert: cert.clone(), key: key.clone() },
            _ => Certificate::SelfSigned,
        };
        Some(WebTransportConfig {
            listen,
            advertise: self.webtransport_advertise.clone(),
            certificate,
            datagram_bytes: usize::from(self.webtransport_datagram_bytes),
            congestion: self.webtransport_congestion,
            window_floor_bytes: u64::from(self.webtransport_window_floor_bytes),
            send_queue_bytes: self.webtransport_send_queue_bytes as usize,
            renew_every: std::time::Duration::from_secs(self.webtransport_cert_renew_s),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advertised_address_is_a_name_an_ipv4_or_a_bracketed_ipv6_with_a_port() {
        let ok = |s: &str| parse_advertised(s).map(|a| a.to_string());
        assert_eq!(ok("shard-3.play.example.com:4433"), Ok("shard-3.play.example.com:4433".into()));
        assert_eq!(ok("203.0.113.7:443"), Ok("203.0.113.7:443".into()));
        assert_eq!(ok("[2001:db8::7]:4433"), Ok("[2001:db8::7]:4433".into()));
        for bad in ["4433", ":4433", "host:0", "host:70000", "host:x", "2001:db8::7:4433", "[nope]:1", "a/b:1", "a b:1"]
        {
            assert!(parse_advertised(bad).is_err(), "{bad} taken");
        }
        // A bracketed IPv6 address without its port says so (it said `"1]" is not a port`).
        assert!(parse_advertised("[::1]").is_err_and(|e| e.contains("not HOST:PORT")), "[::1]");
    }
}
