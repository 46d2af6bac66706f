//! A websocket test player that speaks the real protocol, driven by hand:
//! connect (to a shard, or through nginx over wss), say hello, send any
//! message (also ones the server must refuse), and read every frame as a
//! [`Frame`]. Every read is bounded by [`WAIT`].

use crate::frame::{Frame, Welcome};
use crate::shard::Shard;
use crate::WAIT;
use futures_util::{SinkExt, StreamExt};
use mino_loadgen::connection::{self, WsStream};
use mino_loadgen::event::PlayerPos;
use mino_loadgen::stamped::Stamped;
use mino_loadgen::Target;
use mino_protocol::client::{self, Capabilities};
use mino_protocol::held::Held;
use std::collections::VecDeque;
use std::future::Future;
use std::time::Instant;
use tokio_tungstenite::tungstenite::Message;

/// Where a player connects.
pub trait Endpoint {
    /// Opens a websocket to it (no Hello yet).
    ///
    /// Panics: no websocket within [`WAIT`].
    fn open(&self) -> impl Future<Output = WsStream> + Send;
}

impl Endpoint for Shard {
    /// The shard's own `/ws`, plain websocket. A 503 (not ready: a moment
    /// without Redis on a loaded machine, or draining) is tried again after
    /// its `Retry-After` (at most 1 s), as a page does, until [`WAIT`] runs out.
    async fn open(&self) -> WsStream {
        use tokio_tungstenite::tungstenite::Error;
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let attempt = tokio::time::timeout_at(deadline, async {
                let tcp = tokio::net::TcpStream::connect(self.addr).await.expect("connect");
                let stream = tokio_tungstenite::MaybeTlsStream::Plain(Stamped::new(tcp).expect("stamps"));
                tokio_tungstenite::client_async(self.ws_url(), stream).await
            });
            match attempt.await.expect("connect in time") {
                Ok((ws, _)) => return ws,
                Err(Error::Http(r)) if r.status() == 503 => {
                    let after = r.headers().get("retry-after").and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
                    let pause = std::time::Duration::from_secs(after.unwrap_or(1).min(1));
                    assert!(tokio::time::Instant::now() + pause < deadline, "503 until the wait ran out: {r:?}");
                    tokio::time::sleep(pause).await;
                }
                Err(e) => panic!("connect: {e}"),
            }
        }
    }
}

impl Endpoint for Target {
    /// The target's URL (`ws://`, or `wss://` through nginx with the target's
    /// TLS settings), connected the way loadgen's bots connect.
    async fn open(&self) -> WsStream {
        connection::connect(self, None, WAIT).await.unwrap_or_else(|e| panic!("connect {}: {e}", self.url))
    }
}

/// A websocket test player.
pub struct Player {
    /// The websocket, to read or write it directly.
    pub ws: WsStream,
    /// What the Welcome said, once welcomed.
    pub welcome: Option<Welcome>,
    /// The rest of a view frame's cells, for the next calls of [`Player::next`].
    queued: VecDeque<Frame>,
    /// What view frames told the player (from its Welcome on).
    held: Option<Held>,
    /// Bytes of the binary messages read so far (websocket payloads).
    received: u64,
    /// The sequence number of the last Input [`Player::input`] sent.
    seq: u32,
}

impl Player {
    /// Opens a websocket to `to` (no hello yet).
    ///
    /// Panics: no websocket within [`WAIT`].
    pub async fn connect(to: &impl Endpoint) -> Player {
        Player { ws: to.open().await, welcome: None, queued: VecDeque::new(), held: None, received: 0, seq: 0 }
    }

    /// Connects and joins as `name`.
    ///
    /// Panics: not welcomed.
    pub async fn join(to: &impl Endpoint, name: &str) -> Player {
        Player::hello(to, name, None).await.expect("welcomed")
    }

    /// Connects and says hello (with a resume ticket if given), taking full
    /// forms (every cell it is due, every time: what a test reading
    /// positions tick by tick wants); returns the welcomed player, or the
    /// frame that came instead of a Welcome and the close code.
    pub async fn hello(to: &impl Endpoint, name: &str, ticket: Option<&[u8]>) -> Result<Player, (Frame, Option<u16>)> {
        Player::hello_with(to, name, ticket, Capabilities::NONE).await
    }

