//! Test harness: the real `mino-server` binary on a loopback port, and a
//! websocket test client that speaks the real protocol.
#![allow(dead_code, missing_docs)]

pub mod redis;

use futures_util::{SinkExt, StreamExt};
use mino_protocol::server::{decode, ServerMsg};
use mino_protocol::{client, wire};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode as WsCloseCode;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Bound on any single wait in a test.
pub const WAIT: Duration = Duration::from_secs(10);

/// A running `mino-server` process, killed on drop.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Server {
    /// Starts the binary with `--listen 127.0.0.1:0` plus `args`.
    pub fn start(args: &[&str]) -> Server {
        Server::start_with_admin(args).0
    }

    /// Starts the binary; when `args` hold `--admin-listen`, also returns the
    /// admin address it printed.
    pub fn start_with_admin(args: &[&str]) -> (Server, Option<SocketAddr>) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mino-server"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            // Debug builds on a shared 2-core machine tick late now and then;
            // the busy rule has its own tests that turn it on explicitly.
            .env("MINO_BUSY_LATENESS_MS", "0")
            .env("MINO_LOG", std::env::var("MINO_TEST_LOG").unwrap_or_else(|_| "warn".into()))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn mino-server");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut read_addr = || {
            let mut line = String::new();
            stdout.read_line(&mut line).expect("read an address line");
            line.trim()
                .rsplit("http://")
                .next()
                .and_then(|a| a.parse().ok())
                .unwrap_or_else(|| panic!("no address in {line:?}"))
        };
        let addr = read_addr();
        let admin = args.contains(&"--admin-listen").then(&mut read_addr);
        (Server { child, addr }, admin)
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Sends a signal to the process.
    pub fn signal(&self, sig: &str) {
        let status = Command::new("kill").args([&format!("-{sig}"), &self.pid().to_string()]).status().expect("kill");
        assert!(status.success());
    }

    /// Waits for the process to exit, at most `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Resident set size from /proc, bytes.
    pub fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .expect("VmRSS")
    }

    /// GET `path`; returns (status code, body).
    pub async fn get(&self, path: &str) -> (u16, String) {
        http(self.addr, "GET", path).await
    }
}

/// One HTTP/1.1 request to `addr`; returns (status code, body).
pub async fn http(addr: SocketAddr, method: &str, path: &str) -> (u16, String) {
    {
        let mut tcp = TcpStream::connect(addr).await.expect("connect");
        let req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        tcp.write_all(req.as_bytes()).await.expect("write");
        let mut buf = Vec::new();
        tokio::time::timeout(WAIT, tcp.read_to_end(&mut buf)).await.expect("timely").expect("read");
        let text = String::from_utf8_lossy(&buf).into_owned();
        let code = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
        (code, body)
    }
}

impl Server {
    /// The value of one metric line (exact name with labels), 0 if absent.
    pub async fn metric(&self, series: &str) -> f64 {
        let (_, body) = self.get("/metrics").await;
        body.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|v| v.strip_prefix(' ')))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0)
    }
}

