//! The websocket opening handshake, server side (RFC 6455 section 4.2): which
//! upgrade requests are refused and why, and the `Sec-WebSocket-Accept` of
//! the rest. Pure: headers in, a decision out.

use axum::http::{header, HeaderMap, HeaderName, Method, StatusCode, Version};

/// Why an upgrade request to `/ws` is refused: the `reason` label of
/// `mino_upgrades_refused_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UpgradeRefusal {
    /// Not a GET (405).
    #[error("a websocket upgrade is a GET")]
    Method,
    /// HTTP/1.0 or older (400).
    #[error("a websocket upgrade needs HTTP/1.1")]
    HttpVersion,
    /// No `Host` header, or more than one (400).
    #[error("one Host header required")]
    Host,
    /// No `Connection: upgrade` or no `Upgrade: websocket` (400).
    #[error("expected a websocket upgrade")]
    NotUpgrade,
    /// `Sec-WebSocket-Version` missing, repeated or not 13 (426, with
    /// `Sec-WebSocket-Version: 13`).
    #[error("websocket version 13 required")]
    Version,
    /// `Sec-WebSocket-Key` missing, repeated, or not the base64 of exactly 16
    /// bytes (400).
    #[error("Sec-WebSocket-Key must be the base64 of 16 bytes, once")]
    Key,
}

