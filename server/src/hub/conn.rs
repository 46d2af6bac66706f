//! One websocket in the [`super::Hub`]: its outbox, its frame reader, and,
//! once admitted, its player's budgets and ticket; or, once closing, how it
//! lingers. Everything here is plain data driven by the hub: no task, no
//! lock, no channel.
//!
//! An idle admitted connection is this struct and nothing else: the reader
//! keeps no buffer between messages ([`FrameReader`]), the outbox keeps no
//! queue while its socket takes every tick ([`Outbox`]), and reads go through
//! the hub's one scratch buffer. The compactness is the point: 168 bytes a
//! connection here, where a task per socket with its own read buffer cost
//! kilobytes (see `benches/RESULTS.md`, idle sockets).

use super::liveness::Heard;
use super::outbox::{Outbox, SlowLimits, Stuck, Written};
use super::rate_limit::{Budget, TokenBucket};
use crate::clock::{self, Instant};
use crate::close::CloseReason;
use crate::config::{SocketConfig, Writes};
use crate::metrics::Tally;
use crate::resume::Ticket;
use crate::shard::LinkId;
use crate::socket::ConnectionSlot;
use crate::websocket::closing::{self, Linger, ReadEnd, LINGER_BYTES};
use crate::websocket::frame as ws_frame;
use crate::websocket::reader::{Frame, FrameReader, Next};
use bytes::Bytes;
use mino_protocol::client::{self, ClientMsg, Direction};
use mino_protocol::server as msg;
use mino_protocol::PlayerId;
use socket2::Socket;
use std::io::{self, Read};

/// Most reads from one socket each time it is found readable (each up to the
/// scratch buffer's size); a socket with more waiting is read again on the
/// next round, after the others.
const READS_PER_ROUND: usize = 4;

/// What the hub's connections share: the budgets and limits of the config.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How far a socket may fall behind before it is too slow.
    pub slow: SlowLimits,
    /// Inputs (and names requests, pings): `--input-rate` a second, bursts
    /// of twice that.
    pub inputs: Budget,
    /// Chat lines: `--chat-rate` a second, bursts of 5.
    pub chats: Budget,
    /// Pings and pongs: `--control-rate` a second, bursts of twice that.
    pub controls: Budget,
}

impl Limits {
    /// The limits `config` sets.
    pub fn of(config: &SocketConfig) -> Limits {
        Limits {
            slow: SlowLimits { ticks: config.outbound_ticks, time: config.write_timeout },
            inputs: Budget::new(f64::from(config.input_rate), f64::from(config.input_rate) * 2.0),
            chats: Budget::new(config.chat_rate, 5.0),
            controls: control_budget(config),
        }
    }
}

/// The budget of pings and pongs a peer may send: `--control-rate` a second,
/// bursts of twice that.
pub fn control_budget(config: &SocketConfig) -> Budget {
    let rate = f64::from(config.control_rate);
    Budget::new(rate, rate * 2.0)
}

/// What the hub's sockets carry once past their handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum App {
    /// The game: an admitted player's binary FlatBuffers messages.
    Game,
    /// Every text and binary message echoed back as it came, and every ping
    /// answered at once: the peer a websocket conformance suite judges
    /// ([`crate::echo`]), on the game's own framing, limits and closes.
    Echo,
}

/// A socket handed from its handshake task to the hub, with what the task
/// already read of it.
#[derive(Debug)]
pub struct Handover {
    /// The socket, non-blocking.
    pub socket: Socket,
    /// Its frame reader, with any bytes read past the Hello.
    pub reader: FrameReader,
    /// Pings and pongs the peer may still send.
    pub controls: TokenBucket,
    /// Where its read side stands.
    pub end: ReadEnd,
    /// How its frames are written.
    pub writes: Writes,
    /// Its slot of `--max-connections` (taken over from its HTTP connection).
    pub slot: Option<ConnectionSlot>,
}

/// Something an admitted player sent or did, for the tick driver to carry
/// to the shard core, in order.
#[derive(Debug, PartialEq)]
pub enum Inbound {
    /// A new wanted direction.
    Input {
        /// Who.
        player: PlayerId,
        /// Where to.
        dir: Direction,
        /// The input's sequence number.
        seq: u32,
    },
    /// A chat line (validated by the decoder).
    Chat {
        /// Who.
        player: PlayerId,
        /// What.
        text: String,
    },
    /// Which players are these? (Area of interest: answer with
    /// [`super::Hub::send`] to `link`.)
    Names {
        /// Whose socket asks.
        link: LinkId,
        /// The ids asked about.
        ids: Vec<u32>,
    },
    /// Every cell of the socket's view whole again (a WebTransport client
    /// granted datagram deltas missed a change: a lost datagram).
    Resync {
        /// Whose socket asks.
        link: LinkId,
    },
    /// The player's socket began to close: the player leaves the shard.
    Left {
        /// Who.
        player: PlayerId,
        /// Which of its sockets.
        link: LinkId,
    },
}

