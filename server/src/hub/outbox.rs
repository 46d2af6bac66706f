//! A socket's outbox: the write side of one admitted websocket and what is
//! waiting to be written on it. Owned by its connection in the hub
//! ([`super::Hub`]); nothing in it is shared, locked or awaited.
//!
//! Writes never wait: each is one non-blocking vectored `writev`. On a healthy
//! socket the kernel takes a tick's frames whole, straight from the shared
//! bytes (no reference count is even taken), so a tick leaves with one system
//! call. When the kernel buffer is full, what is left is kept (as reference
//! counts), the hub is told to watch the socket for room, and the frames of
//! later ticks are added to a [`Batch`]: every chat and presence frame, and
//! every view frame in order until there are too many (then they are dropped
//! and the socket resynced, see [`super::batch`]). A
//! socket that stays blocked for `outbound_ticks` ticks or for the write
//! timeout is too slow. The kept frames live in a box that exists only while
//! the socket is blocked or not yet welcomed: an idle healthy socket's outbox
//! is a few dozen bytes.

use super::batch::Batch;
use crate::clock::Instant;
use crate::close::CloseReason;
use crate::config::Writes;
use crate::metrics::Tally;
use crate::shard::{TickFrame, ViewFrames};
use crate::websocket::frame as ws_frame;
use bytes::Bytes;
use socket2::Socket;
use std::collections::VecDeque;
use std::io::{self, IoSlice, Write};
use std::time::Duration;

/// Most frames passed to one `writev` (the kernel takes up to 1,024); a longer
/// queue takes more calls. Enough for a tick's frames with area of interest:
/// the cells of a view from two or three shards, plus chat.
const MAX_SLICES: usize = 256;

/// Most chat, presence and control frames an outbox holds before its socket is
/// closed as too slow (they are never dropped for a socket that stays).
pub const MAX_PENDING_EVENTS: usize = 1024;

/// How a socket is allowed to fall behind before it is too slow.
#[derive(Clone, Copy, Debug)]
pub struct SlowLimits {
    /// Ticks in a row a socket may stay blocked.
    pub ticks: u32,
    /// Longest a socket may stay blocked.
    pub time: Duration,
}

/// Why an outbox takes no more frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stuck {
    /// The socket stayed blocked past the [`SlowLimits`] or queued too many
    /// events.
    TooSlow,
    /// The socket failed (reset, broken pipe).
    Failed,
}

impl Stuck {
    /// Why the socket closes: too slow, or the connection is gone.
    pub fn close_reason(self) -> CloseReason {
        match self {
            Stuck::TooSlow => CloseReason::TooSlow,
            Stuck::Failed => CloseReason::ClientClosed,
        }
    }
}

/// Where a write attempt left the outbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// Nothing is waiting.
    Done,
    /// The socket's buffer is full: watch it for room and call
    /// [`Outbox::on_writable`].
    Blocked,
    /// The outbox takes no more frames.
    Stuck(Stuck),
}

/// What a blocked (or not yet welcomed) socket keeps.
#[derive(Debug, Default)]
struct Backlog {
    /// Frames committed to the socket, in order; the first may be partly
    /// written.
    inflight: VecDeque<Bytes>,
    /// The first frame of `inflight` is partly written (the rest of it must
    /// follow before any other byte).
    head_started: bool,
    /// Frames of later ticks and control frames, not started yet.
    batch: Batch,
    /// When the socket's buffer first refused bytes.
    blocked_since: Option<Instant>,
    /// Ticks delivered while blocked.
    ticks_blocked: u32,
}

/// The write side of one websocket.
#[derive(Debug)]
pub struct Outbox {
    socket: Socket,
    /// Allocated only while something waits (blocked) or the welcome has not
    /// gone out yet (held).
    backlog: Option<Box<Backlog>>,
    /// The newest ping's pong, due with the next write (boxed: rare, and an
    /// idle socket's outbox stays small).
    pong: Option<Box<Bytes>>,
    /// Before the welcome, tick frames only collect.
    held: bool,
    /// No roster sent yet: the first one a tick offers is taken.
    want_roster: bool,
    /// A websocket ping is due with the next tick's write.
    ping_due: bool,
    /// The close began: nothing but the close frames follows.
    closed: bool,
    /// One vectored write a tick, or one system call a frame.
    writes: Writes,
    stuck: Option<Stuck>,
}

