//! A bot's TCP stream that keeps the kernel's receive time of what it reads
//! (`SO_TIMESTAMPNS`, man 7 socket): when the bytes reached the socket, before
//! the bot's thread got to them. With a thousand bots on the shards' machine a
//! frame can wait in its socket for the bots before it on the same thread;
//! gaps timed at the socket ([`crate::stats::Metric::SocketGap`]) leave that
//! wait out, so a report can say how much of a gap is the server's delivery
//! and how much the bots' own.
//!
//! For TCP, Linux stamps a read with the arrival of the last segment it
//! copied (`tcp_recv_timestamp`, since Linux 4.13). A read that takes in two
//! ticks' frames at once (the bot was a tick late) stamps both with the later
//! arrival, as the bot's own clock would.

use nix::sys::socket::{recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags};
use nix::sys::time::TimeSpec;
use std::io::{self, IoSliceMut};
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

/// A connected TCP stream whose reads record the kernel's receive time.
///
/// The kernel turns receive stamps on for all sockets shortly after the
/// first socket asks (a deferred switch), so a run's first reads may carry
/// none: their reader falls back to its own clock.
#[derive(Debug)]
pub struct Stamped {
    tcp: TcpStream,
    /// Control-message room for one timestamp, kept between reads.
    cmsg: Vec<u8>,
    /// The kernel's receive time of the last read that carried one.
    received: Option<SystemTime>,
}

impl Stamped {
    /// Asks the kernel to stamp `tcp`'s reads.
    ///
    /// Errors: the socket option could not be set.
    pub fn new(tcp: TcpStream) -> io::Result<Stamped> {
        setsockopt(&tcp, sockopt::ReceiveTimestampns, &true).map_err(io::Error::from)?;
        Ok(Stamped { tcp, cmsg: nix::cmsg_space!(TimeSpec), received: None })
    }

    /// When the bytes of the last read reached the socket (wall clock); None
    /// when that read carried no stamp, or before any read.
    pub fn received(&self) -> Option<SystemTime> {
        self.received
    }

    /// The underlying stream.
    pub fn get_ref(&self) -> &TcpStream {
        &self.tcp
    }
}

/// One `recvmsg` into `buf`: bytes read and the stamp, if any. Control
/// data the kernel had to cut (`MSG_CTRUNC`: no room for the stamp) is read
/// as no stamp; the bytes are kept either way.
fn read_stamped(fd: i32, buf: &mut [u8], cmsg: &mut [u8]) -> io::Result<(usize, Option<SystemTime>)> {
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(fd, &mut iov, Some(cmsg), MsgFlags::empty()).map_err(io::Error::from)?;
    let mut stamp = None;
    if !msg.flags.contains(MsgFlags::MSG_CTRUNC) {
        for c in msg.cmsgs().into_iter().flatten() {
            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                let d = Duration::new(ts.tv_sec().max(0) as u64, ts.tv_nsec().clamp(0, 999_999_999) as u32);
                stamp = UNIX_EPOCH.checked_add(d);
            }
        }
    }
    Ok((msg.bytes, stamp))
}

impl AsyncRead for Stamped {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            ready!(this.tcp.poll_read_ready(cx))?;
            let fd = this.tcp.as_raw_fd();
            let cmsg = &mut this.cmsg;
            let room = buf.initialize_unfilled();
            let wanted = room.len();
            // A read shorter than the room drained the socket: it is handed
            // back as WouldBlock so that the readiness is cleared (as tokio's
            // own TcpStream does), which saves the next read's empty call.
            let mut drained = None;
            let read = this.tcp.try_io(Interest::READABLE, || {
                let (n, stamp) = read_stamped(fd, room, cmsg)?;
                if n > 0 && n < wanted {
                    drained = Some((n, stamp));
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                Ok((n, stamp))
            });
            let (n, stamp) = match (read, drained) {
                (_, Some(got)) | (Ok(got), None) => got,
                // Readiness was cleared: wait for the next.
                (Err(e), None) if e.kind() == io::ErrorKind::WouldBlock => continue,
                (Err(e), None) => return Poll::Ready(Err(e)),
            };
            if n > 0 {
                this.received = stamp;
            }
            buf.advance(n);
            return Poll::Ready(Ok(()));
        }
    }
}

impl AsyncWrite for Stamped {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_read_carries_the_time_the_bytes_reached_the_socket() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (client, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
        let mut stamped = Stamped::new(client.expect("connect")).expect("stamps");
        let (mut server, _) = accepted.expect("accept");
        assert_eq!(stamped.received(), None);
        // The kernel turns stamping on for every socket a moment after the
        // first asks (a deferred static key): until then reads carry none.
        let mut buf = [0u8; 16];
        for _ in 0..1000 {
            server.write_all(b"warm").await.expect("write");
            stamped.read_exact(&mut buf[..4]).await.expect("read");
            if stamped.received().is_some() {
                break;
            }
            tokio::task::yield_now().await;
        }
        let sent = SystemTime::now();
        server.write_all(b"one tick").await.expect("write");
        // The bytes wait in the socket while the reader is busy elsewhere.
        std::thread::sleep(Duration::from_millis(30));
        let n = stamped.read(&mut buf).await.expect("read");
        let read_at = SystemTime::now();
        assert_eq!(&buf[..n], b"one tick");
        let at = stamped.received().expect("a stamp");
        assert!(at >= sent - Duration::from_millis(1), "stamped before it was sent: {at:?} < {sent:?}");
        let waited = read_at.duration_since(at).expect("stamped before the read");
        assert!(waited >= Duration::from_millis(29), "the stamp is the arrival, not the read: {waited:?}");
        // Writes go through, and the peer's close reads as the end.
        stamped.write_all(b"back").await.expect("write");
        let mut back = [0u8; 4];
        server.read_exact(&mut back).await.expect("read back");
        assert_eq!(&back, b"back");
        drop(server);
        assert_eq!(stamped.read(&mut buf).await.expect("eof"), 0);
    }
}
