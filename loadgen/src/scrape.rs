//! A shard's Prometheus metrics read over plain HTTP (`--metrics-url`): one
//! GET of `http://HOST:PORT/PATH`, bounded in time and size, parsed into
//! `series -> value` (series as printed: name and labels, e.g.
//! `mino_sockets_closed_total{transport="websocket",reason="too_slow"}`) by [`sample`], the
//! workspace's one parser of Prometheus text. Scenarios read a shard
//! at the start and the end of a hold and use the difference.

use std::collections::HashMap;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::http::Uri;

/// Bound on one scrape: connect, send, and read the whole answer.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(3);

/// Largest answer read, bytes.
pub const MAX_ANSWER_BYTES: usize = 8 << 20;

/// Why a scrape failed.
#[derive(Debug, thiserror::Error)]
pub enum ScrapeError {
    /// Not an `http://` URL with a host.
    #[error("invalid URL {0:?}: use http://HOST:PORT/PATH (e.g. /metrics)")]
    Url(String),
    /// Connecting, sending or reading failed.
    #[error("{url}: {detail}")]
    Io {
        /// The URL.
        url: String,
        /// What went wrong.
        detail: String,
    },
    /// No complete answer within [`SCRAPE_TIMEOUT`].
    #[error("{0}: no answer within {SCRAPE_TIMEOUT:?}")]
    Timeout(String),
    /// Not a 200 answer, or not HTTP, or too large.
    #[error("{url}: {detail}")]
    Answer {
        /// The URL.
        url: String,
        /// What was wrong with it.
        detail: String,
    },
}

/// One scrape: every sample by series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scrape {
    values: HashMap<String, f64>,
}

impl Scrape {
    /// Parses Prometheus (or OpenMetrics) text; comments and lines that are
    /// not `SERIES VALUE [TIMESTAMP]` are skipped.
    pub fn parse(text: &str) -> Scrape {
        Scrape { values: text.lines().filter_map(sample).map(|(s, v)| (s.to_owned(), v)).collect() }
    }

    /// The value of `series`, 0 when absent (a shard of another version, or
    /// a labelled counter of an open set of labels before its first).
    pub fn value(&self, series: &str) -> f64 {
        self.values.get(series).copied().unwrap_or(0.0)
    }

    /// Whether the scrape has `series`.
    pub fn has(&self, series: &str) -> bool {
        self.values.contains_key(series)
    }

    /// Every sample: (series as printed, value), in no particular order.
    pub fn samples(&self) -> impl Iterator<Item = (&str, f64)> {
        self.values.iter().map(|(s, v)| (s.as_str(), *v))
    }
}

/// One line of the text exposition format: its series (the name, with its
/// labels as printed) and its value; a timestamp after the value is
/// ignored. None for a comment, a blank line or a line that is not a sample.
/// The one parser of Prometheus text in the workspace: the test kit's
/// `Metrics` and the benches' sampler read scrapes through it.
pub fn sample(line: &str) -> Option<(&str, f64)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let end = match line.find('{') {
        Some(open) => open + labels_len(&line[open..])?,
        None => line.find(char::is_whitespace)?,
    };
    let value = line[end..].split_whitespace().next()?.parse().ok()?;
    Some((&line[..end], value))
}