/// The admitted player behind a connection.
#[derive(Debug)]
pub struct Player {
    /// Who.
    pub id: PlayerId,
    /// The socket's link at the shard core.
    pub link: LinkId,
    /// The player's current resume ticket.
    pub ticket: Ticket,
    /// The account the session belongs to (`None`: a guest's).
    pub account: Option<Box<str>>,
    inputs: TokenBucket,
    chats: TokenBucket,
    /// The sequence number of the newest Input passed on (`None`: none yet
    /// on this socket): an older one, or the same again, is ignored.
    last_input: Option<u32>,
}

/// True when the Input sequence number `seq` is newer than `than`, in
/// serial number arithmetic over 32 bits (RFC 1982): `seq` is ahead of
/// `than` by 1 to 2^31 - 1, counting across the wrap from 2^32 - 1 to 0. An
/// equal number is not newer (a duplicate), nor one exactly 2^31 away
/// (undefined in RFC 1982; taken as old).
pub fn newer_input(seq: u32, than: u32) -> bool {
    let ahead = seq.wrapping_sub(than);
    ahead != 0 && ahead < 1 << 31
}

impl Player {
    /// An admitted player at `now`, with full budgets.
    pub fn new(
        id: PlayerId,
        link: LinkId,
        ticket: Ticket,
        account: Option<Box<str>>,
        limits: &Limits,
        now: Instant,
    ) -> Player {
        let inputs = TokenBucket::full(&limits.inputs, now);
        let chats = TokenBucket::full(&limits.chats, now);
        Player { id, link, ticket, account, inputs, chats, last_input: None }
    }

    /// One binary message of the player: decoded (every byte verified),
    /// checked against its budget, turned into an [`Inbound`]; a ping's
    /// answer (the encoded Pong) is returned, for the caller to send at
    /// once. Errors: why the connection must close.
    pub fn on_message(
        &mut self,
        data: &[u8],
        limits: &Limits,
        now: Instant,
        out: &mut Vec<Inbound>,
    ) -> Result<Option<Bytes>, CloseReason> {
        let message = client::decode(data).map_err(|e| CloseReason::from(&e))?;
        match message {
            ClientMsg::Hello(_) => return Err(CloseReason::Malformed),
            ClientMsg::Input { dir, seq } => {
                if !self.inputs.try_take(&limits.inputs, now) {
                    return Err(CloseReason::InputFlood);
                }
                // Inputs apply in the order the client numbered them: one
                // that is not newer than the last applied (a duplicate, or
                // one overtaken) is ignored, so the echo never goes back.
                if self.last_input.is_none_or(|last| newer_input(seq, last)) {
                    self.last_input = Some(seq);
                    out.push(Inbound::Input { player: self.id, dir, seq });
                }
            }
            ClientMsg::Names(ids) => {
                if !self.inputs.try_take(&limits.inputs, now) {
                    return Err(CloseReason::InputFlood);
                }
                out.push(Inbound::Names { link: self.link, ids });
            }
            ClientMsg::Resync => {
                if !self.inputs.try_take(&limits.inputs, now) {
                    return Err(CloseReason::InputFlood);
                }
                out.push(Inbound::Resync { link: self.link });
            }
            ClientMsg::Chat(text) => {
                if !self.chats.try_take(&limits.chats, now) {
                    return Err(CloseReason::ChatFlood);
                }
                out.push(Inbound::Chat { player: self.id, text });
            }
            ClientMsg::Ping { client_time_ms } => {
                if !self.inputs.try_take(&limits.inputs, now) {
                    return Err(CloseReason::InputFlood);
                }
                // Answered at once, with its own write, so the measured ping is true.
                return Ok(Some(msg::encode_pong(client_time_ms, clock::wall_ms())));
            }
        }
        Ok(None)
    }
}

/// A player's message on a websocket: [`Player::on_message`], its pong
/// written at once; `Some` when the socket must close.
fn on_ws_message(
    player: &mut Player,
    data: &[u8],
    cx: (&Limits, Instant),
    outbox: &mut Outbox,
    out: &mut Vec<Inbound>,
    tally: &mut Tally,
) -> Option<CloseReason> {
    let (limits, now) = cx;
    match player.on_message(data, limits, now, out) {
        Err(reason) => Some(reason),
        Ok(None) => None,
        Ok(Some(pong)) => match outbox.send(&[ws_frame::binary(&pong)], now, tally) {
            Written::Stuck(why) => Some(why.close_reason()),
            Written::Done | Written::Blocked => None,
        },
    }
}

