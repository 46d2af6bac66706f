//! A socket's outbox: the write half of one websocket and what is waiting to be
//! written on it, shared by the shard's [`Fanout`](super::Fanout) (which hands
//! it every tick's frames) and the socket's session task (which sends the
//! welcome, pongs, moves and the close, and finishes writes the socket could
//! not take at once).
//!
//! Writes never wait here: each is one non-blocking vectored `writev`. On a
//! healthy socket the kernel takes a tick's frames whole, so the tick's frames
//! leave with one system call and no task is woken. When the kernel
//! buffer is full, what is left stays in the outbox, the session task is woken
//! to wait for the socket to drain, and the frames of later ticks are merged
//! into a [`Batch`]: a newer snapshot replaces an unsent older one, chat and
//! presence are all kept. A socket that stays blocked for `outbound_ticks`
//! ticks or for the write timeout is marked too slow and its session closes it.
//!
//! The outbox also carries the tick loop's word to the session (close because
//! the session was replaced, move because the shard drains): one slot and one
//! wake-up, where a channel per socket would cost about a kilobyte each.

use super::socket::WriteHalf;
use super::Batch;
use crate::clock::{self, Instant};
use crate::close::CloseReason;
use crate::metrics::Tally;
use crate::shard::{Control, TickFrame, ViewFrames};
use crate::ws_frame;
use bytes::Bytes;
use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Notify;

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

/// What a write attempt left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flushed {
    /// Everything queued is written.
    Done,
    /// The socket's buffer is full; the rest waits for it to drain.
    Blocked,
    /// The allowed number of system calls was used up; more is queued.
    More,
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

/// Why a write the session waited for did not complete.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The socket stayed blocked past its limits, or holds too many frames.
    #[error("socket too slow")]
    TooSlow,
    /// The outbox is closed, or its socket failed (reset, broken pipe).
    #[error("socket closed")]
    Closed,
    /// Waiting for the socket to become writable failed.
    #[error("socket: {0}")]
    Io(#[from] io::Error),
}

impl WriteError {
    /// Why the socket closes after this failure: a socket that stayed blocked
    /// is too slow; any other failure means the connection is gone.
    pub fn close_reason(&self) -> CloseReason {
        match self {
            WriteError::TooSlow => CloseReason::TooSlow,
            WriteError::Closed | WriteError::Io(_) => CloseReason::ClientClosed,
        }
    }
}

impl From<Stuck> for WriteError {
    fn from(why: Stuck) -> WriteError {
        match why {
            Stuck::TooSlow => WriteError::TooSlow,
            Stuck::Failed => WriteError::Closed,
        }
    }
}

#[derive(Debug)]
struct State {
    /// Frames committed to the socket, in order; the first may be partly written.
    inflight: VecDeque<Bytes>,
    /// The first frame of `inflight` is partly written (the rest of it must
    /// follow before any other byte).
    head_started: bool,
    /// Frames of later ticks and control frames, not started yet.
    batch: Batch,
    /// Before the welcome is written, tick frames only collect in `batch`.
    held: bool,
    /// No roster sent yet: the first one a tick offers is taken.
    want_roster: bool,
    /// The session asked for a websocket ping with the next tick's write.
    ping_due: bool,
    /// The pong answering the newest ping not yet answered, for the next
    /// tick's write (RFC 6455 section 5.5.3 allows answering only the newest).
    pong_due: Option<Bytes>,
    /// Set when the close begins: nothing but the close frames follows.
    closed: bool,
    /// When the socket's buffer first refused bytes (cleared once drained).
    blocked_since: Option<Instant>,
    /// Ticks delivered while blocked.
    ticks_blocked: u32,
    /// Why the outbox stopped, if it did.
    stuck: Option<Stuck>,
    /// What the tick loop told the session (the first word stands).
    control: Option<Control>,
}

/// The write side of one websocket. Shared (`Arc`) by the fan-out and the
/// session; a short mutex orders their writes and is never held across an
/// `await`.
#[derive(Debug)]
pub struct Outbox {
    socket: WriteHalf,
    state: Mutex<State>,
    /// Wakes the session when a write was cut short or the outbox got stuck.
    wake: Notify,
    /// Wakes the session when the tick loop tells it something.
    told: Notify,
    limits: SlowLimits,
    /// Benchmark control: one system call per frame instead of one per tick.
    unbatched: bool,
}

