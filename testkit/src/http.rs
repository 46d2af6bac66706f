//! A small HTTP/1.1 client for the tests: one request per connection over
//! plain TCP (a shard's own endpoints), a Unix socket (a shard listening on
//! one), or TLS (nginx, checking its certificate against the test's own CA
//! file), the whole answer read.

use crate::WAIT;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::TlsConnector;

/// An HTTP answer.
#[derive(Clone, Debug, Default)]
pub struct Response {
    /// Status code (0 if the answer was not HTTP).
    pub status: u16,
    /// Header names (lower case) and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON.
    ///
    /// Panics: it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

/// GET `path` from `addr` over plain HTTP.
///
/// Panics: no connection or no answer within [`WAIT`].
pub async fn get(addr: SocketAddr, path: &str) -> Response {
    request(addr, "GET", path).await
}

/// `method path` (no body) to `addr` over plain HTTP.
///
/// Panics: no connection or no answer within [`WAIT`].
pub async fn request(addr: SocketAddr, method: &str, path: &str) -> Response {
    send(addr, method, path, &[], b"").await
}

/// `method path` to `addr` over plain HTTP with `headers` added and `body`
/// (with its Content-Length).
///
/// Panics: no connection or no answer within [`WAIT`].
pub async fn send(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let tcp = connect(addr).await;
    exchange(tcp, method, &addr.to_string(), path, headers, body).await
}

/// `method path` (no body) over the Unix socket at `socket`.
///
/// Panics: no connection or no answer within [`WAIT`].
pub async fn request_unix(socket: &Path, method: &str, path: &str) -> Response {
    let stream = tokio::time::timeout(WAIT, UnixStream::connect(socket))
        .await
        .unwrap_or_else(|_| panic!("connect {}: no connection within {WAIT:?}", socket.display()))
        .unwrap_or_else(|e| panic!("connect {}: {e}", socket.display()));
    exchange(stream, method, "localhost", path, &[], b"").await
}

/// GET `https://host:PORT/path` from `addr`, trusting only the certificates
/// in `ca_file`, with `headers` added. `host` is the TLS server name and the
/// Host header.
///
/// Panics: no connection, a TLS failure, or no answer within [`WAIT`].
pub async fn get_https(addr: SocketAddr, host: &str, path: &str, ca_file: &Path, headers: &[(&str, &str)]) -> Response {
    let tcp = connect(addr).await;
    let name = ServerName::try_from(host.to_owned()).unwrap_or_else(|e| panic!("server name {host}: {e}"));
    let tls = tokio::time::timeout(WAIT, TlsConnector::from(client_config(ca_file)).connect(name, tcp))
        .await
        .unwrap_or_else(|_| panic!("TLS handshake with {addr} timed out"))
        .unwrap_or_else(|e| panic!("TLS handshake with {addr}: {e}"));
    exchange(tls, "GET", &format!("{host}:{}", addr.port()), path, headers, b"").await
}

/// A TCP connection to `addr`.
///
/// Panics: none within [`WAIT`].
async fn connect(addr: SocketAddr) -> TcpStream {
    tokio::time::timeout(WAIT, TcpStream::connect(addr))
        .await
        .unwrap_or_else(|_| panic!("connect {addr}: no connection within {WAIT:?}"))
        .unwrap_or_else(|e| panic!("connect {addr}: {e}"))
}

/// rustls settings that trust only the certificates of `ca_file`.
pub fn client_config(ca_file: &Path) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca_file).unwrap_or_else(|e| panic!("{}: {e}", ca_file.display())) {
        roots.add(cert.expect("a PEM certificate")).expect("a usable certificate");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// Sends one request on `s` and reads the whole answer (the server closes).
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    method: &str,
    host: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    // A Host among `headers` replaces the connection's own.
    let host = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("host")).map_or(host, |(_, v)| *v);
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    if method != "GET" || !body.is_empty() {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (n, v) in headers.iter().filter(|(n, _)| !n.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let mut req = req.into_bytes();
    req.extend_from_slice(body);
    let mut raw = Vec::new();
    let io = async {
        s.write_all(&req).await?;
        // A peer that closes without close_notify still sent a whole answer.
        match s.read_to_end(&mut raw).await {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(0),
            other => other,
        }
    };
    tokio::time::timeout(WAIT, io)
        .await
        .unwrap_or_else(|_| panic!("{method} {path}: no answer within {WAIT:?}"))
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    parse(&raw)
}

/// Parses a whole HTTP/1.1 answer.
pub fn parse(raw: &[u8]) -> Response {
    let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Response::default();
    };
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|c| c.parse().ok()).unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut r = Response { status, headers, body: raw[split + 4..].to_vec() };
    if r.header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        r.body = dechunk(&r.body);
    }
    r
}

/// The payload of a chunked body (stops at the last chunk or at bad framing).
fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = b.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&b[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok());
        let Some(size) = size.filter(|s| *s > 0 && eol + 2 + s <= b.len()) else { break };
        out.extend_from_slice(&b[eol + 2..eol + 2 + size]);
        b = &b[(eol + 4 + size).min(b.len())..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_status_headers_and_chunked_bodies() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let r = parse(raw);
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("text/html"));
        assert_eq!(r.body, b"abcde");
        let plain = parse(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno");
        assert_eq!((plain.status, plain.text().as_str()), (403, "no"));
        assert_eq!(parse(b"garbage").status, 0);
    }
}
