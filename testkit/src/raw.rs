//! A raw websocket client for edge-case tests: the opening handshake as any
//! bytes (a bad key, a repeated header, frames sent in the same packet as the
//! request), frames built bit by bit (any FIN, RSV bits, opcode, mask and
//! length), and the server's frames read exactly as they arrive, up to the
//! way the connection ends (FIN or reset). Every read is bounded by [`WAIT`].

use crate::frame::{Frame, Welcome};
use crate::WAIT;
use mino_protocol::client;
use std::io;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

/// A valid `Sec-WebSocket-Key` (RFC 6455 section 1.3's example).
pub const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

/// The opcodes of RFC 6455 section 5.2.
pub mod op {
    /// A continuation frame.
    pub const CONTINUATION: u8 = 0x0;
    /// A text frame.
    pub const TEXT: u8 = 0x1;
    /// A binary frame.
    pub const BINARY: u8 = 0x2;
    /// A close frame.
    pub const CLOSE: u8 = 0x8;
    /// A ping frame.
    pub const PING: u8 = 0x9;
    /// A pong frame.
    pub const PONG: u8 = 0xA;
}

/// The mask key of every masked frame this client builds.
const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// One frame the server sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawFrame {
    /// The FIN bit.
    pub fin: bool,
    /// The opcode (see [`op`]).
    pub opcode: u8,
    /// The payload.
    pub payload: Vec<u8>,
}

impl RawFrame {
    /// A close frame's code, if it carries one.
    pub fn close_code(&self) -> Option<u16> {
        (self.opcode == op::CLOSE && self.payload.len() >= 2)
            .then(|| u16::from_be_bytes([self.payload[0], self.payload[1]]))
    }
}

/// How the server ended a connection, as this client saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ending {
    /// The code of the server's close frame (`None`: no close frame).
    pub code: Option<u16>,
    /// The reason text of the close frame.
    pub reason: String,
    /// The code of the Error message before it, if any.
    pub error: Option<u16>,
    /// The connection ended with a FIN (true) or a reset (false).
    pub clean: bool,
}