impl Outbox {
    /// An outbox over `socket`, held (tick frames wait for [`Outbox::open`]).
    pub fn new(socket: impl Into<WriteHalf>, limits: SlowLimits, unbatched: bool) -> Outbox {
        let state = State {
            inflight: VecDeque::new(),
            head_started: false,
            batch: Batch::default(),
            held: true,
            want_roster: true,
            ping_due: false,
            pong_due: None,
            closed: false,
            blocked_since: None,
            ticks_blocked: 0,
            stuck: None,
            control: None,
        };
        Outbox {
            socket: socket.into(),
            state: Mutex::new(state),
            wake: Notify::new(),
            told: Notify::new(),
            limits,
            unbatched,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves consistent data (plain queues).
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The fan-out's part, once a tick: writes this tick's frames (plus a ping
    /// when due) with one non-blocking vectored write, or merges them into the
    /// batch while the socket is blocked or the welcome not yet written.
    ///
    /// Returns false once the outbox takes no more frames (closed or stuck), so
    /// the fan-out forgets it.
    pub fn deliver(&self, frame: &TickFrame, view: &ViewFrames, now: Instant, tally: &mut Tally) -> bool {
        let mut st = self.lock();
        if st.closed || st.stuck.is_some() {
            return false;
        }
        let ping = std::mem::take(&mut st.ping_due).then(ws_frame::ping);
        let pong = st.pong_due.take();
        if st.held || st.blocked_since.is_some() || !st.batch.is_empty() {
            let want_roster = st.want_roster;
            st.batch.add(frame, view, want_roster);
            st.want_roster &= !st.batch.has_roster();
            for control in ping.into_iter().chain(pong) {
                st.batch.push_event(control);
            }
            if st.batch.events() > MAX_PENDING_EVENTS {
                self.stick(&mut st, Stuck::TooSlow);
                return false;
            }
            if st.held {
                return true;
            }
            if let Some(since) = st.blocked_since {
                st.ticks_blocked += 1;
                if st.ticks_blocked > self.limits.ticks || now.duration_since(since) > self.limits.time {
                    self.stick(&mut st, Stuck::TooSlow);
                    return false;
                }
                // The session waits for the socket to drain; try once anyway,
                // so the socket is not idle while its session awaits something
                // else.
            }
        } else {
            // Healthy: one write straight from the shared frames; only what
            // the socket could not take is kept (as reference counts).
            let roster = if st.want_roster { frame.roster.as_ref() } else { None };
            st.want_roster &= roster.is_none();
            let frames = roster.into_iter().chain(&frame.events).chain(view.frames.iter().map(|(_, b)| b));
            self.write_shared(&mut st, frames.chain(ping.as_ref()).chain(pong.as_ref()), now, tally);
        }
        let _ = self.flush_locked(&mut st, now, tally, usize::MAX);
        st.stuck.is_none()
    }

    /// Writes `frames` with one `writev` (up to [`MAX_SLICES`] of them) and
    /// queues what was not written, so the shared frames are only referenced
    /// (one reference count each) when the socket cannot take them at once.
    fn write_shared<'a>(
        &self,
        st: &mut State,
        frames: impl Iterator<Item = &'a Bytes> + Clone,
        now: Instant,
        tally: &mut Tally,
    ) {
        if self.unbatched {
            st.inflight.extend(frames.cloned());
            return;
        }
        let mut slices = [IoSlice::new(&[]); MAX_SLICES];
        let mut n = 0;
        for (slot, f) in slices.iter_mut().zip(frames.clone()) {
            *slot = IoSlice::new(f);
            n += 1;
        }
        if n == 0 {
            return;
        }
        let mut written = match self.socket.try_write_vectored(&slices[..n]) {
            Ok(0) => return self.stick(st, Stuck::Failed),
            Ok(written) => written,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.blocked(st, now, tally);
                0
            }
            Err(_) => return self.stick(st, Stuck::Failed),
        };
        if written > 0 {
            tally.writes += 1;
            tally.bytes += written as u64;
        }
        for f in frames {
            if written >= f.len() {
                written -= f.len();
                tally.frames += 1;
            } else {
                st.head_started |= written > 0 && st.inflight.is_empty();
                st.inflight.push_back(f.slice(written..));
                written = 0;
            }
        }
    }

    /// Writes what is queued until done, the socket refuses more, or `calls`
    /// system calls were made (so a long backlog does not hold the lock).
    fn flush_locked(&self, st: &mut State, now: Instant, tally: &mut Tally, calls: usize) -> Flushed {
        for _ in 0..calls {
            if st.inflight.is_empty() {
                if st.batch.is_empty() {
                    break;
                }
                st.inflight.extend(st.batch.drain());
            }
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let n = if self.unbatched { 1 } else { st.inflight.len().min(MAX_SLICES) };
            for (slot, f) in slices.iter_mut().zip(st.inflight.iter().take(n)) {
                *slot = IoSlice::new(f);
            }
            let mut written = match self.socket.try_write_vectored(&slices[..n]) {
                Ok(0) => {
                    self.stick(st, Stuck::Failed);
                    return Flushed::Blocked;
                }
                Ok(written) => written,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.blocked(st, now, tally);
                    return Flushed::Blocked;
                }
                Err(_) => {
                    self.stick(st, Stuck::Failed);
                    return Flushed::Blocked;
                }
            };
            tally.writes += 1;
            tally.bytes += written as u64;
            while written > 0 {
                let Some(head) = st.inflight.front_mut() else { break };
                if written >= head.len() {
                    written -= head.len();
                    st.inflight.pop_front();
                    st.head_started = false;
                    tally.frames += 1;
                } else {
                    *head = head.slice(written..);
                    st.head_started = true;
                    written = 0;
                }
            }
        }
        if st.inflight.is_empty() && st.batch.is_empty() {
            st.blocked_since = None;
            st.ticks_blocked = 0;
            return Flushed::Done;
        }
        Flushed::More
    }