impl Outbox {
    /// An outbox over `socket` (non-blocking), held: tick frames wait for
    /// [`Outbox::open`].
    pub fn new(socket: Socket, writes: Writes) -> Outbox {
        Outbox {
            socket,
            backlog: Some(Box::default()),
            pong: None,
            held: true,
            want_roster: true,
            ping_due: false,
            closed: false,
            writes,
            stuck: None,
        }
    }

    /// The socket (for registration with the hub's poller).
    pub fn socket(&self) -> &Socket {
        &self.socket
    }

    /// True while the socket's buffer is full and frames wait.
    pub fn is_blocked(&self) -> bool {
        self.backlog.as_ref().is_some_and(|b| b.blocked_since.is_some())
    }

    /// Why the outbox takes no more frames, if it does not.
    pub fn stuck(&self) -> Option<Stuck> {
        self.stuck
    }

    /// True once after view frames were dropped while the socket was
    /// blocked: the core must send its view anew ([`crate::shard::Shard::resync`]).
    pub fn take_resync(&mut self) -> bool {
        self.backlog.as_mut().is_some_and(|b| b.batch.take_resync())
    }

    /// Asks for a websocket ping with the next tick's write.
    pub fn ping_next_tick(&mut self) {
        self.ping_due = true;
    }

    /// True when a tick with nothing for this socket (no event, no roster, no
    /// view frame) would still do something here: a ping or pong to write,
    /// frames kept (held for the welcome, or blocked), or a failure to
    /// report. False for a standing player's healthy socket, which the hub
    /// then does not visit on such a tick.
    pub fn needs_tick(&self) -> bool {
        self.stuck.is_some() || self.ping_due || self.pong.is_some() || self.backlog.is_some()
    }

    /// Answers the newest ping with the next tick's write (an older pong not
    /// yet written is replaced: RFC 6455 section 5.5.3 allows answering only
    /// the most recent ping).
    pub fn pong_next_tick(&mut self, pong: Bytes) {
        self.pong = Some(Box::new(pong));
    }

    /// The tick's part: writes this tick's frames (and any ping or pong due)
    /// with one non-blocking vectored write, or merges them into the backlog
    /// while the socket is blocked or the welcome has not gone out.
    pub fn deliver(
        &mut self,
        frame: &TickFrame,
        view: &ViewFrames,
        now: Instant,
        limits: SlowLimits,
        tally: &mut Tally,
    ) -> Written {
        if let Some(why) = self.stuck {
            return Written::Stuck(why);
        }
        if self.closed {
            return Written::Done;
        }
        let ping = std::mem::take(&mut self.ping_due).then(ws_frame::ping);
        let pong = if self.held { None } else { self.pong.take().map(|p| *p) };
        match self.backlog.as_mut() {
            Some(b) => {
                let want_roster = self.want_roster;
                b.batch.add(frame, view, want_roster);
                self.want_roster &= !b.batch.has_roster();
                b.batch.extend_events(ping.into_iter().chain(pong));
                if b.batch.events() > MAX_PENDING_EVENTS {
                    return self.stick(Stuck::TooSlow);
                }
                if self.held {
                    return Written::Done;
                }
                if let Some(since) = b.blocked_since {
                    b.ticks_blocked += 1;
                    if b.ticks_blocked > limits.ticks || now.saturating_duration_since(since) > limits.time {
                        return self.stick(Stuck::TooSlow);
                    }
                }
            }
            None => {
                let roster = if self.want_roster { frame.roster.as_ref() } else { None };
                self.want_roster &= roster.is_none();
                let frames = roster.into_iter().chain(&frame.events).chain(view.frames.iter());
                self.write_shared(frames.chain(ping.as_ref()).chain(pong.as_ref()), now, tally);
                if let Some(why) = self.stuck {
                    return Written::Stuck(why);
                }
            }
        }
        self.flush(now, tally)
    }

    /// Queues `frames` after everything already waiting and writes what the
    /// socket takes now.
    pub fn send(&mut self, frames: &[Bytes], now: Instant, tally: &mut Tally) -> Written {
        if let Some(why) = self.stuck {
            return Written::Stuck(why);
        }
        if self.closed {
            return Written::Done;
        }
        let b = self.backlog.get_or_insert_with(Box::default);
        if b.batch.events() + frames.len() > MAX_PENDING_EVENTS {
            return self.stick(Stuck::TooSlow);
        }
        b.batch.extend_events(frames.iter().cloned());
        if self.held {
            return Written::Done;
        }
        self.flush(now, tally)
    }

