//! Who may use the admin listener: the bearer tokens of `--admin-token-file`
//! and the guard in front of every admin route (the probes `/healthz` and
//! `/readyz` excepted, and the console's own files: the same page for
//! everyone, it asks for the token and sends it with every request).
//!
//! The file holds one token a line, `NAME TOKEN` or just `TOKEN` (named
//! "admin"); NAME is the operator logged with each action. It is read again
//! when it changes (looked at once a second) and on SIGHUP, so tokens are
//! added and revoked without a restart; emptied or deleted, every token is
//! revoked (the admin API then refuses every request until tokens are
//! written again); a file that does not parse is logged and the tokens before
//! it stay. At start a file with no token is an error. A wrong or missing token gets 401 with
//! `WWW-Authenticate: Bearer` and nothing else. Without a token file (a
//! loopback listener) every request passes, as operator "local". Every
//! request gets an [`Asker`]: the operator and the peer.

use crate::listener::Peer;
use crate::order::{Operator, OrderError};
use crate::reload::FileStamp;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

/// Shortest token, characters.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Longest token, characters.
pub const MAX_TOKEN_CHARS: usize = 256;

/// Why the token file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// It cannot be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not `NAME TOKEN` or `TOKEN`.
    #[error("{path} line {line}: not `NAME TOKEN` or `TOKEN`")]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
    },
    /// A name is not an operator name.
    #[error("{path} line {line}: {source}")]
    Name {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
        /// Why.
        source: OrderError,
    },
    /// A token is too short, too long, or not printable ASCII.
    #[error(
        "{path} line {line}: a token is {MIN_TOKEN_CHARS} to {MAX_TOKEN_CHARS} printable characters without spaces"
    )]
    Token {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
    },
    /// The same token twice.
    #[error("{path} line {line}: the same token as an earlier line")]
    Duplicate {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
    },
    /// No token at all.
    #[error("{0}: no token in the file")]
    Empty(PathBuf),
}

/// The operators' tokens.
#[derive(Debug)]
pub struct Tokens {
    entries: Vec<(Operator, Box<[u8]>)>,
}

impl Tokens {
    /// Reads the token file at `path`.
    ///
    /// Errors: [`TokenError`].
    pub fn load(path: &Path) -> Result<Tokens, TokenError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| TokenError::Read { path: path.to_owned(), source })?;
        Tokens::parse(&text, path)
    }

    /// Parses a token file's text (`path` for messages).
    ///
    /// Errors: [`TokenError`].
    pub fn parse(text: &str, path: &Path) -> Result<Tokens, TokenError> {
        let mut entries: Vec<(Operator, Box<[u8]>)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let (line_no, line) = (i + 1, line.trim());
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let (name, token) = match words[..] {
                [token] => ("admin", token),
                [name, token] => (name, token),
                _ => return Err(TokenError::Line { path: path.to_owned(), line: line_no }),
            };
            let operator = Operator::new(name).map_err(|source| TokenError::Name {
                path: path.to_owned(),
                line: line_no,
                source,
            })?;
            let ok = (MIN_TOKEN_CHARS..=MAX_TOKEN_CHARS).contains(&token.len())
                && token.bytes().all(|b| b.is_ascii_graphic());
            if !ok {
                return Err(TokenError::Token { path: path.to_owned(), line: line_no });
            }
            if entries.iter().any(|(_, t)| **t == *token.as_bytes()) {
                return Err(TokenError::Duplicate { path: path.to_owned(), line: line_no });
            }
            entries.push((operator, token.as_bytes().into()));
        }
        if entries.is_empty() {
            return Err(TokenError::Empty(path.to_owned()));
        }
        Ok(Tokens { entries })
    }

    /// The operator whose token `presented` is. Every token is compared
    /// with `subtle`'s constant-time equality, whatever matched, so the time
    /// taken says nothing of the tokens' bytes (only, as for any length
    /// check, whether the lengths are equal).
    pub fn operator(&self, presented: &[u8]) -> Option<Operator> {
        let mut found = None;
        for (operator, token) in &self.entries {
            let equal: bool = token.ct_eq(presented).into();
            if equal && found.is_none() {
                found = Some(operator.clone());
            }
        }
        found
    }

    /// No token: every request refused (a token file emptied or deleted).
    pub fn none() -> Tokens {
        Tokens { entries: Vec::new() }
    }

    /// How many tokens there are (at least one at start; none once the
    /// file was emptied or deleted).
    pub fn count(&self) -> usize {
        self.entries.len()
    }
}

/// The token file and the tokens last read from it.
#[derive(Debug)]
pub struct TokenFile {
    path: PathBuf,
    tokens: RwLock<Arc<Tokens>>,
    stamp: Mutex<Option<FileStamp>>,
}