    /// Notes that the socket refused bytes and, when it just became blocked,
    /// counts it and wakes the session to wait for it (once: retries while
    /// blocked neither count nor wake it again).
    fn blocked(&self, st: &mut State, now: Instant, tally: &mut Tally) {
        if st.blocked_since.is_none() {
            tally.blocked += 1;
            st.blocked_since = Some(now);
            self.wake.notify_one();
        }
    }

    fn stick(&self, st: &mut State, why: Stuck) {
        st.stuck.get_or_insert(why);
        self.wake.notify_one();
    }

    /// Waits until the fan-out needs the session: a write was cut short or the
    /// outbox got stuck. Cancel-safe.
    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    /// The tick loop's part: tells the session to close or to move. The first
    /// word stands; later ones are dropped (the session ends on the first).
    pub fn tell(&self, control: Control) {
        self.lock().control.get_or_insert(control);
        self.told.notify_one();
    }

    /// Waits until the tick loop told the session something, and takes it.
    /// Cancel-safe.
    pub async fn told(&self) -> Control {
        loop {
            if let Some(control) = self.lock().control.take() {
                return control;
            }
            self.told.notified().await;
        }
    }

    /// Marks the outbox closed without writing anything more (its session is
    /// gone without closing it, e.g. after a panic): the fan-out forgets it.
    pub fn abandon(&self) {
        self.lock().closed = true;
    }

    /// Why the outbox takes no more frames, if it does not.
    pub fn stuck(&self) -> Option<Stuck> {
        self.lock().stuck
    }

    /// Asks for a websocket ping with the next tick's write.
    pub fn ping_next_tick(&self) {
        self.lock().ping_due = true;
    }

    /// Queues `pong` (a framed pong, see [`ws_frame::pong`]) for the next
    /// tick's write, replacing a pong still waiting there: however many pings
    /// arrive within a tick, the socket's one write of the tick answers the
    /// newest.
    pub fn pong_next_tick(&self, pong: Bytes) {
        self.lock().pong_due = Some(pong);
    }