    /// Writes the welcome (if any: an echo's socket has none), then releases
    /// the frames gathered meanwhile (roster first).
    pub fn open(&mut self, welcome: Option<Bytes>, now: Instant, tally: &mut Tally) -> Written {
        if let Some(why) = self.stuck {
            return Written::Stuck(why);
        }
        self.held = false;
        let b = self.backlog.get_or_insert_with(Box::default);
        // After anything in flight: frames never interleave.
        b.inflight.extend(welcome);
        self.flush(now, tally)
    }

    /// The socket has room again: writes on.
    pub fn on_writable(&mut self, now: Instant, tally: &mut Tally) -> Written {
        if let Some(why) = self.stuck {
            return Written::Stuck(why);
        }
        self.flush(now, tally)
    }

    /// True when the socket has been blocked longer than `limits` allow at
    /// `now` (checked between ticks too, for a socket nothing is delivered to).
    pub fn too_slow(&self, now: Instant, limits: SlowLimits) -> bool {
        self.backlog
            .as_ref()
            .and_then(|b| b.blocked_since)
            .is_some_and(|since| now.saturating_duration_since(since) > limits.time)
    }

    /// Begins the close: nothing more is delivered, every frame not yet
    /// started is dropped (a frame cut mid-way is finished), and `frames` (an
    /// error and the close frame) are written; once they are all out, the
    /// write side is shut (FIN). Returns [`Written::Done`] once the FIN went.
    pub fn close(&mut self, frames: &[Bytes], now: Instant, tally: &mut Tally) -> Written {
        self.closed = true;
        self.held = false;
        self.stuck = None;
        self.pong = None;
        let b = self.backlog.get_or_insert_with(Box::default);
        let keep = usize::from(b.head_started);
        b.inflight.truncate(keep);
        b.batch = Batch::default();
        b.batch.extend_events(frames.iter().cloned());
        self.flush(now, tally)
    }

    /// Writes what waits until done or the socket refuses more; shuts the
    /// write side once a close's frames are out.
    fn flush(&mut self, now: Instant, tally: &mut Tally) -> Written {
        loop {
            let Some(b) = self.backlog.as_mut() else { return Written::Done };
            if b.inflight.is_empty() {
                if b.batch.is_empty() {
                    break;
                }
                let batch = b.batch.drain();
                b.inflight.extend(batch);
            }
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let n = match self.writes {
                Writes::Unbatched => 1,
                Writes::Batched => b.inflight.len().min(MAX_SLICES),
            };
            for (slot, f) in slices.iter_mut().zip(b.inflight.iter().take(n)) {
                *slot = IoSlice::new(f);
            }
            let mut written = match (&self.socket).write_vectored(&slices[..n]) {
                Ok(0) => return self.stick(Stuck::Failed),
                Ok(written) => written,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if b.blocked_since.is_none() {
                        tally.blocked += 1;
                        b.blocked_since = Some(now);
                    }
                    return Written::Blocked;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.stick(Stuck::Failed),
            };
            tally.writes += 1;
            tally.bytes += written as u64;
            while written > 0 {
                let Some(head) = b.inflight.front_mut() else { break };
                if written >= head.len() {
                    written -= head.len();
                    b.inflight.pop_front();
                    b.head_started = false;
                    tally.frames += 1;
                } else {
                    *head = head.slice(written..);
                    b.head_started = true;
                    written = 0;
                }
            }
        }
        if !self.held {
            // Nothing waits: the box goes (an idle socket keeps none).
            self.backlog = None;
        }
        if self.closed {
            let _ = self.socket.shutdown(std::net::Shutdown::Write);
        }
        Written::Done
    }

