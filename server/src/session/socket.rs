//! An upgraded connection: read and written with tokio during the
//! handshake, then given up by tokio and handed to the hub as a plain
//! non-blocking socket ([`socket2::Socket`]), which the hub's own poller
//! watches.

use socket2::Socket;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;

/// A connection slot (of `--max-connections`), held by the HTTP connection
/// and by the websocket it upgrades to, in its handshake task then in the
/// hub; released when both are gone.
#[derive(Clone, Debug)]
pub struct ConnectionSlot {
    _permit: Arc<OwnedSemaphorePermit>,
}

impl ConnectionSlot {
    /// A slot holding `permit` until its last clone is dropped.
    pub fn new(permit: OwnedSemaphorePermit) -> ConnectionSlot {
        ConnectionSlot { _permit: Arc::new(permit) }
    }
}

/// A connection a websocket was upgraded on.
pub trait Upgraded: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// Takes the socket out of tokio's reactor, non-blocking.
    ///
    /// Errors: the runtime could not deregister it.
    fn into_socket(self) -> io::Result<Socket>;
}

impl Upgraded for TcpStream {
    fn into_socket(self) -> io::Result<Socket> {
        // `into_std` leaves the socket non-blocking.
        Ok(Socket::from(self.into_std()?))
    }
}
