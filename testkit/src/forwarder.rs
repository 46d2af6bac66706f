//! A TCP forwarder on a loopback port: the "stable address" in front of a
//! Redis primary (a virtual IP, a DNS name, a TCP proxy), made for faults.
//! New connections go to the port it points at now ([`Forwarder::point_at`]);
//! connections already made stay where they are, as with a real proxy, until
//! [`Forwarder::cut`] closes them. Each connection is two copying threads;
//! everything stops when the forwarder is dropped.

use crate::port::free_port;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the accept thread and the tests share.
#[derive(Debug, Default)]
struct Shared {
    target: AtomicU16,
    stop: AtomicBool,
    refuse: AtomicBool,
    /// Both ends of every connection made, to cut them.
    open: Mutex<Vec<TcpStream>>,
}

/// A running forwarder.
#[derive(Debug)]
pub struct Forwarder {
    /// Its port on 127.0.0.1.
    pub port: u16,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Forwarder {
    /// A forwarder on a free port, to 127.0.0.1:`target`.
    ///
    /// Panics: no port can be bound.
    pub fn start(target: u16) -> Forwarder {
        let (listener, port) = (0..20)
            .find_map(|_| {
                let port = free_port();
                TcpListener::bind(("127.0.0.1", port)).ok().map(|l| (l, port))
            })
            .expect("a free port for the forwarder");
        let shared = Arc::new(Shared { target: AtomicU16::new(target), ..Shared::default() });
        let s = shared.clone();
        let accept = std::thread::spawn(move || accept_loop(&listener, &s));
        Forwarder { port, shared, accept: Some(accept) }
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// New connections go to 127.0.0.1:`target` from now on.
    pub fn point_at(&self, target: u16) {
        self.shared.target.store(target, Ordering::SeqCst);
    }

    /// While `refuse` is true, new connections are closed at once.
    pub fn refuse(&self, refuse: bool) {
        self.shared.refuse.store(refuse, Ordering::SeqCst);
    }

    /// Closes every connection made so far (both ends).
    pub fn cut(&self) {
        let open = std::mem::take(&mut *self.shared.open.lock().unwrap_or_else(|e| e.into_inner()));
        for s in open {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Connections made so far and not cut.
    pub fn connections(&self) -> usize {
        self.shared.open.lock().map_or(0, |o| o.len() / 2)
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&([127, 0, 0, 1], self.port).into(), Duration::from_secs(1));
        self.cut();
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        if shared.refuse.load(Ordering::SeqCst) {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        }
        let target = shared.target.load(Ordering::SeqCst);
        let Ok(server) = TcpStream::connect_timeout(&([127, 0, 0, 1], target).into(), Duration::from_secs(1)) else {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        };
        let _ = (client.set_nodelay(true), server.set_nodelay(true));
        if let (Ok(c2), Ok(s2), Ok(c3), Ok(s3)) =
            (client.try_clone(), server.try_clone(), client.try_clone(), server.try_clone())
        {
            if let Ok(mut open) = shared.open.lock() {
                open.push(c3);
                open.push(s3);
            }
            std::thread::spawn(move || pipe(client, s2));
            std::thread::spawn(move || pipe(server, c2));
        }
    }
}

/// Copies `from` to `to` until either ends, then closes both.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = (from.shutdown(Shutdown::Both), to.shutdown(Shutdown::Both));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_go_to_the_target_of_the_moment_and_cut_closes() {
        let a = TcpListener::bind("127.0.0.1:0").expect("bind");
        let b = TcpListener::bind("127.0.0.1:0").expect("bind");
        let (pa, pb) = (a.local_addr().expect("addr").port(), b.local_addr().expect("addr").port());
        let f = Forwarder::start(pa);
        let mut first = TcpStream::connect(("127.0.0.1", f.port)).expect("connect");
        first.write_all(b"hi").expect("write");
        let (mut at_a, _) = a.accept().expect("accept");
        let mut got = [0u8; 2];
        at_a.read_exact(&mut got).expect("read");
        assert_eq!(&got, b"hi");
        f.point_at(pb);
        let _second = TcpStream::connect(("127.0.0.1", f.port)).expect("connect");
        b.accept().expect("the new connection goes to the new target");
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while f.connections() < 2 && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(f.connections(), 2);
        f.cut();
        first.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        assert_eq!(first.read(&mut got).unwrap_or(0), 0, "cut connections are closed");
    }
}