    /// Writes `frames` with one `writev` (up to [`MAX_SLICES`]) straight from
    /// the shared bytes; what the socket did not take is kept.
    fn write_shared<'a>(&mut self, frames: impl Iterator<Item = &'a Bytes> + Clone, now: Instant, tally: &mut Tally) {
        if self.writes == Writes::Unbatched {
            let b = self.backlog.get_or_insert_with(Box::default);
            b.inflight.extend(frames.cloned());
            return;
        }
        if frames.clone().next().is_none() {
            // Nothing this tick (a standing socket's usual tick): no slices
            // to set up, no call.
            return;
        }
        let mut slices = [IoSlice::new(&[]); MAX_SLICES];
        let mut n = 0;
        for (slot, f) in slices.iter_mut().zip(frames.clone()) {
            *slot = IoSlice::new(f);
            n += 1;
        }
        let mut written = match (&self.socket).write_vectored(&slices[..n]) {
            Ok(0) => {
                self.stick(Stuck::Failed);
                return;
            }
            Ok(written) => written,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => 0,
            Err(_) => {
                self.stick(Stuck::Failed);
                return;
            }
        };
        if written > 0 {
            tally.writes += 1;
            tally.bytes += written as u64;
        }
        let mut rest: Option<Box<Backlog>> = None;
        for f in frames {
            if written >= f.len() {
                written -= f.len();
                tally.frames += 1;
            } else {
                let b = rest.get_or_insert_with(Box::default);
                b.head_started |= written > 0 && b.inflight.is_empty();
                b.inflight.push_back(f.slice(written..));
                written = 0;
            }
        }
        if let Some(mut b) = rest {
            if b.blocked_since.is_none() {
                tally.blocked += 1;
                b.blocked_since = Some(now);
            }
            self.backlog = Some(b);
        }
    }

    fn stick(&mut self, why: Stuck) -> Written {
        self.stuck.get_or_insert(why);
        Written::Stuck(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::Tick;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};

    const LIMITS: SlowLimits = SlowLimits { ticks: 40, time: Duration::from_secs(2) };

    /// An outbox on one end of a loopback connection, and the other end.
    /// `sndbuf` (bytes) shrinks the outbox side's kernel send buffer.
    fn pair(sndbuf: Option<usize>) -> (Outbox, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let peer = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (server, _) = listener.accept().expect("accept");
        server.set_nodelay(true).expect("nodelay");
        server.set_nonblocking(true).expect("nonblocking");
        if let Some(bytes) = sndbuf {
            socket2::SockRef::from(&server).set_send_buffer_size(bytes).expect("sndbuf");
        }
        peer.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        (Outbox::new(Socket::from(server), Writes::Batched), peer)
    }

    fn frame(tick: u64, snapshot: &[u8], events: &[&[u8]], roster: Option<&[u8]>) -> TickFrame {
        TickFrame {
            tick: Tick(tick),
            events: events.iter().map(|e| Bytes::copy_from_slice(e)).collect(),
            roster: roster.map(Bytes::copy_from_slice),
            views: vec![ViewFrames { frames: vec![Bytes::copy_from_slice(snapshot)] }],
            ..TickFrame::default()
        }
    }

    fn deliver(o: &mut Outbox, f: &TickFrame, tally: &mut Tally) -> Written {
        o.deliver(f, &f.views[0], Instant::now(), LIMITS, tally)
    }

    fn read_exact(peer: &mut TcpStream, n: usize) -> Vec<u8> {
        let mut buf = vec![0; n];
        peer.read_exact(&mut buf).expect("read");
        buf
    }

    /// Reads until the outbox's FIN.
    fn read_to_end(mut peer: TcpStream) -> Vec<u8> {
        let mut all = Vec::new();
        peer.read_to_end(&mut all).expect("read");
        all
    }

    /// Lets the peer read while the outbox is flushed on "writable".
    fn drain_while_reading(o: &mut Outbox, mut peer: TcpStream, n: usize) -> Vec<u8> {
        let reader = std::thread::spawn(move || read_exact(&mut peer, n));
        let mut tally = Tally::default();
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while o.on_writable(Instant::now(), &mut tally) == Written::Blocked && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(1));
        }
        reader.join().expect("reader")
    }

    #[test]
    fn a_healthy_socket_gets_each_tick_in_one_write_after_the_welcome_and_keeps_no_backlog() {
        let (mut o, mut peer) = pair(None);
        let mut tally = Tally::default();
        assert_eq!(deliver(&mut o, &frame(1, b"S1", &[b"E1"], Some(b"R1")), &mut tally), Written::Done);
        assert_eq!(tally, Tally::default(), "nothing written before the welcome");
        assert_eq!(o.open(Some(Bytes::from_static(b"W")), Instant::now(), &mut tally), Written::Done);
        assert_eq!(read_exact(&mut peer, 7), b"WR1E1S1");
        assert!(o.backlog.is_none(), "an idle healthy socket keeps no box");
        let mut tick = Tally::default();
        assert_eq!(deliver(&mut o, &frame(2, b"S2", &[b"E2"], Some(b"R2")), &mut tick), Written::Done);
        assert_eq!(tick, Tally { frames: 2, bytes: 4, writes: 1, blocked: 0 }, "one write; no second roster");
        assert_eq!(read_exact(&mut peer, 4), b"E2S2");
    }

    #[test]
    fn a_blocked_socket_keeps_every_event_and_every_view_frame_in_order() {
        let (mut o, peer) = pair(Some(4096));
        let mut tally = Tally::default();
        o.open(Some(Bytes::from_static(b"W")), Instant::now(), &mut tally);
        let big = vec![b's'; 4 << 20];
        assert_eq!(deliver(&mut o, &frame(1, &big, &[], None), &mut tally), Written::Blocked);
        assert!(tally.blocked >= 1 && o.is_blocked());
        for t in 2..=5u8 {
            let (snap, event) = ([b'S', b'0' + t], [b'E', b'0' + t]);
            deliver(&mut o, &frame(u64::from(t), &snap, &[&event], None), &mut tally);
        }
        let got = drain_while_reading(&mut o, peer, 1 + big.len() + 4 * 2 + 4 * 2);
        assert_eq!(got[0], b'W');
        assert!(got[1..=4 << 20].iter().all(|&b| b == b's'), "the cut frame is finished first");
        assert_eq!(&got[1 + (4 << 20)..], b"E2E3E4E5S2S3S4S5");
        assert!(!o.is_blocked() && o.backlog.is_none());
    }

    #[test]
    fn a_socket_blocked_too_many_ticks_or_too_long_is_too_slow() {
        let (mut o, _peer) = pair(Some(4096));
        let mut tally = Tally::default();
        o.open(Some(Bytes::from_static(b"W")), Instant::now(), &mut tally);
        let big = vec![0u8; 256 * 1024];
        let limits = SlowLimits { ticks: 3, time: Duration::from_secs(60) };
        let mut taken = 0;
        while o.deliver(
            &frame(taken, &big, &[b"chat"], None),
            &ViewFrames::default(),
            Instant::now(),
            limits,
            &mut tally,
        ) != Written::Stuck(Stuck::TooSlow)
        {
            taken += 1;
            assert!(taken < 100, "never too slow");
        }
        let (mut o, _peer) = pair(Some(4096));
        o.open(Some(Bytes::from_static(b"W")), Instant::now(), &mut tally);
        deliver(&mut o, &frame(1, &big, &[], None), &mut tally);
        assert!(!o.too_slow(Instant::now(), LIMITS));
        assert!(o.too_slow(Instant::now() + Duration::from_secs(3), LIMITS), "blocked past the write timeout");
    }

    #[test]
    fn events_past_the_cap_make_the_outbox_too_slow() {
        let (mut o, _peer) = pair(Some(4096));
        let mut tally = Tally::default();
        let frames: Vec<Bytes> = (0..=MAX_PENDING_EVENTS).map(|_| Bytes::from_static(b"x")).collect();
        assert_eq!(o.send(&frames, Instant::now(), &mut tally), Written::Stuck(Stuck::TooSlow));
        assert_eq!(o.stuck(), Some(Stuck::TooSlow));
    }

    #[test]
    fn pings_and_the_newest_pong_ride_the_ticks_write() {
        let (mut o, mut peer) = pair(None);
        let mut tally = Tally::default();
        o.open(Some(Bytes::from_static(b"W")), Instant::now(), &mut tally);
        o.pong_next_tick(Bytes::from_static(b"P1"));
        o.pong_next_tick(Bytes::from_static(b"P2"));
        o.ping_next_tick();
        let mut tick = Tally::default();
        deliver(&mut o, &frame(1, b"S", &[], None), &mut tick);
        assert_eq!(tick.writes, 1);
        assert_eq!(read_exact(&mut peer, 1 + 1 + 2 + 2), [b"WS".as_slice(), &ws_frame::ping(), b"P2"].concat());
    }

    #[test]
    fn the_close_drops_frames_not_started_finishes_a_cut_one_then_shuts_the_write_side() {
        let (mut o, peer) = pair(Some(4096));
        let mut tally = Tally::default();
        o.open(Some(Bytes::from_static(b"W")), Instant::now(), &mut tally);
        let big = vec![b's'; 4 << 20];
        deliver(&mut o, &frame(1, &big, &[], None), &mut tally);
        deliver(&mut o, &frame(2, b"S2", &[b"E2"], None), &mut tally);
        let reader = std::thread::spawn(move || read_to_end(peer));
        let mut closed = o.close(&[Bytes::from_static(b"CLOSE")], Instant::now(), &mut tally);
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while closed == Written::Blocked && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(1));
            closed = o.on_writable(Instant::now(), &mut tally);
        }
        assert_eq!(closed, Written::Done);
        assert_eq!(deliver(&mut o, &frame(3, b"S3", &[], None), &mut tally), Written::Done, "nothing after the close");
        let got = reader.join().expect("reader");
        assert_eq!(got.len(), 1 + big.len() + 5);
        assert!(got.ends_with(b"sCLOSE"), "unsent tick 2 dropped, the close frame last, then FIN");
    }
}
