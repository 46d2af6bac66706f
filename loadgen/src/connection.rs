//! Opening a bot's websocket: a TCP socket bound to a chosen local source
//! address (loopback runs), Nagle off, the TLS handshake for `wss://`
//! targets, then the websocket handshake, with every failure classified
//! ([`FailureKind`]).

use crate::failure::FailureKind;
use crate::stamped::Stamped;
use crate::target::Target;
use mino_protocol::limits::MAX_SERVER_MESSAGE_BYTES;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, SystemTime};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A bot's websocket over plain TCP (`ws://`) or TLS over TCP (`wss://`),
/// its reads stamped with the kernel's receive time ([`Stamped`]).
pub type WsStream = WebSocketStream<MaybeTlsStream<Stamped>>;

/// When the bytes of the websocket's last read reached its socket (wall
/// clock); None when the read carried no stamp.
pub fn received_at(ws: &WsStream) -> Option<SystemTime> {
    match ws.get_ref() {
        MaybeTlsStream::Plain(s) => s.received(),
        MaybeTlsStream::Rustls(tls) => tls.get_ref().0.received(),
        _ => None,
    }
}

/// Most bytes a bot reads from its socket at once, and its initial read
/// buffer (which grows to fit larger frames). Small: tungstenite zeroes this
/// much before every read, including the last read of a frame, which finds
/// nothing. At 1,000 bots on 10 KB snapshots, 16 KiB cost the bots 20 % of the
/// machine's CPU and 4 KiB costs them 16 to 17 %.
pub const READ_BUFFER_BYTES: usize = 4 * 1024;

/// A failed connect.
#[derive(Debug, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct ConnectError {
    /// The class of failure.
    pub kind: FailureKind,
    /// What went wrong, for logs.
    pub detail: String,
}

impl ConnectError {
    fn io(stage: &str, e: std::io::Error) -> ConnectError {
        ConnectError { kind: FailureKind::of_io(&e), detail: format!("{stage}: {e}") }
    }
}

/// The websocket settings bots use: small buffers, messages up to the
/// protocol's server maximum, sends written at once.
pub fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(0)
        .max_message_size(Some(MAX_SERVER_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_SERVER_MESSAGE_BYTES))
}

/// Connects to `target`, from `source` when given, within `timeout` (TCP and
/// handshake together).
///
/// Errors: [`ConnectError`] with `EMFILE`/`EADDRNOTAVAIL` as local failures,
/// refusals, TLS failures and non-101 answers as the server's, and the
/// deadline as a timeout.
pub async fn connect(target: &Target, source: Option<Ipv4Addr>, timeout: Duration) -> Result<WsStream, ConnectError> {
    match tokio::time::timeout(timeout, connect_inner(target, source)).await {
        Ok(r) => r,
        Err(_) => {
            Err(ConnectError { kind: FailureKind::ConnectTimeout, detail: format!("no connection in {timeout:?}") })
        }
    }
}

async fn connect_inner(target: &Target, source: Option<Ipv4Addr>) -> Result<WsStream, ConnectError> {
    let tcp = tcp_connect(target.addr, source).await?;
    let tcp = Stamped::new(tcp).map_err(|e| ConnectError::io("SO_TIMESTAMPNS", e))?;
    let request = target
        .url
        .as_str()
        .into_client_request()
        .map_err(|e| ConnectError { kind: FailureKind::Handshake, detail: e.to_string() })?;
    let handshake = match &target.tls {
        None => {
            tokio_tungstenite::client_async_with_config(request, MaybeTlsStream::Plain(tcp), Some(ws_config())).await
        }
        Some(tls) => {
            tokio_tungstenite::client_async_tls_with_config(request, tcp, Some(ws_config()), Some(tls.connector()))
                .await
        }
    };
    match handshake {
        Ok((ws, _response)) => Ok(ws),
        Err(tungstenite::Error::Io(e)) if is_tls_failure(&e) => {
            Err(ConnectError { kind: FailureKind::Tls, detail: format!("TLS handshake: {e}") })
        }
        Err(tungstenite::Error::Tls(e)) => {
            Err(ConnectError { kind: FailureKind::Tls, detail: format!("TLS handshake: {e}") })
        }
        Err(tungstenite::Error::Io(e)) => Err(ConnectError::io("handshake", e)),
        Err(tungstenite::Error::Http(resp)) => {
            Err(ConnectError { kind: FailureKind::Handshake, detail: format!("upgrade answered {}", resp.status()) })
        }
        Err(e) => Err(ConnectError { kind: FailureKind::Handshake, detail: e.to_string() }),
    }
}