/// A connection whose close began.
#[derive(Debug)]
pub struct Closing {
    /// How it reads after its close frame.
    pub linger: Linger,
    /// Nothing more is read (the peer's close frame or FIN came, or the
    /// linger's byte budget is spent).
    pub read_done: bool,
    /// The close frames are out and the write side is shut.
    pub flushed: bool,
    /// When the connection is dropped whatever else: the close frames'
    /// write timeout, then the end of the linger.
    pub until: Instant,
    /// Bytes read and discarded since the close.
    pub discarded: usize,
}

impl Closing {
    /// True when nothing is left to do: the close frames are out and
    /// nothing more is read.
    pub fn is_done(&self) -> bool {
        self.flushed && self.read_done
    }
}

/// What reading a connection came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing for the hub (the peer's messages went to `out`).
    Open,
    /// The connection must close for this reason.
    Close(CloseReason),
    /// A closing connection read what it waited for (or its socket failed).
    Finished,
}

/// What the hub lends a connection for one read: its scratch buffer, the
/// limits, the application, the instant, and where the players' messages and
/// the writes' counts go.
pub struct Lent<'a> {
    /// What the messages are for.
    pub app: App,
    /// The one read buffer.
    pub scratch: &'a mut [u8],
    /// Budgets and limits.
    pub limits: &'a Limits,
    /// The instant of the read.
    pub now: Instant,
    /// The players' messages, in order.
    pub out: &'a mut Vec<Inbound>,
    /// Writes done meanwhile (pongs).
    pub tally: &'a mut Tally,
}

/// One websocket.
#[derive(Debug)]
pub struct Conn {
    /// Its write side.
    pub outbox: Outbox,
    reader: FrameReader,
    /// The admitted player (`None` once closing, or for a socket closed
    /// before admission).
    pub player: Option<Player>,
    /// Pings and pongs the peer may still send.
    controls: TokenBucket,
    /// When the peer was last heard from and pinged.
    pub heard: Heard,
    /// Where the read side stands.
    pub end: ReadEnd,
    /// Set once the close began.
    pub closing: Option<Box<Closing>>,
    /// The readiness the hub's poller watches for (its epoll flags).
    pub interest: u32,
    /// Its slot of `--max-connections`, given back when it is dropped.
    _slot: Option<ConnectionSlot>,
}

impl Conn {
    /// A connection of `handed`, heard from at `now`.
    pub fn new(handed: Handover, player: Option<Player>, now: Instant) -> Conn {
        Conn {
            outbox: Outbox::new(handed.socket, handed.writes),
            reader: handed.reader,
            player,
            controls: handed.controls,
            heard: Heard::new(now),
            end: handed.end,
            closing: None,
            interest: 0,
            _slot: handed.slot,
        }
    }

    /// Reads what the socket has (into `scratch`, at most
    /// [`READS_PER_ROUND`] reads), hands each message on as [`Inbound`]s,
    /// answers control frames; a closing connection reads and discards
    /// instead. `input` first: bytes already held (none but after a
    /// handover, when the reader may hold frames read past the Hello).
    pub fn read(&mut self, cx: Lent<'_>) -> Outcome {
        let Lent { app, scratch, limits, now, out, tally } = cx;
        if self.closing.is_some() {
            return self.linger(scratch);
        }
        for _ in 0..READS_PER_ROUND {
            let n = match self.outbox.socket().read(scratch) {
                Ok(0) => {
                    self.end = ReadEnd::Gone;
                    return Outcome::Close(CloseReason::ClientClosed);
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Outcome::Open,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.end = ReadEnd::Gone;
                    return Outcome::Close(CloseReason::ClientClosed);
                }
            };
            self.heard.heard(now);
            if let Outcome::Close(reason) = self.frames(app, &mut scratch[..n], limits, now, out, tally) {
                return Outcome::Close(reason);
            }
            if n < scratch.len() {
                // The socket is likely empty; the poller says when it is not.
                return Outcome::Open;
            }
        }
        Outcome::Open
    }

    /// Goes on with frames the reader kept from the handshake (right after
    /// the handover).
    pub fn kept_frames(&mut self, cx: Lent<'_>) -> Outcome {
        let Lent { app, limits, now, out, tally, .. } = cx;
        if self.reader.is_idle() {
            return Outcome::Open;
        }
        self.frames(app, &mut [], limits, now, out, tally)
    }

