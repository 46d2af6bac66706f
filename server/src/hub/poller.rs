//! The hub's poller: one epoll instance (level-triggered) watching every
//! socket of the hub, itself watched by tokio, so the tick driver's loop
//! awaits one future for all of them. Each socket is filed under its slot in
//! the hub.

use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use tokio::io::unix::AsyncFd;

/// Most readiness events taken from the poller at once.
pub const READY_MAX: usize = 256;

/// Interest in bytes to read, and in the peer's FIN.
pub const READ: u32 = (EpollFlags::EPOLLIN.bits() | EpollFlags::EPOLLRDHUP.bits()) as u32;

/// Interest in room to write.
pub const WRITE: u32 = EpollFlags::EPOLLOUT.bits() as u32;

/// The epoll instance, for tokio to watch.
struct Instance(Epoll);

impl AsRawFd for Instance {
    fn as_raw_fd(&self) -> RawFd {
        self.0 .0.as_raw_fd()
    }
}

/// Every socket of the hub, watched for what the hub asks.
pub struct Poller(AsyncFd<Instance>);

/// Sockets found ready by one look at the poller.
pub struct Ready {
    events: [EpollEvent; READY_MAX],
    n: usize,
}

/// What one socket is ready for.
#[derive(Clone, Copy, Debug)]
pub struct Readiness {
    /// The slot the socket was filed under.
    pub slot: u32,
    flags: EpollFlags,
}

impl Readiness {
    /// Room to write, or an error or hang-up a write would report.
    pub fn writable(self) -> bool {
        self.flags.intersects(EpollFlags::EPOLLOUT | EpollFlags::EPOLLERR | EpollFlags::EPOLLHUP)
    }

    /// Bytes to read, the peer's FIN, or an error or hang-up a read would
    /// report.
    pub fn readable(self) -> bool {
        self.flags
            .intersects(EpollFlags::EPOLLIN | EpollFlags::EPOLLRDHUP | EpollFlags::EPOLLERR | EpollFlags::EPOLLHUP)
    }
}

impl Ready {
    /// Each ready socket, in the order the kernel gave them.
    pub fn iter(&self) -> impl Iterator<Item = Readiness> + '_ {
        self.events[..self.n].iter().map(|e| Readiness { slot: e.data() as u32, flags: e.events() })
    }
}

impl Poller {
    /// A poller registered with tokio's reactor.
    ///
    /// Errors: the epoll instance could not be made (out of descriptors) or
    /// registered (outside a tokio runtime).
    pub fn new() -> io::Result<Poller> {
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        register(Instance(epoll)).map(Poller)
    }

    /// Watches `socket`, filed under `slot`, for `interest` ([`READ`],
    /// [`WRITE`] or both).
    ///
    /// Errors: the kernel refused it.
    pub fn add(&self, socket: impl AsFd, slot: u32, interest: u32) -> io::Result<()> {
        let event = EpollEvent::new(EpollFlags::from_bits_retain(interest as i32), u64::from(slot));
        Ok(self.0.get_ref().0.add(socket, event)?)
    }

    /// Watches `socket`, filed under `slot`, for `interest` instead.
    ///
    /// Errors: the kernel refused it.
    pub fn modify(&self, socket: impl AsFd, slot: u32, interest: u32) -> io::Result<()> {
        let mut event = EpollEvent::new(EpollFlags::from_bits_retain(interest as i32), u64::from(slot));
        Ok(self.0.get_ref().0.modify(socket, &mut event)?)
    }

    /// Stops watching `socket` (closing it does too; this is for a socket
    /// another descriptor may still hold).
    pub fn delete(&self, socket: impl AsFd) {
        let _ = self.0.get_ref().0.delete(socket);
    }

    /// The sockets that are ready, once there are some. Cancel-safe: nothing
    /// is taken from the poller until it returns.
    pub async fn ready(&self) -> Ready {
        let mut ready = Ready { events: [EpollEvent::empty(); READY_MAX], n: 0 };
        loop {
            let mut guard = match self.0.readable().await {
                Ok(guard) => guard,
                Err(e) => {
                    tracing::error!(error = %e, "the hub's poller failed");
                    return std::future::pending().await;
                }
            };
            let waited = guard.try_io(|p| match p.get_ref().0.wait(&mut ready.events, EpollTimeout::ZERO) {
                Ok(0) => Err(io::ErrorKind::WouldBlock.into()),
                Ok(n) => Ok(n),
                Err(e) => Err(io::Error::from(e)),
            });
            match waited {
                Ok(Ok(n)) => {
                    ready.n = n;
                    return ready;
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "epoll_wait failed"),
                // Nothing ready after all: the readiness was cleared; wait again.
                Err(_) => {}
            }
        }
    }
}

/// Registers the epoll instance with tokio's reactor.
///
/// Errors: the reactor refused it (outside a runtime).
#[allow(unsafe_code)]
fn register(instance: Instance) -> io::Result<AsyncFd<Instance>> {
    // SAFETY: tokio asks that the descriptor stay open, and not be reused,
    // while it is registered. The `AsyncFd` owns the `Instance`, which owns
    // the epoll descriptor (an `OwnedFd`): it is closed only when the
    // `AsyncFd` is dropped, after tokio deregisters it.
    unsafe { AsyncFd::register_with_interest(instance, tokio::io::Interest::READABLE) }.map_err(|e| e.into_parts().1)
}