    /// Queues `frames` after everything already queued and writes until done,
    /// waiting for the socket to drain at most `limit`.
    ///
    /// Errors: [`WriteError::TooSlow`] past `limit` or when the outbox is (or
    /// becomes) too slow, including when it holds [`MAX_PENDING_EVENTS`]
    /// frames already; [`WriteError::Closed`] when the socket failed or the
    /// outbox is closed; or the socket's error. Nothing is queued when it
    /// fails at once.
    pub async fn send(&self, frames: &[Bytes], limit: Duration, tally: &mut Tally) -> Result<(), WriteError> {
        {
            let mut st = self.lock();
            if st.closed {
                return Err(WriteError::Closed);
            }
            if let Some(why) = st.stuck {
                return Err(why.into());
            }
            if st.batch.events() + frames.len() > MAX_PENDING_EVENTS {
                self.stick(&mut st, Stuck::TooSlow);
                return Err(Stuck::TooSlow.into());
            }
            for f in frames {
                st.batch.push_event(f.clone());
            }
        }
        self.drain(limit, tally).await
    }

    /// Writes the welcome, then releases the tick frames gathered meanwhile
    /// (roster first), waiting at most `limit` for the socket.
    ///
    /// Errors: as [`Outbox::send`].
    pub async fn open(&self, welcome: Bytes, limit: Duration, tally: &mut Tally) -> Result<(), WriteError> {
        {
            let mut st = self.lock();
            if let Some(why) = st.stuck {
                return Err(why.into());
            }
            // After anything in flight (a control frame sent before the Hello
            // may be partly written): frames never interleave.
            st.inflight.push_back(welcome);
            st.held = false;
        }
        self.drain(limit, tally).await
    }