impl TokenFile {
    /// Reads the file at `path`.
    ///
    /// Errors: [`TokenError`] (the shard does not start).
    pub fn load(path: &Path) -> Result<TokenFile, TokenError> {
        let stamped = FileStamp::of(path);
        let tokens = Tokens::load(path)?;
        Ok(TokenFile { path: path.to_owned(), tokens: RwLock::new(Arc::new(tokens)), stamp: Mutex::new(stamped) })
    }

    /// The tokens now.
    pub fn tokens(&self) -> Arc<Tokens> {
        self.tokens.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Reads the file again; the tokens now in force, counted. A file with
    /// no token, or none at all, revokes every token (an operator locking
    /// everyone out is obeyed).
    ///
    /// Errors: [`TokenError`] other than those two; the tokens before stay.
    pub fn reload(&self) -> Result<usize, TokenError> {
        *self.stamp.lock().unwrap_or_else(PoisonError::into_inner) = FileStamp::of(&self.path);
        let tokens = match Tokens::load(&self.path) {
            Ok(tokens) => tokens,
            Err(TokenError::Empty(_)) => Tokens::none(),
            Err(TokenError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Tokens::none(),
            Err(e) => return Err(e),
        };
        if tokens.count() == 0 {
            tracing::warn!(
                file = %self.path.display(),
                "admin token file empty or gone: every token revoked; the admin API refuses every request until tokens are written again"
            );
        }
        let n = tokens.count();
        *self.tokens.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(tokens);
        Ok(n)
    }

    /// True when the file's time or length differ from the last read.
    fn changed(&self) -> bool {
        *self.stamp.lock().unwrap_or_else(PoisonError::into_inner) != FileStamp::of(&self.path)
    }

    /// Reloads the file on SIGHUP and when it changes, until `stop`; logs
    /// each reload (never a token).
    pub async fn watch(self: Arc<Self>, stop: CancellationToken) {
        crate::reload::watch(&*self, "admin tokens", &self.path, stop).await;
    }
}

impl crate::reload::Reloadable for TokenFile {
    type Error = TokenError;

    fn changed(&self) -> bool {
        TokenFile::changed(self)
    }

    fn reload(&self) -> Result<usize, TokenError> {
        TokenFile::reload(self)
    }
}

/// Who made a request: the operator (from the token) and the peer.
#[derive(Clone, Debug)]
pub struct Asker {
    /// The token's operator, or "local" without tokens.
    pub operator: Operator,
    /// The connection's peer.
    pub peer: Peer,
}

/// True when `host` (a Host header) names this machine's loopback:
/// `127.0.0.1`, `[::1]` or `localhost`, with or without a port.
pub fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    matches!(name, "127.0.0.1" | "::1" | "localhost")
}

/// The guard of the admin routes: with a token file, a request without the
/// bearer token of one of them gets 401 and nothing else; otherwise the
/// request goes on with its [`Asker`]. Without a token file (a loopback
/// listener) a TCP request must name a loopback host (403 otherwise): a web
/// page whose name an attacker points at 127.0.0.1 (DNS rebinding) gets
/// nothing.
pub async fn guard(State(file): State<Option<Arc<TokenFile>>>, mut req: Request, next: Next) -> Response {
    let peer = req.extensions().get::<Peer>().copied().unwrap_or(Peer::Unix);
    let operator = match &file {
        None => {
            let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
            if matches!(peer, Peer::Tcp(_)) && !loopback_host(host) {
                tracing::debug!(%peer, host, "admin request naming another host than loopback");
                let body = serde_json::json!({
                    "error": "this admin listener answers only requests naming a loopback host (localhost, 127.0.0.1, [::1])",
                    "kind": "forbidden",
                });
                return (StatusCode::FORBIDDEN, axum::Json(body)).into_response();
            }
            Operator::local()
        }
        Some(file) => {
            let tokens = file.tokens();
            let presented = req
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| bearer_token(v.as_bytes()))
                .and_then(|t| tokens.operator(t));
            match presented {
                Some(operator) => operator,
                None => {
                    tracing::debug!(%peer, path = req.uri().path(), "admin request without a valid token");
                    return unauthorized();
                }
            }
        }
    };
    req.extensions_mut().insert(Asker { operator, peer });
    next.run(req).await
}

/// The token of an `Authorization` value of the Bearer scheme (RFC 6750
/// section 2.1; the scheme's name in any case, RFC 9110 section 11.1), with
/// the spaces after the scheme skipped.
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    let scheme = value.get(..6)?;
    let rest = value.get(6..)?;
    if !scheme.eq_ignore_ascii_case(b"Bearer") || !rest.starts_with(b" ") {
        return None;
    }
    Some(rest.trim_ascii_start())
}

