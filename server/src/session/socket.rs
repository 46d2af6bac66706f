//! A player's connection, TCP or a Unix stream socket (nginx on the same
//! machine), and a websocket's two halves after the HTTP upgrade: reading
//! with tungstenite (frame parsing, unmasking, size limits, UTF-8 checks); the
//! write half goes to an [`super::Outbox`], which writes our own pre-encoded
//! frames (see [`crate::ws_frame`]).
//!
//! The halves are owned separately (no lock between them). tungstenite never
//! writes: its automatic pong and close replies go nowhere, and the session
//! sends those itself on the write half.

use bytes::Bytes;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{tcp, unix, TcpStream, UnixStream};
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;

/// An accepted connection: what HTTP is served on and a websocket upgrades.
#[derive(Debug)]
pub enum Stream {
    /// TCP (Nagle off, see the listener).
    Tcp(TcpStream),
    /// A Unix stream socket.
    Unix(UnixStream),
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

/// The read half of a connection.
#[derive(Debug)]
pub enum ReadHalf {
    /// Of a TCP stream.
    Tcp(tcp::OwnedReadHalf),
    /// Of a Unix stream socket.
    Unix(unix::OwnedReadHalf),
}

/// The write half of a connection, written without blocking by an outbox.
#[derive(Debug)]
pub enum WriteHalf {
    /// Of a TCP stream.
    Tcp(tcp::OwnedWriteHalf),
    /// Of a Unix stream socket.
    Unix(unix::OwnedWriteHalf),
}

impl WriteHalf {
    /// One non-blocking vectored write: the bytes taken (0: the peer is gone),
    /// or `WouldBlock` when the socket's buffer is full.
    pub fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            WriteHalf::Tcp(w) => w.try_write_vectored(bufs),
            WriteHalf::Unix(w) => w.try_write_vectored(bufs),
        }
    }

    /// Waits until the socket may take bytes again. Cancel-safe.
    ///
    /// Errors: the socket's.
    pub async fn writable(&self) -> io::Result<()> {
        match self {
            WriteHalf::Tcp(w) => w.writable().await,
            WriteHalf::Unix(w) => w.writable().await,
        }
    }

    /// Shuts the write direction (the peer reads end of stream); errors are
    /// ignored (the peer may be gone).
    pub fn shutdown_write(&self) {
        let _ = match self {
            WriteHalf::Tcp(w) => socket2::SockRef::from(w.as_ref()).shutdown(std::net::Shutdown::Write),
            WriteHalf::Unix(w) => socket2::SockRef::from(w.as_ref()).shutdown(std::net::Shutdown::Write),
        };
    }
}

impl From<tcp::OwnedWriteHalf> for WriteHalf {
    fn from(w: tcp::OwnedWriteHalf) -> WriteHalf {
        WriteHalf::Tcp(w)
    }
}

/// The read half as tungstenite sees it: reads from the socket, writes nowhere.
pub struct ReadSide(ReadHalf);

impl AsyncRead for ReadSide {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match &mut self.0 {
            ReadHalf::Tcp(r) => Pin::new(r).poll_read(cx, buf),
            ReadHalf::Unix(r) => Pin::new(r).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ReadSide {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        // tungstenite's own pongs and close replies: the session sends its own.
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// The reading end: a stream of tungstenite messages.
pub type Reader = WebSocketStream<ReadSide>;

/// Splits an upgraded connection into its reader (with any bytes hyper read
/// past the HTTP request) and its write half (for an [`super::Outbox`]).
pub async fn split(stream: Stream, already_read: Bytes, config: WebSocketConfig) -> (Reader, WriteHalf) {
    let (read, write) = match stream {
        Stream::Tcp(s) => {
            let (r, w) = s.into_split();
            (ReadHalf::Tcp(r), WriteHalf::Tcp(w))
        }
        Stream::Unix(s) => {
            let (r, w) = s.into_split();
            (ReadHalf::Unix(r), WriteHalf::Unix(w))
        }
    };
    let reader =
        WebSocketStream::from_partially_read(ReadSide(read), already_read.to_vec(), Role::Server, Some(config)).await;
    (reader, write)
}