    /// Writes what is queued, waiting for the socket to drain, for at most
    /// `limit`.
    ///
    /// Errors: as [`Outbox::send`].
    pub async fn drain(&self, limit: Duration, tally: &mut Tally) -> Result<(), WriteError> {
        let deadline = clock::now() + limit;
        loop {
            let flushed = {
                let mut st = self.lock();
                if let Some(why) = st.stuck {
                    return Err(why.into());
                }
                // One system call a lock hold: the fan-out never waits long.
                self.flush_locked(&mut st, clock::now(), tally, 1)
            };
            match flushed {
                Flushed::Done => return Ok(()),
                Flushed::More => continue,
                Flushed::Blocked => {}
            }
            // Also woken when the fan-out finds the socket too slow.
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => {
                    self.stick(&mut self.lock(), Stuck::TooSlow);
                    return Err(WriteError::TooSlow);
                }
                ready = self.socket.writable() => ready?,
                () = self.wake.notified() => {}
            }
        }
    }

    /// Begins the close: the fan-out stops delivering, every frame not yet
    /// started is dropped (a frame cut mid-way is finished), and `frames` (an
    /// error and the close frame) are written, waiting at most `limit`; then
    /// the write side is shut (FIN).
    pub async fn close(&self, frames: &[Bytes], limit: Duration, tally: &mut Tally) {
        {
            let mut st = self.lock();
            st.closed = true;
            st.held = false;
            st.batch = Batch::default();
            let keep = usize::from(st.head_started);
            st.inflight.truncate(keep);
            st.stuck = None;
            for f in frames {
                st.batch.push_event(f.clone());
            }
        }
        if self.drain(limit, tally).await.is_ok() {
            self.socket.shutdown_write();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::grid::CellId;
    use crate::shard::FrameKey;
    use mino_protocol::{ShardId, Tick};
    use tokio::io::AsyncReadExt;
    use tokio::net::{TcpListener, TcpStream};

    const LIMITS: SlowLimits = SlowLimits { ticks: 40, time: Duration::from_secs(2) };

    /// An outbox on one end of a loopback connection, and the other end.
    /// `sndbuf` (bytes) shrinks the outbox side's kernel send buffer.
    async fn pair(sndbuf: Option<usize>, limits: SlowLimits) -> (Outbox, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (client, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
        let server = accepted.expect("accept").0;
        server.set_nodelay(true).expect("nodelay");
        if let Some(bytes) = sndbuf {
            // The peer keeps its default receive buffer: a tiny one stalls
            // loopback TCP on zero-window probes once it is read again.
            socket2::SockRef::from(&server).set_send_buffer_size(bytes).expect("sndbuf");
        }
        let (_read, write) = server.into_split();
        (Outbox::new(write, limits, false), client.expect("connect"))
    }

    /// One tick's frames: the shared part and the one view a socket gets.
    fn frame(tick: u64, snapshot: &[u8], events: &[&[u8]], roster: Option<&[u8]>) -> TickFrame {
        let key = FrameKey { shard: ShardId(1), cell: CellId(0) };
        TickFrame {
            tick: Tick(tick),
            events: events.iter().map(|e| Bytes::copy_from_slice(e)).collect(),
            roster: roster.map(Bytes::copy_from_slice),
            views: vec![ViewFrames { frames: vec![(key, Bytes::copy_from_slice(snapshot))] }],
        }
    }

    /// Delivers a tick as the fan-out does.
    fn deliver(outbox: &Outbox, frame: &TickFrame, tally: &mut Tally) -> bool {
        outbox.deliver(frame, &frame.views[0], clock::now(), tally)
    }

    /// Everything the peer receives until the outbox's FIN, within 5 s.
    async fn read_to_end(mut peer: TcpStream) -> Vec<u8> {
        let mut all = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), peer.read_to_end(&mut all)).await.expect("eof").expect("read");
        all
    }

    async fn read_exact(peer: &mut TcpStream, n: usize) -> Vec<u8> {
        let mut buf = vec![0; n];
        tokio::time::timeout(Duration::from_secs(5), peer.read_exact(&mut buf)).await.expect("in time").expect("read");
        buf
    }

    #[tokio::test]
    async fn a_healthy_socket_gets_each_tick_in_one_write_after_the_welcome() {
        let (outbox, mut peer) = pair(None, LIMITS).await;
        let mut tally = Tally::default();
        // Held: the tick before the welcome is kept (roster included).
        assert!(deliver(&outbox, &frame(1, b"S1", &[b"E1"], Some(b"R1")), &mut tally));
        assert_eq!(tally, Tally::default(), "nothing written before the welcome");
        outbox.open(Bytes::from_static(b"W"), Duration::from_secs(1), &mut tally).await.expect("open");
        assert_eq!(read_exact(&mut peer, 7).await, b"WR1E1S1");
        let mut tick = Tally::default();
        assert!(deliver(&outbox, &frame(2, b"S2", &[b"E2"], Some(b"R2")), &mut tick));
        assert_eq!(tick, Tally { frames: 2, bytes: 4, writes: 1, blocked: 0 }, "one write; no second roster");
        assert_eq!(read_exact(&mut peer, 4).await, b"E2S2");
    }

    #[tokio::test]
    async fn pongs_ride_the_ticks_write_and_only_the_newest_is_sent() {
        let (outbox, mut peer) = pair(None, LIMITS).await;
        let mut tally = Tally::default();
        outbox.open(Bytes::from_static(b"W"), Duration::from_secs(1), &mut tally).await.expect("open");
        assert_eq!(read_exact(&mut peer, 1).await, b"W");
        for payload in [&b"p1"[..], b"p2", b"p3"] {
            outbox.pong_next_tick(ws_frame::pong(payload));
        }
        outbox.ping_next_tick();
        let mut tick = Tally::default();
        assert!(deliver(&outbox, &frame(1, b"S1", &[], None), &mut tick));
        assert_eq!(tick.writes, 1, "one write for the tick, its ping and its pong");
        let pong = ws_frame::pong(b"p3");
        let want: Vec<u8> = [&b"S1"[..], &ws_frame::ping(), &pong].concat();
        assert_eq!(read_exact(&mut peer, want.len()).await, want);
        let mut next = Tally::default();
        assert!(deliver(&outbox, &frame(2, b"S2", &[], None), &mut next));
        assert_eq!(read_exact(&mut peer, 2).await, b"S2", "each ping answered once");
    }

    #[tokio::test]
    async fn a_blocked_socket_keeps_every_event_but_only_the_newest_snapshot() {
        let (outbox, mut peer) = pair(Some(4096), LIMITS).await;
        let mut tally = Tally::default();
        outbox.open(Bytes::from_static(b"W"), Duration::from_secs(1), &mut tally).await.expect("open");
        let big = vec![b's'; 4 << 20];
        assert!(deliver(&outbox, &frame(1, &big, &[], None), &mut tally));
        assert!(tally.blocked >= 1, "4 MiB does not fit a 4 KiB buffer");
        for t in 2..=5u8 {
            let snap = [b'S', b'0' + t];
            let event = [b'E', b'0' + t];
            assert!(deliver(&outbox, &frame(u64::from(t), &snap, &[&event], None), &mut tally));
        }
        // The session's part: wait for the socket while the peer reads.
        let reader = tokio::spawn(async move { read_exact(&mut peer, 1 + big.len() + 4 * 2 + 2).await });
        outbox.drain(Duration::from_secs(5), &mut tally).await.expect("drained");
        let got = reader.await.expect("reader");
        assert_eq!(got[0], b'W');
        assert!(got[1..=4 << 20].iter().all(|&b| b == b's'), "the cut frame is finished first");
        assert_eq!(&got[1 + (4 << 20)..], b"E2E3E4E5S5");
    }

    #[tokio::test]
    async fn a_socket_blocked_too_many_ticks_is_too_slow() {
        let limits = SlowLimits { ticks: 3, time: Duration::from_secs(60) };
        let (outbox, _peer) = pair(Some(4096), limits).await;
        let mut tally = Tally::default();
        outbox.open(Bytes::from_static(b"W"), Duration::from_secs(1), &mut tally).await.expect("open");
        let big = vec![0u8; 256 * 1024];
        let mut taken = 0;
        while deliver(&outbox, &frame(taken, &big, &[b"chat"], None), &mut tally) {
            taken += 1;
            assert!(taken < 100, "never marked too slow");
        }
        assert_eq!(outbox.stuck(), Some(Stuck::TooSlow));
        let err = outbox.drain(Duration::from_millis(10), &mut tally).await.expect_err("stuck");
        assert!(matches!(err, WriteError::TooSlow), "{err:?}");
    }

    #[tokio::test]
    async fn the_tick_loops_first_word_reaches_the_session() {
        let (outbox, _peer) = pair(None, LIMITS).await;
        let outbox = std::sync::Arc::new(outbox);
        let waiting = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.told().await }
        });
        tokio::task::yield_now().await;
        outbox.tell(Control::Close(CloseReason::SessionReplaced));
        outbox.tell(Control::Close(CloseReason::Shutdown));
        let told = tokio::time::timeout(Duration::from_secs(1), waiting).await.expect("woken").expect("task");
        assert!(matches!(told, Control::Close(CloseReason::SessionReplaced)), "{told:?}");
        // Told before anyone waits: kept for the next wait.
        outbox.tell(Control::Close(CloseReason::Moved));
        let later = tokio::time::timeout(Duration::from_secs(1), outbox.told()).await.expect("kept");
        assert!(matches!(later, Control::Close(CloseReason::Moved)), "{later:?}");
    }

    #[tokio::test]
    async fn a_stuck_outbox_queues_nothing_more() {
        let limits = SlowLimits { ticks: 40, time: Duration::from_millis(100) };
        let (outbox, _peer) = pair(Some(4096), limits).await;
        let mut tally = Tally::default();
        let big = Bytes::from(vec![0u8; 256 * 1024]);
        let err = outbox.send(&[big], Duration::from_millis(100), &mut tally).await.expect_err("never read");
        assert!(matches!(err, WriteError::TooSlow), "{err:?}");
        for _ in 0..10_000 {
            let err = outbox.send(&[Bytes::from_static(b"pong")], Duration::from_secs(1), &mut tally).await;
            assert!(matches!(err, Err(WriteError::TooSlow)), "{err:?}");
        }
        assert_eq!(outbox.lock().batch.events(), 0, "nothing queued on a stuck outbox");
    }

    #[tokio::test]
    async fn control_frames_past_the_cap_make_the_outbox_too_slow() {
        let (outbox, _peer) = pair(Some(4096), LIMITS).await;
        let mut tally = Tally::default();
        let big = vec![0u8; 256 * 1024];
        assert!(deliver(&outbox, &frame(1, &big, &[], None), &mut tally), "held");
        let frames: Vec<Bytes> = (0..MAX_PENDING_EVENTS).map(|_| Bytes::from_static(b"x")).collect();
        let queued = outbox.send(&frames, Duration::from_millis(10), &mut tally).await;
        assert!(queued.is_ok() || outbox.stuck().is_some());
        let err = outbox.send(&[Bytes::from_static(b"x")], Duration::from_secs(1), &mut tally).await;
        assert!(matches!(err, Err(WriteError::TooSlow)), "over the cap: {err:?}");
        assert_eq!(outbox.stuck(), Some(Stuck::TooSlow));
    }

    #[tokio::test]
    async fn the_welcome_waits_for_a_control_frame_cut_mid_way() {
        let (outbox, mut peer) = pair(Some(4096), LIMITS).await;
        let mut tally = Tally::default();
        let pong = Bytes::from(vec![b'p'; 4 << 20]);
        let cut = outbox.send(&[pong], Duration::from_millis(50), &mut tally).await;
        assert!(cut.is_err() && outbox.lock().head_started, "the pong is cut mid-way");
        outbox.lock().stuck = None; // as if the peer had read in time
        let reader = tokio::spawn(async move { read_exact(&mut peer, (4 << 20) + 1).await });
        outbox.open(Bytes::from_static(b"W"), Duration::from_secs(5), &mut tally).await.expect("open");
        let got = reader.await.expect("reader");
        assert!(got[..4 << 20].iter().all(|&b| b == b'p') && got[4 << 20] == b'W', "pong whole, then welcome");
    }

    #[tokio::test]
    async fn the_close_drops_committed_frames_not_yet_started() {
        let (outbox, peer) = pair(Some(4096), LIMITS).await;
        let mut tally = Tally::default();
        outbox.open(Bytes::from_static(b"W"), Duration::from_secs(1), &mut tally).await.expect("open");
        // One tick whose first frame is cut: the frames after it are committed
        // to the outbox but not started.
        let big = vec![b's'; 4 << 20];
        let mut tick = frame(1, b"S1", &[b"E1"], None);
        tick.events.insert(0, Bytes::from(big.clone()));
        assert!(deliver(&outbox, &tick, &mut tally));
        assert!(outbox.lock().inflight.len() >= 2, "cut frame and the rest in flight");
        let reader = tokio::spawn(read_to_end(peer));
        outbox.close(&[Bytes::from_static(b"CLOSE")], Duration::from_secs(5), &mut tally).await;
        drop(outbox);
        let got = reader.await.expect("reader");
        assert_eq!(got.len(), 1 + big.len() + 5, "E1 and S1 dropped");
        assert!(got.ends_with(b"sCLOSE"));
    }

    #[tokio::test]
    async fn the_close_follows_a_cut_frame_whole_and_drops_unsent_ticks() {
        let (outbox, peer) = pair(Some(4096), LIMITS).await;
        let mut tally = Tally::default();
        outbox.open(Bytes::from_static(b"W"), Duration::from_secs(1), &mut tally).await.expect("open");
        let big = vec![b's'; 4 << 20];
        assert!(deliver(&outbox, &frame(1, &big, &[], None), &mut tally));
        assert!(deliver(&outbox, &frame(2, b"S2", &[b"E2"], None), &mut tally));
        let reader = tokio::spawn(read_to_end(peer));
        outbox.close(&[Bytes::from_static(b"CLOSE")], Duration::from_secs(5), &mut tally).await;
        assert!(!deliver(&outbox, &frame(3, b"S3", &[], None), &mut tally), "closed");
        drop(outbox);
        let got = reader.await.expect("reader");
        assert_eq!(got.len(), 1 + big.len() + 5);
        assert!(got.ends_with(b"sCLOSE"), "unsent tick 2 dropped, the close frame last");
    }
}