/// The length of the label set `{...}` at the start of `s`, quoted values
/// (which may hold `}` and escaped quotes) skipped.
fn labels_len(s: &str) -> Option<usize> {
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// The metrics URL of a shard's own websocket URL: `ws://H:P/..` becomes
/// `http://H:P/metrics`; None for `wss://` (a proxy, not a shard).
pub fn metrics_url_of(ws_url: &str) -> Option<String> {
    let uri: Uri = ws_url.parse().ok()?;
    if uri.scheme_str() != Some("ws") {
        return None;
    }
    Some(format!("http://{}/metrics", uri.authority()?.as_str()))
}

/// GETs `url` and parses the answer.
///
/// Errors: [`ScrapeError`].
pub async fn scrape(url: &str) -> Result<Scrape, ScrapeError> {
    get(url).await.map(|b| Scrape::parse(&b))
}

/// GETs `http://HOST[:PORT]/PATH` (HTTP/1.1, `Connection: close`) and
/// returns the body of a 200 answer (de-chunked), bounded by
/// [`SCRAPE_TIMEOUT`] and [`MAX_ANSWER_BYTES`]: the one plain HTTP client of
/// the loadgen (metrics, a shard's `/webtransport` offer).
///
/// Errors: [`ScrapeError`].
pub async fn get(url: &str) -> Result<String, ScrapeError> {
    let uri: Uri = url.parse().map_err(|_| ScrapeError::Url(url.to_owned()))?;
    let (Some("http"), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(ScrapeError::Url(url.to_owned()));
    };
    let host_port = match crate::target::given_port(authority.as_str()) {
        Ok(Some(_)) => authority.as_str().to_owned(),
        Ok(None) => format!("{}:80", authority.host()),
        Err(()) => return Err(ScrapeError::Url(url.to_owned())),
    };
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    let io = |e: std::io::Error| ScrapeError::Io { url: url.to_owned(), detail: e.to_string() };
    let answer = tokio::time::timeout(SCRAPE_TIMEOUT, async {
        let mut tcp = TcpStream::connect(&host_port).await.map_err(io)?;
        tcp.write_all(request.as_bytes()).await.map_err(io)?;
        let mut buf = Vec::new();
        (&mut tcp).take(MAX_ANSWER_BYTES as u64 + 1).read_to_end(&mut buf).await.map_err(io)?;
        Ok(buf)
    })
    .await
    .map_err(|_| ScrapeError::Timeout(url.to_owned()))??;
    body(&answer).map_err(|detail| ScrapeError::Answer { url: url.to_owned(), detail })
}

/// The body of a whole HTTP/1.1 answer, de-chunked; Err says what was wrong.
fn body(answer: &[u8]) -> Result<String, String> {
    if answer.len() > MAX_ANSWER_BYTES {
        return Err(format!("answer over {MAX_ANSWER_BYTES} bytes"));
    }
    let text = String::from_utf8_lossy(answer);
    let (head, rest) = text.split_once("\r\n\r\n").ok_or("not an HTTP answer")?;
    let status = head.split_whitespace().nth(1).ok_or("not an HTTP answer")?;
    match status {
        "200" => {}
        // No content (a shard's /webtransport when it offers none): an empty body.
        "204" => return Ok(String::new()),
        _ => return Err(format!("status {status}")),
    }
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    if !chunked {
        return Ok(rest.to_owned());
    }
    let mut out = String::new();
    let mut rest = rest;
    loop {
        let (size, after) = rest.split_once("\r\n").ok_or("a chunk cut short")?;
        let size = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16).map_err(|_| "bad chunk")?;
        if size == 0 {
            return Ok(out);
        }
        let chunk = after.get(..size).ok_or("a chunk cut short")?;
        out.push_str(chunk);
        rest = after.get(size..).and_then(|r| r.strip_prefix("\r\n")).ok_or("a chunk cut short")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    const TEXT: &str = "# TYPE mino_ticks counter\nmino_ticks_total 120\n\
        mino_sockets_closed_total{reason=\"too_slow\"} 3\nmino_players 7 1700000000\n# EOF\n";

    #[test]
    fn parses_series_with_labels_and_skips_comments() {
        let s = Scrape::parse(TEXT);
        assert_eq!(s.value("mino_ticks_total"), 120.0);
        assert_eq!(s.value("mino_sockets_closed_total{reason=\"too_slow\"}"), 3.0);
        assert_eq!(s.value("mino_players"), 7.0, "a timestamp is ignored");
        assert_eq!(s.value("mino_absent"), 0.0);
        assert!(s.has("mino_ticks_total") && !s.has("# TYPE"));
        let quoted = "mino_sockets_closed_total{reason=\"a} \\\"b\"} 1 1700000000";
        assert_eq!(sample(quoted), Some(("mino_sockets_closed_total{reason=\"a} \\\"b\"}", 1.0)));
        assert_eq!(sample("mino_b{x=\"1\" 2"), None, "labels never closed");
        assert_eq!(sample("mino_c nan_or_not"), None);
        assert_eq!(sample("mino_a"), None, "no value");
    }

    #[test]
    fn metrics_urls_come_from_shard_urls_only() {
        assert_eq!(metrics_url_of("ws://127.0.0.1:8081/ws").as_deref(), Some("http://127.0.0.1:8081/metrics"));
        assert_eq!(metrics_url_of("wss://h:8443/ws"), None);
        assert_eq!(metrics_url_of("nonsense"), None);
    }

    #[test]
    fn chunked_bodies_are_joined() {
        let answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nmino\r\n3\r\n_ok\r\n0\r\n\r\n";
        assert_eq!(body(answer).as_deref(), Ok("mino_ok"));
        assert!(body(b"HTTP/1.1 404 Not Found\r\n\r\n").is_err());
        assert_eq!(body(b"HTTP/1.1 204 No Content\r\n\r\n").as_deref(), Ok(""));
        assert!(body(b"garbage").is_err());
    }

    #[tokio::test]
    async fn scrapes_a_server_over_http() {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr");
        tokio::spawn(async move {
            let Ok((mut tcp, _)) = l.accept().await else { return };
            let mut req = [0u8; 1024];
            let n = tcp.read(&mut req).await.unwrap_or(0);
            assert!(String::from_utf8_lossy(&req[..n]).starts_with("GET /metrics HTTP/1.1"));
            let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{TEXT}", TEXT.len());
            let _ = tcp.write_all(answer.as_bytes()).await;
        });
        let s = scrape(&format!("http://{addr}/metrics")).await.expect("scraped");
        assert_eq!(s.value("mino_ticks_total"), 120.0);
        assert!(matches!(scrape("https://h/metrics").await, Err(ScrapeError::Url(_))));
        // A port past 65535 is refused, not read as none (port 80).
        assert!(matches!(scrape("http://127.0.0.1:99999/metrics").await, Err(ScrapeError::Url(_))));
    }
}