    /// Feeds `input` to the reader and handles each frame as `app` does.
    fn frames(
        &mut self,
        app: App,
        input: &mut [u8],
        limits: &Limits,
        now: Instant,
        out: &mut Vec<Inbound>,
        tally: &mut Tally,
    ) -> Outcome {
        let Conn { outbox, reader, player, controls, end, .. } = self;
        let mut verdict = None;
        let fed = reader.feed(input, &mut |frame| {
            let reason = match frame {
                Frame::Binary(data) => match (app, player.as_mut()) {
                    (App::Echo, _) => echo(outbox, ws_frame::binary(data), now, tally),
                    (App::Game, Some(p)) => on_ws_message(p, data, (limits, now), outbox, out, tally),
                    (App::Game, None) => Some(CloseReason::HelloExpected),
                },
                Frame::Text(text) if app == App::Echo => echo(outbox, ws_frame::text(text), now, tally),
                Frame::Text(_) | Frame::TextRefused => Some(CloseReason::TextFrame),
                Frame::Ping(_) | Frame::Pong if !controls.try_take(&limits.controls, now) => {
                    Some(CloseReason::ControlFlood)
                }
                Frame::Ping(payload) if app == App::Echo => echo(outbox, ws_frame::pong(payload), now, tally),
                Frame::Ping(payload) => {
                    outbox.pong_next_tick(ws_frame::pong(payload));
                    None
                }
                Frame::Pong => None,
                Frame::Close(code) => {
                    *end = ReadEnd::PeerClosed;
                    Some(CloseReason::answering(code))
                }
            };
            match reason {
                None => Next::More,
                Some(reason) => {
                    verdict = Some(reason);
                    Next::Stop
                }
            }
        });
        if let Some(Stuck::Failed) = self.outbox.stuck() {
            self.end = ReadEnd::Gone;
        }
        match (fed, verdict) {
            (Err(e), _) => {
                self.end = ReadEnd::Broken;
                Outcome::Close(closing::classify(e))
            }
            (Ok(_), Some(reason)) => Outcome::Close(reason),
            (Ok(_), None) => Outcome::Open,
        }
    }

    /// A closing connection's read: discards what comes (frames until the
    /// peer's close frame, or raw bytes until its FIN), within
    /// [`LINGER_BYTES`].
    fn linger(&mut self, scratch: &mut [u8]) -> Outcome {
        let Conn { outbox, reader, closing, .. } = self;
        let Some(c) = closing.as_mut() else { return Outcome::Open };
        for _ in 0..READS_PER_ROUND {
            if c.read_done {
                break;
            }
            let n = match outbox.socket().read(scratch) {
                Ok(0) => {
                    c.read_done = true;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Outcome::Finished,
            };
            match c.linger {
                Linger::Frames => {
                    let mut payload = 0;
                    let fed = reader.feed(&mut scratch[..n], &mut |frame| match frame {
                        Frame::Close(_) => Next::Stop,
                        Frame::Binary(data) => {
                            payload += data.len();
                            Next::More
                        }
                        _ => Next::More,
                    });
                    c.discarded += payload;
                    if !matches!(fed, Ok(Next::More)) {
                        c.read_done = true;
                    }
                }
                Linger::Raw | Linger::No => c.discarded += n,
            }
            if c.discarded >= LINGER_BYTES {
                c.read_done = true;
            }
        }
        if c.is_done() {
            Outcome::Finished
        } else {
            Outcome::Open
        }
    }
}

/// Writes `frame` after what waits on `outbox` (the echo's answer); `Some`
/// when the socket must close.
fn echo(outbox: &mut Outbox, frame: bytes::Bytes, now: Instant, tally: &mut Tally) -> Option<CloseReason> {
    match outbox.send(&[frame], now, tally) {
        Written::Stuck(why) => Some(why.close_reason()),
        Written::Done | Written::Blocked => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_is_newer_by_serial_number_arithmetic_across_the_wrap() {
        assert!(newer_input(2, 1));
        assert!(!newer_input(1, 1), "a duplicate");
        assert!(!newer_input(1, 2), "an older one");
        assert!(newer_input(0, u32::MAX), "across the wrap");
        assert!(newer_input(3, u32::MAX - 1));
        assert!(!newer_input(u32::MAX, 3), "behind across the wrap");
        assert!(newer_input(0x7fff_ffff, 0), "2^31 - 1 ahead");
        assert!(!newer_input(0x8000_0000, 0), "2^31 away: old");
        assert!(!newer_input(0x8000_0001, 0), "more than 2^31 ahead: behind");
    }

    #[test]
    fn an_idle_connection_is_small() {
        // The figure the idle-socket goal rests on (see the module doc): if
        // this grows, say why in benches/RESULTS.md.
        let size = std::mem::size_of::<Conn>();
        assert!(size <= 176, "a connection is {size} bytes");
    }
}
