//! A websocket's two halves after the HTTP upgrade: reading with tungstenite
//! (frame parsing, unmasking, size limits, UTF-8 checks); the write half goes
//! to an [`super::Outbox`], which writes our own pre-encoded frames (see
//! [`crate::ws_frame`]).
//!
//! The halves are owned separately (no lock between them). tungstenite never
//! writes: its automatic pong and close replies go nowhere, and the session
//! sends those itself on the write half.

use bytes::Bytes;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;

/// The read half as tungstenite sees it: reads from the socket, writes nowhere.
pub struct ReadSide(OwnedReadHalf);

impl AsyncRead for ReadSide {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
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

/// Splits an upgraded TCP stream into its reader (with any bytes hyper read
/// past the HTTP request) and its write half (for an [`super::Outbox`]).
pub async fn split(tcp: TcpStream, already_read: Bytes, config: WebSocketConfig) -> (Reader, OwnedWriteHalf) {
    let (read, write) = tcp.into_split();
    let reader =
        WebSocketStream::from_partially_read(ReadSide(read), already_read.to_vec(), Role::Server, Some(config)).await;
    (reader, write)
}
