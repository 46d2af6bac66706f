//! A websocket test player that speaks the real protocol, driven by hand:
//! connect (to a shard, or through nginx over wss), say hello, send any
//! message (also ones the server must refuse), and read every frame as a
//! [`Frame`]. Every read is bounded by [`WAIT`].

use crate::frame::{Frame, Welcome};
use crate::shard::Shard;
use crate::WAIT;
use futures_util::{SinkExt, StreamExt};
use mino_loadgen::connection::{self, WsStream};
use mino_loadgen::Target;
use mino_protocol::client;
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
    /// The shard's own `/ws`, plain websocket.
    async fn open(&self) -> WsStream {
        let (ws, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(self.ws_url()))
            .await
            .expect("connect in time")
            .expect("connect");
        ws
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
}

impl Player {
    /// Opens a websocket to `to` (no hello yet).
    ///
    /// Panics: no websocket within [`WAIT`].
    pub async fn connect(to: &impl Endpoint) -> Player {
        Player { ws: to.open().await, welcome: None, queued: VecDeque::new() }
    }

    /// Connects and joins as `name`.
    ///
    /// Panics: not welcomed.
    pub async fn join(to: &impl Endpoint, name: &str) -> Player {
        Player::hello(to, name, None).await.expect("welcomed")
    }

    /// Connects and says hello (with a resume ticket if given); returns the
    /// welcomed player, or the frame that came instead of a Welcome and the
    /// close code.
    pub async fn hello(to: &impl Endpoint, name: &str, ticket: Option<&[u8]>) -> Result<Player, (Frame, Option<u16>)> {
        let mut p = Player::connect(to).await;
        p.send(client::encode_hello(name, None, ticket)).await;
        match p.next().await {
            Frame::Welcome(w) => {
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
                    self.queued.extend(Frame::decode_all(&b));
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

    /// The next snapshot or cell that lists this player: (tick, time
    /// ms, x, y).
    pub async fn own_position(&mut self) -> (u64, u64, f32, f32) {
        let me = self.id();
        let welcome = self.welcome.clone().expect("welcomed");
        self.until(|f| match f {
            Frame::Snapshot { tick, time_ms, players, .. } => {
                players.iter().find(|p| p.0 == me).map(|p| (*tick, *time_ms, p.1, p.2))
            }
            Frame::Cell(c) => welcome
                .players(c)
                .into_iter()
                .find(|p| p.0 == me)
                .map(|p| (u64::from(c.tick), welcome.unwrap_time(c.time_ms), p.1, p.2)),
            _ => None,
        })
        .await
    }

    /// The players of a cell: (id, x, y) in world units.
    pub fn players_of(&self, cell: &mino_loadgen::event::CellFrame) -> Vec<(u32, f32, f32)> {
        self.welcome.as_ref().expect("welcomed").players(cell)
    }
}
