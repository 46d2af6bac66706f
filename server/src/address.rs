//! Where a listener listens, as `--listen` and `--admin-listen` give it: a
//! TCP address, a bare port (on loopback), or a Unix socket path.
//!
//! ```text
//!   127.0.0.1:8081          TCP on that address (port 0: any free port)
//!   [::1]:9100              TCP, IPv6
//!   9100                    TCP on 127.0.0.1:9100 (a bare port is loopback)
//!   unix:/run/mino/s1.sock  a Unix stream socket at that path
//! ```

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Longest Unix socket path, bytes: `sun_path` holds 108 bytes with the
/// terminating NUL.
pub const MAX_UNIX_PATH: usize = 107;

/// A listener's address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListenAddr {
    /// TCP on this address.
    Tcp(SocketAddr),
    /// A Unix stream socket at this path (created at bind, removed at exit).
    Unix(PathBuf),
}

/// Why a `--listen` value is not an address.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AddressError {
    /// Neither `HOST:PORT` (an IP address), a port, nor `unix:PATH`.
    #[error("'{0}' is not IP:PORT, a port, or unix:PATH")]
    Unparsable(String),
    /// `unix:` with no path.
    #[error("unix: needs a path (unix:/run/mino/shard-1.sock)")]
    EmptyPath,
    /// The path does not fit in a socket address.
    #[error("unix socket path is {0} bytes, over {MAX_UNIX_PATH}")]
    PathTooLong(usize),
}

impl ListenAddr {
    /// True when only this machine can reach it: a loopback TCP address or a
    /// Unix socket (its file's permissions decide who may connect).
    pub fn is_local(&self) -> bool {
        match self {
            ListenAddr::Tcp(addr) => addr.ip().is_loopback(),
            ListenAddr::Unix(_) => true,
        }
    }

    /// The Unix socket's path, if it is one.
    pub fn unix_path(&self) -> Option<&Path> {
        match self {
            ListenAddr::Unix(path) => Some(path),
            ListenAddr::Tcp(_) => None,
        }
    }
}

impl FromStr for ListenAddr {
    type Err = AddressError;

    /// Parses `IP:PORT`, `PORT` (127.0.0.1) or `unix:PATH`.
    fn from_str(s: &str) -> Result<ListenAddr, AddressError> {
        let s = s.trim();
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(AddressError::EmptyPath);
            }
            if path.len() > MAX_UNIX_PATH {
                return Err(AddressError::PathTooLong(path.len()));
            }
            return Ok(ListenAddr::Unix(PathBuf::from(path)));
        }
        if let Ok(port) = s.parse::<u16>() {
            return Ok(ListenAddr::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, port))));
        }
        s.parse().map(ListenAddr::Tcp).map_err(|_| AddressError::Unparsable(s.to_owned()))
    }
}

impl fmt::Display for ListenAddr {
    /// `IP:PORT`, or `unix:PATH`: what the parser reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Tcp(addr) => write!(f, "{addr}"),
            ListenAddr::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

/// A clap parser for a [`ListenAddr`].
pub fn parse_listen(s: &str) -> Result<ListenAddr, String> {
    s.parse().map_err(|e: AddressError| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_ports_and_unix_paths_parse_and_print_back() {
        for text in ["127.0.0.1:8081", "[::1]:9100", "0.0.0.0:0", "unix:/run/mino/shard-1.sock", "unix:rel.sock"] {
            let addr: ListenAddr = text.parse().expect(text);
            assert_eq!(addr.to_string(), text);
        }
        assert_eq!("9100".parse(), Ok(ListenAddr::Tcp(SocketAddr::from(([127, 0, 0, 1], 9100)))));
        assert_eq!(
            "unix:/run/mino/a.sock".parse::<ListenAddr>().map(|a| a.unix_path().map(Path::to_owned)),
            Ok(Some(PathBuf::from("/run/mino/a.sock")))
        );
    }

    #[test]
    fn bad_values_say_what_is_wrong() {
        assert_eq!("localhost:80".parse::<ListenAddr>(), Err(AddressError::Unparsable("localhost:80".into())));
        assert_eq!("unix:".parse::<ListenAddr>(), Err(AddressError::EmptyPath));
        let long = format!("unix:/{}", "a".repeat(MAX_UNIX_PATH));
        assert_eq!(long.parse::<ListenAddr>(), Err(AddressError::PathTooLong(MAX_UNIX_PATH + 1)));
        assert!(parse_listen("70000").expect_err("not a port").contains("70000"));
    }

    #[test]
    fn loopback_and_unix_sockets_are_local() {
        assert!("127.0.0.1:1".parse::<ListenAddr>().expect("addr").is_local());
        assert!("[::1]:1".parse::<ListenAddr>().expect("addr").is_local());
        assert!("unix:/tmp/x.sock".parse::<ListenAddr>().expect("addr").is_local());
        assert!(!"0.0.0.0:1".parse::<ListenAddr>().expect("addr").is_local());
        assert!(!"10.0.0.5:9100".parse::<ListenAddr>().expect("addr").is_local());
    }
}