/// Builds one frame: `fin`, the RSV bits `rsv` (0 to 7), `opcode`, masked
/// unless `mask` is false, `payload` with the shortest length encoding.
pub fn frame(fin: bool, rsv: u8, opcode: u8, mask: bool, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![(u8::from(fin) << 7) | ((rsv & 7) << 4) | (opcode & 0x0f)];
    let m = if mask { 0x80 } else { 0 };
    match payload.len() {
        n @ 0..=125 => out.push(m | n as u8),
        n @ 126..=65_535 => {
            out.push(m | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(m | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    if mask {
        out.extend_from_slice(&MASK);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ MASK[i % 4]));
    } else {
        out.extend_from_slice(payload);
    }
    out
}

/// A final, masked frame: what a well-behaved client sends.
pub fn masked(opcode: u8, payload: &[u8]) -> Vec<u8> {
    frame(true, 0, opcode, true, payload)
}

/// A close frame's payload: `code` then `reason`.
pub fn close_payload(code: u16, reason: &[u8]) -> Vec<u8> {
    [&code.to_be_bytes()[..], reason].concat()
}

/// An upgrade request for `/ws` with `headers` (whole lines without CRLF)
/// after the Host header.
pub fn upgrade_request(headers: &[&str]) -> String {
    let mut req = String::from("GET /ws HTTP/1.1\r\nHost: mino\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    req
}

/// The headers of a valid upgrade.
pub fn valid_headers() -> Vec<String> {
    vec![
        "Connection: Upgrade".into(),
        "Upgrade: websocket".into(),
        "Sec-WebSocket-Version: 13".into(),
        format!("Sec-WebSocket-Key: {KEY}"),
    ]
}

/// A raw websocket connection: its [`RawReader`] and [`RawWriter`], used
/// together or split to read and write at once.
pub struct RawSocket {
    /// The read side.
    pub reader: RawReader,
    /// The write side.
    pub writer: RawWriter,
}

/// The read side of a [`RawSocket`].
pub struct RawReader {
    read: OwnedReadHalf,
    /// Bytes read and not yet parsed.
    buf: Vec<u8>,
}

/// The write side of a [`RawSocket`]; dropping it sends a FIN.
pub struct RawWriter {
    write: OwnedWriteHalf,
}

impl RawSocket {
    /// Connects to `addr` and sends `request` (plus `extra` bytes in the same
    /// write, e.g. frames coalesced with the upgrade); returns the socket
    /// (positioned after the response head), the status and the response head.
    ///
    /// Panics: no connection or no response head within [`WAIT`].
    pub async fn request(addr: SocketAddr, request: &str, extra: &[u8]) -> (RawSocket, u16, String) {
        let stream =
            tokio::time::timeout(WAIT, TcpStream::connect(addr)).await.expect("connect in time").expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let (read, write) = stream.into_split();
        let mut s = RawSocket { reader: RawReader { read, buf: Vec::new() }, writer: RawWriter { write } };
        assert!(s.send_raw(&[request.as_bytes(), extra].concat()).await, "request sent");
        let r = &mut s.reader;
        let head = loop {
            if let Some(end) = r.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head: Vec<u8> = r.buf.drain(..end + 4).collect();
                break String::from_utf8_lossy(&head).into_owned();
            }
            assert!(r.fill().await.expect("response head") > 0, "closed before a response head");
        };
        let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        (s, status, head)
    }

    /// Opens a websocket to `addr` (a valid upgrade; `extra` bytes go in the
    /// same write as the request).
    ///
    /// Panics: not upgraded (101) within [`WAIT`].
    pub async fn open(addr: SocketAddr, extra: &[u8]) -> RawSocket {
        let headers = valid_headers();
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let (s, status, head) = RawSocket::request(addr, &upgrade_request(&headers), extra).await;
        assert_eq!(status, 101, "upgrade refused: {head}");
        s
    }

    /// Opens a websocket and joins as `name`.
    ///
    /// Panics: not welcomed within [`WAIT`].
    pub async fn join(addr: SocketAddr, name: &str) -> (RawSocket, Welcome) {
        let mut s = RawSocket::open(addr, &[]).await;
        s.send(op::BINARY, &client::encode_hello(name, None, None)).await;
        let welcome = s.welcome().await;
        (s, welcome)
    }

    /// The two sides, to read and write at once.
    pub fn split(self) -> (RawReader, RawWriter) {
        (self.reader, self.writer)
    }

    /// See [`RawReader::welcome`].
    pub async fn welcome(&mut self) -> Welcome {
        self.reader.welcome().await
    }

    /// See [`RawWriter::send_raw`].
    pub async fn send_raw(&mut self, bytes: &[u8]) -> bool {
        self.writer.send_raw(bytes).await
    }

    /// See [`RawWriter::send`].
    pub async fn send(&mut self, opcode: u8, payload: &[u8]) -> bool {
        self.writer.send(opcode, payload).await
    }

    /// See [`RawWriter::fin`].
    pub async fn fin(&mut self) {
        self.writer.fin().await;
    }

    /// See [`RawReader::next`].
    pub async fn next(&mut self) -> Option<RawFrame> {
        self.reader.next().await
    }

    /// See [`RawReader::ending`].
    pub async fn ending(&mut self) -> Ending {
        self.reader.ending().await
    }
}

impl RawWriter {
    /// Writes `bytes` as they are; false when the connection is gone (or the
    /// write did not complete within [`WAIT`]).
    pub async fn send_raw(&mut self, bytes: &[u8]) -> bool {
        matches!(tokio::time::timeout(WAIT, self.write.write_all(bytes)).await, Ok(Ok(())))
    }

    /// Sends one final masked frame; false when the connection is gone.
    pub async fn send(&mut self, opcode: u8, payload: &[u8]) -> bool {
        self.send_raw(&masked(opcode, payload)).await
    }

    /// Closes the write side (a FIN without a close frame).
    pub async fn fin(&mut self) {
        let _ = self.write.shutdown().await;
    }
}

impl RawReader {
    /// Reads until the Welcome.
    ///
    /// Panics: another message or the end first, or nothing within [`WAIT`].
    pub async fn welcome(&mut self) -> Welcome {
        loop {
            let f = self.next().await.expect("a welcome before the end");
            match f.opcode {
                op::BINARY => match Frame::decode(&f.payload) {
                    Frame::Welcome(w) => return w,
                    other => panic!("{other:?} before the welcome"),
                },
                op::CLOSE => panic!("closed ({:?}) before the welcome", f.close_code()),
                _ => {}
            }
        }
    }

    /// Reads more bytes into the buffer: the count, 0 at a FIN.
    async fn fill(&mut self) -> io::Result<usize> {
        let mut chunk = [0u8; 16 * 1024];
        let n = tokio::time::timeout(WAIT, self.read.read(&mut chunk)).await.expect("bytes or the end in time")?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// The next frame the server sent; `None` once the connection ended
    /// (FIN or reset) with no whole frame left.
    ///
    /// Panics: neither within [`WAIT`].
    pub async fn next(&mut self) -> Option<RawFrame> {
        self.frame_or_end().await.ok()
    }

    /// The next frame, or how the connection ended: `Err(true)` for a FIN,
    /// `Err(false)` for a reset.
    async fn frame_or_end(&mut self) -> Result<RawFrame, bool> {
        loop {
            if let Some((frame, used)) = parse(&self.buf) {
                self.buf.drain(..used);
                return Ok(frame);
            }
            match self.fill().await {
                Ok(0) => return Err(true),
                Err(_) => return Err(false),
                Ok(_) => {}
            }
        }
    }

    /// Reads to the end: the close frame's code and reason, the Error before
    /// it, and whether the connection then ended with a FIN. Pings and other
    /// messages are skipped.
    ///
    /// Panics: the end does not come within [`WAIT`] of each read.
    pub async fn ending(&mut self) -> Ending {
        let mut end = Ending::default();
        loop {
            let f = match self.frame_or_end().await {
                Ok(f) => f,
                Err(clean) => return Ending { clean, ..end },
            };
            match f.opcode {
                op::CLOSE => {
                    end.code = f.close_code();
                    end.reason = String::from_utf8_lossy(f.payload.get(2..).unwrap_or_default()).into_owned();
                }
                op::BINARY if end.code.is_none() => {
                    if let Frame::Error(code, _) = Frame::decode(&f.payload) {
                        end.error = Some(code);
                    }
                }
                _ => {}
            }
        }
    }
}

/// One unmasked server frame at the start of `buf`, and the bytes it took.
fn parse(buf: &[u8]) -> Option<(RawFrame, usize)> {
    let (b0, b1) = (*buf.first()?, *buf.get(1)?);
    assert_eq!(b1 & 0x80, 0, "a server frame must not be masked");
    let (len, header) = match b1 & 0x7f {
        126 => (usize::from(u16::from_be_bytes([*buf.get(2)?, *buf.get(3)?])), 4),
        127 => (usize::try_from(u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?)).ok()?, 10),
        n => (usize::from(n), 2),
    };
    let payload = buf.get(header..header + len)?.to_vec();
    Some((RawFrame { fin: b0 & 0x80 != 0, opcode: b0 & 0x0f, payload }, header + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_through_the_parser_when_unmasked() {
        for len in [0, 125, 126, 65_535, 65_536] {
            let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let bytes = frame(true, 0, op::BINARY, false, &payload);
            let (f, used) = parse(&bytes).expect("whole");
            assert_eq!((f.fin, f.opcode, f.payload.len(), used), (true, op::BINARY, len, bytes.len()));
            assert!(parse(&bytes[..bytes.len() - 1]).is_none() || len == 0, "cut");
        }
    }

    #[test]
    fn masked_frames_carry_the_mask_and_the_bits() {
        let f = frame(false, 5, op::PING, true, b"abcd");
        assert_eq!(f[0], 0x59, "no FIN, RSV1 and RSV3, ping");
        assert_eq!(f[1], 0x84, "masked, 4 bytes");
        assert_eq!(&f[2..6], &MASK);
        let unmasked: Vec<u8> = f[6..].iter().enumerate().map(|(i, b)| b ^ MASK[i % 4]).collect();
        assert_eq!(unmasked, b"abcd");
    }
}