    /// Connects to `shard` with a receive buffer of `rcvbuf` bytes (a
    /// socket that stops reading fills up at once) and joins as `name`
    /// asking for `capabilities`.
    ///
    /// Panics: not welcomed.
    pub async fn join_small(shard: &Shard, name: &str, capabilities: Capabilities, rcvbuf: u32) -> Player {
        let sock = tokio::net::TcpSocket::new_v4().expect("socket");
        sock.set_recv_buffer_size(rcvbuf).expect("rcvbuf");
        let tcp = sock.connect(shard.addr).await.expect("connect");
        let stream = tokio_tungstenite::MaybeTlsStream::Plain(Stamped::new(tcp).expect("stamps"));
        let (ws, _) = tokio::time::timeout(WAIT, tokio_tungstenite::client_async(shard.ws_url(), stream))
            .await
            .expect("upgrade in time")
            .expect("upgrade");
        let mut p = Player { ws, welcome: None, queued: VecDeque::new(), held: None, received: 0, seq: 0 };
        let version = mino_protocol::PROTOCOL_VERSION;
        p.send(client::encode_hello_with(version, name, None, None, capabilities)).await;
        match p.next().await {
            Frame::Welcome(w) => {
                p.held = Some(Held::for_place(&w.bounds, w.speed, w.tick_hz, (w.cell_size, w.view_radius), usize::MAX));
                p.welcome = Some(w);
                p
            }
            other => panic!("not welcomed: {other:?}"),
        }
    }

    /// Connects and joins as `name` taking deltas, as the browser does.
    ///
    /// Panics: not welcomed.
    pub async fn join_deltas(to: &impl Endpoint, name: &str) -> Player {
        Player::hello_with(to, name, None, Capabilities::DELTAS).await.expect("welcomed")
    }

    /// Connects and says hello asking for `capabilities`; see [`Player::hello`].
    pub async fn hello_with(
        to: &impl Endpoint,
        name: &str,
        ticket: Option<&[u8]>,
        capabilities: Capabilities,
    ) -> Result<Player, (Frame, Option<u16>)> {
        let mut p = Player::connect(to).await;
        let version = mino_protocol::PROTOCOL_VERSION;
        p.send(client::encode_hello_with(version, name, None, ticket, capabilities)).await;
        match p.next().await {
            Frame::Welcome(w) => {
                p.held = Some(Held::for_place(&w.bounds, w.speed, w.tick_hz, (w.cell_size, w.view_radius), usize::MAX));
                p.welcome = Some(w);
                Ok(p)
            }
            other => {
                let (close, _) = if matches!(other, Frame::Closed(_)) { (None, None) } else { p.closed().await };
                Err((other, close))
            }
        }
    }

    /// The resume ticket of the Welcome.
    ///
    /// Panics: not welcomed.
    pub fn ticket(&self) -> Vec<u8> {
        self.welcome.as_ref().expect("welcomed").ticket.clone()
    }

    /// The player id of the Welcome.
    ///
    /// Panics: not welcomed.
    pub fn id(&self) -> u32 {
        self.welcome.as_ref().expect("welcomed").player_id
    }

    /// Sends one binary message.
    ///
    /// Panics: the connection is closed.
    pub async fn send(&mut self, bytes: Vec<u8>) {
        self.ws.send(Message::Binary(bytes.into())).await.expect("send");
    }