/// 401 with the scheme to use and no body.
fn unauthorized() -> Response {
    let mut response = StatusCode::UNAUTHORIZED.into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"mino admin\""));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN_A: &str = "a-very-long-token-0001";
    const TOKEN_B: &str = "b-very-long-token-0002";

    fn parse(text: &str) -> Result<Tokens, TokenError> {
        Tokens::parse(text, Path::new("tokens"))
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        for value in ["Bearer tok", "bearer tok", "BEARER  tok"] {
            assert_eq!(bearer_token(value.as_bytes()), Some(&b"tok"[..]), "{value}");
        }
        for value in ["Bearertok", "Basic tok", "Bear", ""] {
            assert_eq!(bearer_token(value.as_bytes()), None, "{value}");
        }
    }

    #[test]
    fn named_and_unnamed_tokens_name_their_operator() {
        let tokens = parse(&format!("# operators\n\nalice {TOKEN_A}\n  {TOKEN_B}  \n")).expect("valid");
        assert_eq!(tokens.count(), 2);
        assert_eq!(tokens.operator(TOKEN_A.as_bytes()).map(|o| o.to_string()).as_deref(), Some("alice"));
        assert_eq!(tokens.operator(TOKEN_B.as_bytes()).map(|o| o.to_string()).as_deref(), Some("admin"));
        assert_eq!(tokens.operator(b"a-very-long-token-000"), None, "a prefix is not the token");
        assert_eq!(tokens.operator(b""), None);
        assert_eq!(tokens.operator(format!("{TOKEN_A}x").as_bytes()), None);
    }

    #[test]
    fn bad_files_say_which_line() {
        assert!(matches!(parse(""), Err(TokenError::Empty(_))));
        assert!(matches!(parse("# only a comment"), Err(TokenError::Empty(_))));
        assert!(matches!(parse("alice short"), Err(TokenError::Token { line: 1, .. })));
        assert!(matches!(parse(&format!("alice {TOKEN_A} extra")), Err(TokenError::Line { line: 1, .. })));
        assert!(matches!(parse(&format!("\nbad/name {TOKEN_A}")), Err(TokenError::Name { line: 2, .. })));
        let twice = format!("alice {TOKEN_A}\nbob {TOKEN_A}");
        assert!(matches!(parse(&twice), Err(TokenError::Duplicate { line: 2, .. })));
        let e = Tokens::load(Path::new("/nonexistent/tokens")).expect_err("missing");
        assert!(e.to_string().contains("/nonexistent/tokens"));
    }

    #[test]
    fn a_changed_file_is_read_again_and_a_broken_one_keeps_the_tokens_before() {
        let dir = std::env::temp_dir().join(format!("mino-tokens-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("folder");
        let path = dir.join("tokens");
        std::fs::write(&path, format!("alice {TOKEN_A}\n")).expect("write");
        let file = TokenFile::load(&path).expect("load");
        assert!(!file.changed());
        std::fs::write(&path, format!("bob {TOKEN_B}\ncarol c-very-long-token-0003\n")).expect("write");
        assert!(file.changed(), "another length");
        assert_eq!(file.reload().expect("reload"), 2);
        assert_eq!(file.tokens().operator(TOKEN_A.as_bytes()), None, "revoked");
        assert!(file.tokens().operator(TOKEN_B.as_bytes()).is_some());
        std::fs::write(&path, "broken").expect("write");
        assert!(file.reload().is_err());
        assert!(file.tokens().operator(TOKEN_B.as_bytes()).is_some(), "the tokens before stay");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn loopback_hosts_with_or_without_a_port() {
        for host in ["127.0.0.1", "127.0.0.1:9101", "localhost:9101", "localhost", "[::1]:9101", "[::1]"] {
            assert!(loopback_host(host), "{host}");
        }
        for host in
            ["", "evil.example:9101", "127.0.0.1.evil.example", "10.0.0.5:9101", "[fd00::1]:9101", "localhost.evil"]
        {
            assert!(!loopback_host(host), "{host}");
        }
    }

    #[test]
    fn a_token_differing_in_any_byte_or_its_length_names_nobody() {
        let tokens = parse(&format!("alice {TOKEN_A}\n")).expect("valid");
        for i in 0..TOKEN_A.len() {
            let mut other = TOKEN_A.as_bytes().to_vec();
            other[i] ^= 1;
            assert_eq!(tokens.operator(&other), None, "byte {i}");
        }
        assert_eq!(tokens.operator(&TOKEN_A.as_bytes()[1..]), None);
        assert!(tokens.operator(TOKEN_A.as_bytes()).is_some());
    }
}