impl UpgradeRefusal {
    /// Every refusal, for documentation tests.
    pub const ALL: [UpgradeRefusal; 6] = [
        UpgradeRefusal::Method,
        UpgradeRefusal::HttpVersion,
        UpgradeRefusal::Host,
        UpgradeRefusal::NotUpgrade,
        UpgradeRefusal::Version,
        UpgradeRefusal::Key,
    ];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            UpgradeRefusal::Method => "method",
            UpgradeRefusal::HttpVersion => "http_version",
            UpgradeRefusal::Host => "host",
            UpgradeRefusal::NotUpgrade => "not_upgrade",
            UpgradeRefusal::Version => "version",
            UpgradeRefusal::Key => "key",
        }
    }

    /// The HTTP status of the refusal.
    pub fn status(self) -> StatusCode {
        match self {
            UpgradeRefusal::Method => StatusCode::METHOD_NOT_ALLOWED,
            UpgradeRefusal::Version => StatusCode::UPGRADE_REQUIRED,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

/// The only websocket version spoken (RFC 6455).
pub const WEBSOCKET_VERSION: &str = "13";

/// Checks an upgrade request (RFC 6455 section 4.2.1) and returns the
/// `Sec-WebSocket-Accept` value for its key. No extension or subprotocol is
/// negotiated (permessage-deflate stays off).
///
/// Errors: the first [`UpgradeRefusal`] that applies, in the order the
/// variants are declared.
pub fn accept(method: &Method, version: Version, headers: &HeaderMap) -> Result<String, UpgradeRefusal> {
    if method != Method::GET {
        return Err(UpgradeRefusal::Method);
    }
    if version < Version::HTTP_11 {
        return Err(UpgradeRefusal::HttpVersion);
    }
    if headers.get_all(header::HOST).iter().count() != 1 {
        return Err(UpgradeRefusal::Host);
    }
    if !has_token(headers, header::CONNECTION, "upgrade") || !has_token(headers, header::UPGRADE, "websocket") {
        return Err(UpgradeRefusal::NotUpgrade);
    }
    if only(headers, header::SEC_WEBSOCKET_VERSION) != Some(WEBSOCKET_VERSION.as_bytes()) {
        return Err(UpgradeRefusal::Version);
    }
    match only(headers, header::SEC_WEBSOCKET_KEY) {
        Some(key) if is_key(key) => Ok(tokio_tungstenite::tungstenite::handshake::derive_accept_key(key)),
        _ => Err(UpgradeRefusal::Key),
    }
}

/// True when a `name` header lists `token` (comma-separated, any case).
fn has_token(headers: &HeaderMap, name: HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
}

/// The value of a header that appears exactly once.
fn only(headers: &HeaderMap, name: HeaderName) -> Option<&[u8]> {
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (Some(v), None) => Some(v.as_bytes()),
        _ => None,
    }
}

/// True for the canonical base64 of exactly 16 bytes: 22 characters of the
/// standard alphabet then `==`, the last character's 4 unused bits zero.
pub fn is_key(key: &[u8]) -> bool {
    let [body @ .., last, b'=', b'='] = key else { return false };
    key.len() == 24 && body.iter().all(|b| sextet(*b).is_some()) && sextet(*last).is_some_and(|s| s & 0x0f == 0)
}

/// The value of a standard base64 character.
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    /// RFC 6455 section 1.3's example key and its accept value.
    const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

    fn request(extra: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in [
            ("host", "shard"),
            ("connection", "keep-alive, Upgrade"),
            ("upgrade", "websocket"),
            ("sec-websocket-version", "13"),
        ] {
            h.append(name, HeaderValue::from_static(value));
        }
        for (name, value) in extra {
            h.append(*name, HeaderValue::from_str(value).expect("header"));
        }
        h
    }

    fn check(h: &HeaderMap) -> Result<String, UpgradeRefusal> {
        accept(&Method::GET, Version::HTTP_11, h)
    }

    #[test]
    fn a_valid_request_gets_the_rfcs_accept_value() {
        let h = request(&[("sec-websocket-key", KEY)]);
        assert_eq!(check(&h).as_deref(), Ok("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    }

    #[test]
    fn the_key_is_the_base64_of_16_bytes_once() {
        for bad in [
            "x",
            "",
            "dGhlIHNhbXBsZSBub25jZQ",       // no padding
            "dGhlIHNhbXBsZSBub25jZQ=",      // short padding
            "dGhlIHNhbXBsZSBub25jZR==",     // non-zero unused bits
            "dGhlIHNhbXBsZSBub25j*Q==",     // not base64
            "dGhlIHNhbXBsZSBub25jZXM=",     // 17 bytes
            "dGhlIHNhbXBsZSBub25jZQ==AAAA", // trailing bytes
        ] {
            assert_eq!(check(&request(&[("sec-websocket-key", bad)])), Err(UpgradeRefusal::Key), "{bad:?}");
        }
        assert_eq!(check(&request(&[])), Err(UpgradeRefusal::Key), "missing");
        let twice = request(&[("sec-websocket-key", KEY), ("sec-websocket-key", KEY)]);
        assert_eq!(check(&twice), Err(UpgradeRefusal::Key), "repeated");
        assert!(is_key(b"AAAAAAAAAAAAAAAAAAAAAA==") && is_key(b"/////////////////////w=="));
    }

    #[test]
    fn version_method_host_and_upgrade_tokens_are_checked() {
        let mut h = request(&[("sec-websocket-key", KEY)]);
        h.insert("sec-websocket-version", HeaderValue::from_static("8"));
        assert_eq!(check(&h), Err(UpgradeRefusal::Version));
        assert_eq!(UpgradeRefusal::Version.status(), StatusCode::UPGRADE_REQUIRED);
        let mut h = request(&[("sec-websocket-key", KEY), ("sec-websocket-version", "13")]);
        assert_eq!(check(&h), Err(UpgradeRefusal::Version), "repeated version");
        h = request(&[("sec-websocket-key", KEY)]);
        assert_eq!(accept(&Method::HEAD, Version::HTTP_11, &h), Err(UpgradeRefusal::Method));
        assert_eq!(accept(&Method::GET, Version::HTTP_10, &h), Err(UpgradeRefusal::HttpVersion));
        h.remove("host");
        assert_eq!(check(&h), Err(UpgradeRefusal::Host));
        let mut h = request(&[("sec-websocket-key", KEY)]);
        h.insert("upgrade", HeaderValue::from_static("h2c"));
        assert_eq!(check(&h), Err(UpgradeRefusal::NotUpgrade));
    }

    #[test]
    fn labels_are_distinct() {
        let labels: std::collections::HashSet<_> = UpgradeRefusal::ALL.iter().map(|r| r.label()).collect();
        assert_eq!(labels.len(), UpgradeRefusal::ALL.len());
    }
}