impl Server {
    /// Waits until `/readyz` answers 200 (clustered: Redis reached, shard registered).
    pub async fn wait_ready(&self) {
        let deadline = Instant::now() + WAIT;
        while self.get("/readyz").await.0 != 200 {
            assert!(Instant::now() < deadline, "server not ready in time");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Polls `series` until it equals `want` (panics after [`WAIT`]).
    pub async fn wait_metric(&self, series: &str, want: f64) {
        let deadline = Instant::now() + WAIT;
        loop {
            let got = self.metric(series).await;
            if got == want {
                return;
            }
            assert!(Instant::now() < deadline, "{series} = {got}, want {want}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What a Welcome told the client.
#[derive(Clone, Debug)]
pub struct Welcome {
    pub resumed: bool,
    pub player_id: u32,
    pub shard_id: u32,
    pub tick_hz: u16,
    pub speed: f32,
    pub bounds: wire::Bounds,
    pub x: f32,
    pub y: f32,
    pub ticket: Vec<u8>,
}

/// A decoded frame the test cares about, owned.
#[derive(Clone, Debug)]
pub enum Frame {
    Welcome(Welcome),
    Snapshot {
        shard: u32,
        tick: u64,
        time_ms: u64,
        players: Vec<(u32, f32, f32)>,
    },
    Chat {
        from: u32,
        name: String,
        text: String,
    },
    Presence {
        joined: Vec<(u32, String)>,
        left: Vec<u32>,
    },
    Roster(Vec<(u32, String)>),
    Busy {
        reason: String,
        retry_after_ms: u32,
    },
    Error(u16),
    Pong(f64),
    Move(Vec<u8>),
    /// The websocket closed with this code (None: no close frame).
    Closed(Option<u16>),
}

pub fn to_frame(bytes: &[u8]) -> Frame {
    match decode(bytes).expect("server sent a valid frame") {
        ServerMsg::Welcome(w) => Frame::Welcome(Welcome {
            resumed: w.resumed(),
            player_id: w.player_id(),
            shard_id: w.shard_id(),
            tick_hz: w.tick_hz(),
            speed: w.speed(),
            bounds: *w.bounds().expect("bounds"),
            x: w.x(),
            y: w.y(),
            ticket: w.resume_ticket().map(|t| t.bytes().to_vec()).unwrap_or_default(),
        }),
        ServerMsg::Snapshot(s) => {
            let b = *s.bounds().expect("bounds");
            let players = s
                .players()
                .map(|ps| {
                    ps.iter()
                        .map(|p| {
                            let (x, y) = mino_protocol::quantize::world_position(&b, p.x(), p.y());
                            (mino_protocol::server::player_id(p).0, x, y)
                        })
                        .collect()
                })
                .unwrap_or_default();
            Frame::Snapshot { shard: s.shard_id(), tick: s.tick(), time_ms: s.server_time_ms(), players }
        }
        ServerMsg::Chat(c) => {
            Frame::Chat { from: c.from_id(), name: c.name().unwrap_or("").into(), text: c.text().unwrap_or("").into() }
        }
        ServerMsg::Presence(p) => Frame::Presence {
            joined: p
                .joined()
                .map(|j| j.iter().map(|i| (i.id(), i.name().unwrap_or("").into())).collect())
                .unwrap_or_default(),
            left: p.left().map(|l| l.iter().collect()).unwrap_or_default(),
        },
        ServerMsg::Roster(r) => Frame::Roster(
            r.players()
                .map(|j| j.iter().map(|i| (i.id(), i.name().unwrap_or("").into())).collect())
                .unwrap_or_default(),
        ),
        ServerMsg::Busy(b) => {
            Frame::Busy { reason: b.reason().unwrap_or("").into(), retry_after_ms: b.retry_after_ms() }
        }
        ServerMsg::Error(e) => Frame::Error(e.code().0),
        ServerMsg::Pong(p) => Frame::Pong(p.client_time_ms()),
        ServerMsg::Move(m) => Frame::Move(m.resume_ticket().map(|t| t.bytes().to_vec()).unwrap_or_default()),
    }
}

/// A websocket test client.
pub struct Client {
    pub ws: Ws,
    pub welcome: Option<Welcome>,
}

impl Client {
    /// Opens a websocket to the server (no hello yet).
    pub async fn connect(server: &Server) -> Client {
        let (ws, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(server.ws_url()))
            .await
            .expect("connect in time")
            .expect("connect");
        Client { ws, welcome: None }
    }

    /// Connects and joins as `name`; panics unless welcomed.
    pub async fn join(server: &Server, name: &str) -> Client {
        Client::hello(server, name, None).await.expect("welcomed")
    }

    /// Connects and says hello (with a resume ticket if given); returns the
    /// welcomed client, or the frame that came instead of a Welcome and the
    /// close code.
    pub async fn hello(server: &Server, name: &str, ticket: Option<&[u8]>) -> Result<Client, (Frame, Option<u16>)> {
        let mut c = Client::connect(server).await;
        c.send(client::encode_hello(name, None, ticket)).await;
        match c.next().await {
            Frame::Welcome(w) => {
                c.welcome = Some(w);
                Ok(c)
            }
            other => {
                let (close, _) = if matches!(other, Frame::Closed(_)) { (None, None) } else { c.closed().await };
                Err((other, close))
            }
        }
    }

    /// The resume ticket of the Welcome.
    pub fn ticket(&self) -> Vec<u8> {
        self.welcome.as_ref().expect("welcomed").ticket.clone()
    }

    pub fn id(&self) -> u32 {
        self.welcome.as_ref().expect("welcomed").player_id
    }

    pub async fn send(&mut self, bytes: Vec<u8>) {
        self.ws.send(Message::Binary(bytes.into())).await.expect("send");
    }

    /// Sends, ignoring errors (the server may already have closed).
    pub async fn try_send(&mut self, msg: Message) -> bool {
        self.ws.send(msg).await.is_ok()
    }

    /// Next frame (pings are answered by tungstenite and skipped).
    pub async fn next(&mut self) -> Frame {
        loop {
            let m = tokio::time::timeout(WAIT, self.ws.next()).await.expect("a frame in time");
            match m {
                Some(Ok(Message::Binary(b))) => return to_frame(&b),
                Some(Ok(Message::Close(c))) => return Frame::Closed(c.map(|c| u16::from(c.code))),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                Some(Ok(other)) => panic!("unexpected message {other:?}"),
                Some(Err(_)) | None => return Frame::Closed(None),
            }
        }
    }

    /// Skips frames until `pick` returns Some, at most [`WAIT`].
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

    /// Reads until the close frame; returns its code and the Error code sent before it.
    pub async fn closed(&mut self) -> (Option<u16>, Option<u16>) {
        let mut error = None;
        loop {
            match self.next().await {
                Frame::Error(code) => error = Some(code),
                Frame::Closed(code) => return (code, error),
                _ => {}
            }
        }
    }

    /// The next snapshot that lists this client's player: (tick, time ms, x, y).
    pub async fn own_position(&mut self) -> (u64, u64, f32, f32) {
        let me = self.id();
        self.until(|f| match f {
            Frame::Snapshot { tick, time_ms, players, .. } => {
                players.iter().find(|p| p.0 == me).map(|p| (*tick, *time_ms, p.1, p.2))
            }
            _ => None,
        })
        .await
    }
}

/// The websocket close code as u16.
pub fn code(c: wire::CloseCode) -> Option<u16> {
    Some(c.0)
}

/// Silences an unused import warning for the close-code type in some test files.
pub fn ws_code(c: WsCloseCode) -> u16 {
    u16::from(c)
}