/// True when an I/O error carries a TLS failure (tokio-rustls reports
/// certificate and protocol errors as `InvalidData` wrapping a rustls error).
fn is_tls_failure(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>())
}

async fn tcp_connect(addr: SocketAddr, source: Option<Ipv4Addr>) -> Result<TcpStream, ConnectError> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4(),
        SocketAddr::V6(_) => TcpSocket::new_v6(),
    }
    .map_err(|e| ConnectError::io("socket", e))?;
    if let (Some(ip), true) = (source, addr.is_ipv4()) {
        // Let connect() pick the port per 4-tuple instead of reserving one at bind.
        use nix::sys::socket::{setsockopt, sockopt::IpBindAddressNoPort};
        let _ = setsockopt(&socket, IpBindAddressNoPort, &true);
        socket.bind(SocketAddr::new(IpAddr::V4(ip), 0)).map_err(|e| ConnectError::io("bind", e))?;
    }
    let stream = socket.connect(addr).await.map_err(|e| ConnectError::io("connect", e))?;
    stream.set_nodelay(true).map_err(|e| ConnectError::io("nodelay", e))?;
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn closed_port() -> SocketAddr {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        l.local_addr().expect("addr")
    }

    #[tokio::test]
    async fn refused_connect_is_the_servers_side() {
        let addr = closed_port().await;
        let t = Target { url: format!("ws://{addr}/ws"), addr, tls: None, webtransport: None };
        let err = connect(&t, Some(Ipv4Addr::new(127, 0, 0, 3)), Duration::from_secs(2)).await.expect_err("refused");
        assert_eq!(err.kind, FailureKind::ConnectRefused);
    }

    /// A one-shot server on loopback that reads a request and answers `reply`.
    async fn answering(reply: &'static [u8]) -> std::net::SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr");
        tokio::spawn(async move {
            if let Ok((mut s, _)) = l.accept().await {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(reply).await;
            }
        });
        addr
    }

    #[tokio::test]
    async fn non_websocket_answer_is_a_handshake_failure() {
        let addr = answering(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n").await;
        let t = Target { url: format!("ws://{addr}/ws"), addr, tls: None, webtransport: None };
        let err = connect(&t, None, Duration::from_secs(2)).await.expect_err("503");
        assert_eq!(err.kind, FailureKind::Handshake);
        assert!(err.detail.contains("503"), "{err}");
    }

    #[tokio::test]
    async fn wss_to_a_plain_server_is_a_tls_failure() {
        let addr = answering(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n").await;
        let tls = crate::tls::Tls::new(&crate::tls::TlsOptions { insecure: true, ..Default::default() }).expect("tls");
        let t = Target { url: format!("wss://{addr}/ws"), addr, tls: Some(tls), webtransport: None };
        let err = connect(&t, None, Duration::from_secs(2)).await.expect_err("not TLS");
        assert_eq!(err.kind, FailureKind::Tls, "{err}");
    }

    #[tokio::test]
    async fn silent_server_times_out() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr");
        let t = Target { url: format!("ws://{addr}/ws"), addr, tls: None, webtransport: None };
        let err = connect(&t, None, Duration::from_millis(200)).await.expect_err("timeout");
        assert_eq!(err.kind, FailureKind::ConnectTimeout);
        drop(l);
    }

    #[tokio::test]
    async fn binds_the_chosen_source_address() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr");
        let accept = tokio::spawn(async move { l.accept().await.map(|(_, peer)| peer) });
        let _stream = tcp_connect(addr, Some(Ipv4Addr::new(127, 0, 0, 7))).await.expect("connect");
        let peer = accept.await.expect("join").expect("accept");
        assert_eq!(peer.ip(), IpAddr::V4(Ipv4Addr::new(127, 0, 0, 7)));
    }
}
