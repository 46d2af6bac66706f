//! A player's connection, TCP or a Unix stream socket (nginx on the same
//! machine): read and written with tokio during the HTTP request and the
//! websocket handshake, then given up by tokio and handed to the hub as a
//! plain non-blocking socket ([`socket2::Socket`]), which the hub's own
//! poller watches whatever the socket's family.

use socket2::Socket;
use std::io::{self, IoSlice};
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::OwnedSemaphorePermit;

/// A connection slot (of `--max-connections`), released when dropped. The
/// HTTP connection holds it through a [`SlotHold`] until a websocket upgrade
/// takes it over; the websocket then keeps it in its handshake task and in
/// the hub with no allocation of its own (an idle websocket's bytes count).
#[derive(Debug)]
pub struct ConnectionSlot {
    _permit: OwnedSemaphorePermit,
}

/// An HTTP connection's hold on its slot, shared by the requests it serves
/// until a websocket upgrade takes the slot ([`SlotHold::take`]); the slot
/// is released when the last clone goes without one having taken it.
#[derive(Clone, Debug)]
pub struct SlotHold(Arc<Mutex<Option<ConnectionSlot>>>);

impl SlotHold {
    /// A hold on a slot of `permit`.
    pub fn new(permit: OwnedSemaphorePermit) -> SlotHold {
        SlotHold(Arc::new(Mutex::new(Some(ConnectionSlot { _permit: permit }))))
    }

    /// Takes the slot over (once the upgrade is done); `None` when it was
    /// taken already.
    pub fn take(&self) -> Option<ConnectionSlot> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
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

impl Upgraded for UnixStream {
    fn into_socket(self) -> io::Result<Socket> {
        // `into_std` leaves the socket non-blocking; the hub reads, writes
        // and shuts it down as it does a TCP socket (no TCP options are set).
        Ok(Socket::from(OwnedFd::from(self.into_std()?)))
    }
}

/// An accepted connection: what HTTP is served on and a websocket upgrades.
#[derive(Debug)]
pub enum Stream {
    /// TCP (Nagle off and its send buffer set by the listener).
    Tcp(TcpStream),
    /// A Unix stream socket.
    Unix(UnixStream),
}

impl Upgraded for Stream {
    fn into_socket(self) -> io::Result<Socket> {
        match self {
            Stream::Tcp(s) => s.into_socket(),
            Stream::Unix(s) => s.into_socket(),
        }
    }
}

/// Forwards a poll to whichever stream it is.
macro_rules! each {
    ($self:expr, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Stream::Tcp($s) => $e,
            Stream::Unix($s) => $e,
        }
    };
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        each!(self, s => Pin::new(s).poll_read(cx, buf))
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        each!(self, s => Pin::new(s).poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        each!(self, s => Pin::new(s).poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        each!(self, s => Pin::new(s).poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        each!(self, s => Pin::new(s).poll_shutdown(cx))
    }
}