    /// Sends an Input walking towards `(x, y)` (`(0, 0)`: stand still) with
    /// the next sequence number of this socket (the server ignores an Input
    /// not newer than the last it applied); returns that number.
    ///
    /// Panics: the connection is closed.
    pub async fn input(&mut self, x: f32, y: f32) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.send(client::encode_input(self.seq, x, y)).await;
        self.seq
    }

    /// Sends any websocket message; false when it could not (the server may
    /// already have closed).
    pub async fn try_send(&mut self, msg: Message) -> bool {
        self.ws.send(msg).await.is_ok()
    }

    /// The next frame (pings are answered by the websocket layer and skipped).
    ///
    /// Panics: nothing within [`WAIT`], or a text frame.
    pub async fn next(&mut self) -> Frame {
        if let Some(f) = self.queued.pop_front() {
            return f;
        }
        loop {
            let m = tokio::time::timeout(WAIT, self.ws.next()).await.expect("a frame in time");
            match m {
                Some(Ok(Message::Binary(b))) => {
                    self.received += b.len() as u64;
                    let frames = match self.held.as_mut() {
                        // A websocket's cells never expire (its Welcome says 0).
                        Some(held) => Frame::read(&b, held, self.welcome.as_ref(), 0),
                        None => Frame::decode_all(&b),
                    };
                    for f in frames {
                        if let Frame::Welcome(w) = &f {
                            // A Welcome on this socket (never, today) starts over.
                            self.held = Some(Held::for_place(
                                &w.bounds,
                                w.speed,
                                w.tick_hz,
                                (w.cell_size, w.view_radius),
                                usize::MAX,
                            ));
                        }
                        self.queued.push_back(f);
                    }
                    if let Some(f) = self.queued.pop_front() {
                        return f;
                    }
                }
                Some(Ok(Message::Close(c))) => return Frame::Closed(c.map(|c| u16::from(c.code))),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                Some(Ok(other)) => panic!("unexpected message {other:?}"),
                Some(Err(_)) | None => return Frame::Closed(None),
            }
        }
    }

    /// Bytes of the binary messages read so far (their payloads, without
    /// the websocket's 2-10 header bytes).
    pub fn received_bytes(&self) -> u64 {
        self.received
    }

    /// Skips frames until `pick` returns Some.
    ///
    /// Panics: not within [`WAIT`], or the websocket closes first.
    pub async fn until<T>(&mut self, mut pick: impl FnMut(&Frame) -> Option<T>) -> T {
        let deadline = Instant::now() + WAIT;
        loop {
            assert!(Instant::now() < deadline, "condition not met in time");
            let f = self.next().await;
            if let Some(t) = pick(&f) {
                return t;
            }
            if let Frame::Closed(code) = f {
                panic!("closed ({code:?}) while waiting");
            }
        }
    }

    /// Reads until the close; returns its code and the code of the Error sent
    /// before it.
    pub async fn closed(&mut self) -> (Option<u16>, Option<u16>) {
        let mut error = None;
        loop {
            match self.next().await {
                Frame::Error(code, _) => error = Some(code),
                Frame::Closed(code) => return (code, error),
                _ => {}
            }
        }
    }

    /// This player's position at a tick of its own shard: (tick, time
    /// ms since the Unix epoch, x, y in world units). The same frames, and
    /// the same fallback for a player nothing is sent of, as [`Self::own_entry`].
    ///
    /// Panics when the socket closes or nothing shows it within [`WAIT`].
    pub async fn own_position(&mut self) -> (u64, u64, f32, f32) {
        let (tick, time_ms, p) = self.own_shown().await;
        (tick, time_ms, p.x, p.y)
    }

    /// The next frame if one comes within `wait` (`None`: none did).
    pub async fn next_within(&mut self, wait: std::time::Duration) -> Option<Frame> {
        if let Some(f) = self.queued.pop_front() {
            return Some(f);
        }
        tokio::time::timeout(wait, self.next()).await.ok()
    }

    /// The newest own position among the frames already received (reads
    /// what is queued, waiting at most 5 ms for more): (tick, time ms, x, y).
    pub async fn newest_own_position(&mut self) -> (u64, u64, f32, f32) {
        let mut last = self.own_position().await;
        let (me, shard) = (self.id(), self.welcome.as_ref().map_or(0, |w| w.shard_id));
        let welcome = self.welcome.clone().expect("welcomed");
        while let Some(f) = self.next_within(std::time::Duration::from_millis(5)).await {
            match &f {
                Frame::Snapshot { players, shard: s, tick, time_ms, .. } if *s == shard => {
                    if let Some(p) = players.iter().find(|p| p.0 == me) {
                        last = (*tick, *time_ms, p.1, p.2);
                    }
                }
                Frame::Cell(c) if c.shard_id.0 == shard => {
                    if let Some(p) = welcome.players(c).into_iter().find(|p| p.0 == me) {
                        last = (u64::from(c.tick), welcome.unwrap_time(c.time_ms), p.1, p.2);
                    }
                }
                _ => {}
            }
        }
        last
    }

    /// What the player holds of view frames (from its Welcome on).
    pub fn held(&self) -> Option<&Held> {
        self.held.as_ref()
    }

    /// This player's entry at a tick of its own shard (the Welcome's): the
    /// next frame of that shard that shows it, or, when none shows it for
    /// two tick periods (protocol 4 sends a cell only when it
    /// changes: a player standing alone gets no frame), what it holds of
    /// itself at the shard's current tick (ticks are periods since the Unix
    /// epoch, on this machine's clock). Returns its tick and whole entry
    /// (position, moving, the echo of the last input applied).
    ///
    /// Panics when the socket closes or nothing shows it within [`WAIT`].
    pub async fn own_entry(&mut self) -> (u64, PlayerPos) {
        let (tick, _, p) = self.own_shown().await;
        (tick, p)
    }

    /// [`Self::own_entry`] with the tick's time: (tick, time ms, entry).
    async fn own_shown(&mut self) -> (u64, u64, PlayerPos) {
        let me = self.id();
        let welcome = self.welcome.clone().expect("welcomed");
        let hz = u64::from(welcome.tick_hz.max(1));
        let quiet = std::time::Duration::from_millis(2000 / hz);
        let mine = |shard: u32, entries: Vec<PlayerPos>| {
            entries.into_iter().find(|p| shard == welcome.shard_id && p.id.0 == me)
        };
        let deadline = Instant::now() + WAIT;
        // Frames of other cells may come every tick while none shows it.
        let mut quiet_until = Instant::now() + quiet;
        loop {
            assert!(Instant::now() < deadline, "no own entry in time");
            let wait = quiet_until.saturating_duration_since(Instant::now());
            let frame = if wait.is_zero() { None } else { self.next_within(wait).await };
            let shown = match frame {
                Some(Frame::Snapshot { shard, tick, time_ms, entries, .. }) => {
                    mine(shard, entries).map(|p| (tick, time_ms, p))
                }
                Some(Frame::Cell(c)) => mine(c.shard_id.0, welcome.cell_entries(&c))
                    .map(|p| (u64::from(c.tick), welcome.unwrap_time(c.time_ms), p)),
                Some(Frame::Closed(code)) => panic!("closed ({code:?}) while waiting for its own entry"),
                Some(_) => None,
                None => {
                    let held = self.held.as_ref().and_then(|h| {
                        h.cells()
                            .filter(|((shard, _), _)| *shard == welcome.shard_id)
                            .find_map(|(_, c)| c.entries.iter().find(|e| e.id.0 == me))
                    });
                    quiet_until = Instant::now() + quiet;
                    held.map(|e| {
                        let tick = mino_loadgen::client::wall_ms() as u64 * hz / 1000;
                        (tick, tick * 1000 / hz, PlayerPos::of(&e.to_wire(), &welcome.bounds))
                    })
                }
            };
            if let Some(found) = shown {
                return found;
            }
        }
    }

    /// Walks to within `near` world units of `to` and stops there; returns
    /// where it stood once its own entry showed it standing (world units).
    /// Steers from the newest position it is sent (frames that waited in
    /// the socket are skipped), at most ten times a second: well under the
    /// input rate limit. A stop lands a tick or two after it is sent, so it
    /// may stand up to two ticks' walk past `near`.
    ///
    /// Panics: not within `near` in 15 s, or the socket closes.
    pub async fn walk_to(&mut self, to: (f32, f32), near: f32) -> (f32, f32) {
        let deadline = Instant::now() + std::time::Duration::from_secs(15);
        let mut steered: Option<Instant> = None;
        loop {
            let (_, _, x, y) = self.newest_own_position().await;
            let (dx, dy) = (to.0 - x, to.1 - y);
            if dx.hypot(dy) < near {
                break;
            }
            assert!(Instant::now() < deadline, "player {} did not reach {to:?} in 15 s (at {x}, {y})", self.id());
            if steered.is_none_or(|t| t.elapsed() >= std::time::Duration::from_millis(100)) {
                self.input(dx, dy).await;
                steered = Some(Instant::now());
            }
        }
        self.input(0.0, 0.0).await;
        loop {
            let (_, p) = self.own_entry().await;
            if !p.moving {
                return (p.x, p.y);
            }
        }
    }

    /// The players of a cell: (id, x, y) in world units.
    pub fn players_of(&self, cell: &mino_loadgen::event::CellFrame) -> Vec<(u32, f32, f32)> {
        self.welcome.as_ref().expect("welcomed").players(cell)
    }
}
