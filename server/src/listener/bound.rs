//! A bound listener, TCP or a Unix stream socket, and what it accepts.
//!
//! A Unix socket costs the server less per frame than loopback TCP (no TCP
//! stack, no Nagle, no checksums), so nginx on the same machine reaches its
//! shards over Unix sockets (`--listen unix:/run/mino/shard-1.sock`). The
//! socket file is prepared and removed by [`super::socket_file`].

use super::socket_file::{self, SocketFile, SocketFileError};
use crate::address::ListenAddr;
use crate::socket::Stream;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use tokio::net::{TcpListener, UnixListener};

/// Why a listener could not be bound.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The bind itself failed (address in use, no permission...); its
    /// source says why (shown as `{e:#}` prints the chain).
    #[error("cannot listen on {addr}")]
    Io {
        /// Where.
        addr: ListenAddr,
        /// What failed.
        source: io::Error,
    },
    /// The Unix socket's path cannot be used; its source says why.
    #[error("cannot listen on a unix socket")]
    SocketFile(#[from] SocketFileError),
}

/// A listener, bound.
#[derive(Debug)]
pub enum Listener {
    /// TCP.
    Tcp(TcpListener),
    /// A Unix stream socket and its file (removed when this is dropped).
    Unix {
        /// The listener.
        listener: UnixListener,
        /// Its file.
        file: SocketFile,
    },
}

/// Who connected, for logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// A TCP peer's address.
    Tcp(SocketAddr),
    /// A peer on the Unix socket (nginx on this machine).
    Unix,
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Peer::Tcp(addr) => write!(f, "{addr}"),
            Peer::Unix => f.write_str("unix"),
        }
    }
}

impl Listener {
    /// Binds `addr`. A Unix socket's path is prepared first (a stale socket
    /// removed) and its file given `mode` after the bind.
    ///
    /// Errors: [`BindError`].
    pub async fn bind(addr: &ListenAddr, mode: u32) -> Result<Listener, BindError> {
        let io_error = |source| BindError::Io { addr: addr.clone(), source };
        match addr {
            ListenAddr::Tcp(at) => TcpListener::bind(at).await.map(Listener::Tcp).map_err(io_error),
            ListenAddr::Unix(path) => {
                if socket_file::prepare(path)? {
                    tracing::info!(path = %path.display(), "removed a stale socket left by an earlier process");
                }
                let listener = UnixListener::bind(path).map_err(io_error)?;
                let file = SocketFile::claim(path, mode)?;
                Ok(Listener::Unix { listener, file })
            }
        }
    }

    /// Where it listens (a TCP port 0 bound: the port picked).
    ///
    /// Errors: the socket's (TCP only).
    pub fn local_addr(&self) -> io::Result<ListenAddr> {
        match self {
            Listener::Tcp(l) => l.local_addr().map(ListenAddr::Tcp),
            Listener::Unix { file, .. } => Ok(ListenAddr::Unix(file.path().to_owned())),
        }
    }

    /// Accepts one connection. Cancel-safe.
    ///
    /// Errors: the accept's (descriptors exhausted, most often).
    pub async fn accept(&self) -> io::Result<(Stream, Peer)> {
        match self {
            Listener::Tcp(l) => l.accept().await.map(|(s, peer)| (Stream::Tcp(s), Peer::Tcp(peer))),
            Listener::Unix { listener, .. } => listener.accept().await.map(|(s, _)| (Stream::Unix(s), Peer::Unix)),
        }
    }
}

impl From<TcpListener> for Listener {
    fn from(l: TcpListener) -> Listener {
        Listener::Tcp(l)
    }
}
