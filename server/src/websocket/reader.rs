//! The client's websocket frames in (RFC 6455 section 5), read with no buffer
//! of their own while the connection is idle.
//!
//! The caller reads from the socket into a scratch buffer it owns (one for
//! every connection) and feeds the bytes here; whole messages and control
//! frames are handed back as slices of those bytes, unmasked in place. Only a
//! frame cut between two reads, or a message sent in fragments, is copied
//! and kept, and the copy is dropped once the frame or message is complete.
//!
//! What is checked, each a [`FrameError`]: the reserved bits (no extension is
//! ever negotiated) and opcodes, the client's mask, the minimal length
//! encoding's 64-bit form (its top bit), control frames (at most 125 bytes,
//! never fragmented), a close frame's length and that its reason is UTF-8,
//! that text is UTF-8, the order of fragments, and the size of a message
//! (`max_message`, also across fragments, checked from the length in the
//! header before any payload is read).
//!
//! Text: the game's protocol is binary, so its reader ([`Messages::Binary`])
//! reports a text message at its first frame ([`Frame::TextRefused`]), once
//! that frame is known to be UTF-8 as far as it goes. A reader that takes
//! text ([`Messages::TextAndBinary`], the conformance suite's echo) hands
//! whole text messages over as `&str`, checking their UTF-8 as the bytes come
//! ([`Utf8Stream`]), even those of a frame cut between reads: a message is
//! refused as soon as its bytes cannot be the start of valid text, not at its
//! end.

use super::utf8::Utf8Stream;
use super::{Opcode, MAX_CONTROL_PAYLOAD};

/// Which data messages a reader hands over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Messages {
    /// Binary only (the game's protocol): a text message is reported at its
    /// first frame as [`Frame::TextRefused`].
    Binary,
    /// Text and binary (the conformance suite's echo): a text message is
    /// handed over whole as [`Frame::Text`].
    TextAndBinary,
}

/// What a client sent: a whole message or a control frame.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A whole binary message, unmasked.
    Binary(&'a [u8]),
    /// A whole text message, valid UTF-8 (only from a reader of
    /// [`Messages::TextAndBinary`]).
    Text(&'a str),
    /// A text message began, valid UTF-8 as far as its first frame goes, and
    /// the reader takes binary only ([`Messages::Binary`]).
    TextRefused,
    /// A ping with its payload.
    Ping(&'a [u8]),
    /// A pong.
    Pong,
    /// The peer's close frame, with its status code if it has one.
    Close(Option<u16>),
}

/// Why the bytes are not (or no longer) a valid frame stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// A protocol violation (RFC 6455 close code 1002).
    #[error("websocket protocol error")]
    Protocol,
    /// A message over the size limit (1009).
    #[error("websocket message too big")]
    TooBig,
    /// A message in more fragments than [`max_fragments`] allows for its
    /// size limit (closed as too big, 1009): fragments, empty ones above
    /// all, cost the reader work without counting as messages, so a flood
    /// of them would be charged to no budget.
    #[error("websocket message in too many fragments")]
    TooFragmented,
    /// Text, or a close reason, that is not UTF-8 (1007).
    #[error("text or close reason not utf-8")]
    InvalidUtf8,
}

/// What the caller says after each frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Go on with the next frame.
    More,
    /// Stop: the connection is closing; the bytes left are not read.
    Stop,
}

/// State kept between reads, only while there is some.
#[derive(Debug, Default)]
struct Pending {
    /// The start of a frame cut by the end of a read.
    partial: Vec<u8>,
    /// The fragments of a message so far.
    message: Vec<u8>,
    /// A fragmented message is under way.
    fragmented: bool,
    /// Its fragments so far.
    fragments: u32,
    /// The message under way is text.
    text: bool,
    /// The UTF-8 of the text message under way, checked so far.
    utf8: Utf8Stream,
    /// Payload bytes of the frame at the start of `partial` (a text frame cut
    /// by the end of a read) already unmasked and checked.
    cut_unmasked: usize,
}

/// What the parse of one read needs besides the bytes: the limits.
#[derive(Clone, Copy, Debug)]
struct Rules {
    max_message: usize,
    messages: Messages,
}

/// The most fragments a message of at most `max_message` bytes may come in:
/// 64, or one for every 64 bytes of the limit when that is more (the
/// game's 4,096 bytes: 64; the echo's 16 MiB, for the conformance suite's
/// messages in 64-byte fragments: 262,144). Browsers send a message whole.
pub fn max_fragments(max_message: usize) -> u32 {
    u32::try_from((max_message / 64).max(64)).unwrap_or(u32::MAX)
}

/// The read side of one connection's websocket framing.
#[derive(Debug)]
pub struct FrameReader {
    /// Longest message, bytes (a `u32` with `messages` beside it keeps the
    /// reader, and an idle connection, small).
    max_message: u32,
    messages: Messages,
    pending: Option<Box<Pending>>,
}

impl FrameReader {
    /// A reader of binary messages of at most `max_message` bytes (at most
    /// 4 GiB): the game's.
    pub fn new(max_message: usize) -> FrameReader {
        FrameReader::taking(max_message, Messages::Binary)
    }

    /// A reader of `messages` of at most `max_message` bytes (at most 4 GiB).
    pub fn taking(max_message: usize, messages: Messages) -> FrameReader {
        let max_message = u32::try_from(max_message).unwrap_or(u32::MAX);
        FrameReader { max_message, messages, pending: None }
    }

    /// Keeps `bytes`, read from the socket but not yet fed (those an HTTP
    /// server read past the upgrade request), for the next [`FrameReader::feed`].
    pub fn unread(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.pending.get_or_insert_with(Box::default).partial.extend_from_slice(bytes);
        }
    }

    /// The limits the parse follows.
    fn rules(&self) -> Rules {
        Rules { max_message: self.max_message as usize, messages: self.messages }
    }

    /// True when nothing is kept between reads (no allocation).
    pub fn is_idle(&self) -> bool {
        self.pending.is_none()
    }

    /// Feeds `input`, just read from the socket (unmasked in place), and
    /// hands each complete message and control frame to `on` in order, until
    /// it says [`Next::Stop`]; the bytes after that frame are kept unread for
    /// the next call (a session that hands its connection on after the Hello
    /// hands its reader on too). `feed(&mut [])` goes on with what was kept.
    ///
    /// Errors: [`FrameError`] at the first invalid frame (the frames before it
    /// were handed over; nothing is kept).
    pub fn feed(&mut self, input: &mut [u8], on: &mut dyn FnMut(Frame<'_>) -> Next) -> Result<Next, FrameError> {
        let rules = self.rules();
        // An idle reader parses into a `Pending` on the stack: a box only
        // when something must be kept past this read (a kept one is reused).
        let mut kept = self.pending.take();
        let mut fresh = Pending::default();
        let (result, keep) = {
            let pending = kept.as_deref_mut().unwrap_or(&mut fresh);
            let result = if pending.partial.is_empty() {
                let (result, used) = parse(input, pending, rules, on);
                if result.is_ok() {
                    pending.partial.extend_from_slice(&input[used..]);
                }
                result
            } else {
                let mut partial = std::mem::take(&mut pending.partial);
                partial.extend_from_slice(input);
                let (result, used) = parse(&mut partial, pending, rules, on);
                partial.drain(..used);
                pending.partial = partial;
                result
            };
            let keep = !pending.partial.is_empty() || pending.fragmented;
            if keep && pending.partial.capacity() > 2 * pending.partial.len().max(64) {
                pending.partial.shrink_to_fit();
            }
            (result, keep)
        };
        if keep && result.is_ok() {
            self.pending = Some(kept.unwrap_or_else(|| Box::new(fresh)));
        }
        result
    }
}

/// Parses whole frames from `buf`; returns the outcome and the bytes used
/// (a cut frame at the end is left unused).
fn parse(
    buf: &mut [u8],
    pending: &mut Pending,
    rules: Rules,
    on: &mut dyn FnMut(Frame<'_>) -> Next,
) -> (Result<Next, FrameError>, usize) {
    let mut at = 0;
    while at < buf.len() {
        let header = match header(&buf[at..], rules.max_message) {
            Ok(Some(h)) => h,
            Ok(None) => break,
            Err(e) => return (Err(e), at),
        };
        let start = at + header.len;
        let Some(end) = start.checked_add(header.payload).filter(|end| *end <= buf.len()) else {
            if rules.messages == Messages::TextAndBinary {
                if let Err(e) = cut_text(&header, &mut buf[start..], pending) {
                    return (Err(e), at);
                }
            }
            break;
        };
        let fed = std::mem::take(&mut pending.cut_unmasked);
        unmask(&mut buf[start + fed..end], header.mask, fed);
        at = end;
        let next = match frame(&header, &buf[start..end], fed, pending, rules, on) {
            Ok(next) => next,
            Err(e) => return (Err(e), at),
        };
        if next == Next::Stop {
            return (Ok(Next::Stop), at);
        }
    }
    (Ok(Next::More), at)
}

/// Unmasks `bytes`, which start `offset` bytes into their frame's payload.
fn unmask(bytes: &mut [u8], mask: [u8; 4], offset: usize) {
    for (i, b) in bytes.iter_mut().enumerate() {
        *b ^= mask[(offset + i) % 4];
    }
}

/// True when a frame of `opcode` carries text (begins a text message, or
/// goes on with one).
fn carries_text(opcode: Opcode, pending: &Pending) -> bool {
    match opcode {
        Opcode::Text => !pending.fragmented,
        Opcode::Continuation => pending.fragmented && pending.text,
        _ => false,
    }
}

/// A frame cut by the end of a read, `have` its payload so far: if it carries
/// text, unmasks and checks what came since the last read, so that text no
/// continuation can mend fails now rather than when the frame is whole.
///
/// Errors: [`FrameError::InvalidUtf8`].
fn cut_text(header: &Header, have: &mut [u8], pending: &mut Pending) -> Result<(), FrameError> {
    if !carries_text(header.opcode, pending) {
        return Ok(());
    }
    let done = pending.cut_unmasked;
    if header.opcode == Opcode::Text && done == 0 {
        pending.utf8 = Utf8Stream::default();
    }
    unmask(&mut have[done..], header.mask, done);
    pending.cut_unmasked = have.len();
    pending.utf8.feed(&have[done..]).map_err(|_| FrameError::InvalidUtf8)
}

/// One frame's header, decoded.
struct Header {
    fin: bool,
    opcode: Opcode,
    mask: [u8; 4],
    /// Bytes of the header.
    len: usize,
    /// Bytes of the payload.
    payload: usize,
}

/// The header at the start of `buf`; `None` while it is incomplete.
fn header(buf: &[u8], max_message: usize) -> Result<Option<Header>, FrameError> {
    let (Some(&b0), Some(&b1)) = (buf.first(), buf.get(1)) else { return Ok(None) };
    let (fin, rsv) = (b0 & 0x80 != 0, b0 & 0x70);
    let (masked, short) = (b1 & 0x80 != 0, usize::from(b1 & 0x7f));
    let Some(opcode) = Opcode::from_bits(b0 & 0x0f).filter(|_| rsv == 0) else {
        return Err(FrameError::Protocol);
    };
    if !masked || (opcode.is_control() && (!fin || short > MAX_CONTROL_PAYLOAD)) {
        return Err(FrameError::Protocol);
    }
    let (extra, payload) = match short {
        126 => match buf.get(2..4) {
            Some(b) => (2, usize::from(u16::from_be_bytes([b[0], b[1]]))),
            None => return Ok(None),
        },
        127 => match buf.get(2..10) {
            Some(b) => {
                let mut n = [0u8; 8];
                n.copy_from_slice(b);
                let n = u64::from_be_bytes(n);
                if n >> 63 != 0 {
                    return Err(FrameError::Protocol);
                }
                (8, usize::try_from(n).unwrap_or(usize::MAX))
            }
            None => return Ok(None),
        },
        n => (0, n),
    };
    if payload > max_message {
        return Err(FrameError::TooBig);
    }
    let Some(key) = buf.get(2 + extra..6 + extra) else { return Ok(None) };
    let mask = [key[0], key[1], key[2], key[3]];
    Ok(Some(Header { fin, opcode, mask, len: 6 + extra, payload }))
}

/// Hands one unmasked frame over, or builds its fragmented message. `fed`:
/// bytes at the start of `payload` whose UTF-8 was checked while the frame
/// was cut (text only).
fn frame(
    header: &Header,
    payload: &[u8],
    fed: usize,
    pending: &mut Pending,
    rules: Rules,
    on: &mut dyn FnMut(Frame<'_>) -> Next,
) -> Result<Next, FrameError> {
    match header.opcode {
        Opcode::Ping => Ok(on(Frame::Ping(payload))),
        Opcode::Pong => Ok(on(Frame::Pong)),
        Opcode::Close => match payload.len() {
            0 => Ok(on(Frame::Close(None))),
            1 => Err(FrameError::Protocol),
            _ => {
                std::str::from_utf8(&payload[2..]).map_err(|_| FrameError::InvalidUtf8)?;
                Ok(on(Frame::Close(Some(u16::from_be_bytes([payload[0], payload[1]])))))
            }
        },
        Opcode::Text | Opcode::Binary if pending.fragmented => Err(FrameError::Protocol),
        Opcode::Text if rules.messages == Messages::Binary => {
            // Refused whatever it says, but text that is not UTF-8 is an
            // invalid payload first (RFC 6455 section 8.1).
            let mut utf8 = Utf8Stream::default();
            check(&mut utf8, payload, header.fin)?;
            Ok(on(Frame::TextRefused))
        }
        Opcode::Text => {
            if fed == 0 {
                pending.utf8 = Utf8Stream::default();
            }
            check(&mut pending.utf8, &payload[fed..], header.fin)?;
            match header.fin {
                true => Ok(on(Frame::Text(whole_text(payload)?))),
                false => Ok(begin(pending, payload, true)),
            }
        }
        Opcode::Binary if header.fin => Ok(on(Frame::Binary(payload))),
        Opcode::Binary => Ok(begin(pending, payload, false)),
        Opcode::Continuation => continuation(header, payload, fed, pending, rules, on),
    }
}

/// The first fragment of a message: kept until its last.
fn begin(pending: &mut Pending, payload: &[u8], text: bool) -> Next {
    pending.fragmented = true;
    pending.fragments = 1;
    pending.text = text;
    pending.message.clear();
    pending.message.extend_from_slice(payload);
    Next::More
}

/// Feeds `bytes` to `utf8`, then ends the text if `fin`.
///
/// Errors: [`FrameError::InvalidUtf8`].
fn check(utf8: &mut Utf8Stream, bytes: &[u8], fin: bool) -> Result<(), FrameError> {
    utf8.feed(bytes).map_err(|_| FrameError::InvalidUtf8)?;
    match fin {
        true => utf8.finish().map_err(|_| FrameError::InvalidUtf8),
        false => Ok(()),
    }
}

/// A continuation frame: the next fragment of the message under way.
fn continuation(
    header: &Header,
    payload: &[u8],
    fed: usize,
    pending: &mut Pending,
    rules: Rules,
    on: &mut dyn FnMut(Frame<'_>) -> Next,
) -> Result<Next, FrameError> {
    if !pending.fragmented {
        return Err(FrameError::Protocol);
    }
    if pending.message.len() + payload.len() > rules.max_message {
        return Err(FrameError::TooBig);
    }
    pending.fragments += 1;
    if pending.fragments > max_fragments(rules.max_message) {
        return Err(FrameError::TooFragmented);
    }
    pending.message.extend_from_slice(payload);
    if pending.text {
        check(&mut pending.utf8, &payload[fed..], header.fin)?;
    }
    if !header.fin {
        return Ok(Next::More);
    }
    pending.fragmented = false;
    let message = std::mem::take(&mut pending.message);
    match pending.text {
        true => Ok(on(Frame::Text(whole_text(&message)?))),
        false => Ok(on(Frame::Binary(&message))),
    }
}

/// A whole text message as `&str`.
///
/// Errors: [`FrameError::InvalidUtf8`].
fn whole_text(bytes: &[u8]) -> Result<&str, FrameError> {
    std::str::from_utf8(bytes).map_err(|_| FrameError::InvalidUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OP_CONTINUATION: u8 = Opcode::Continuation as u8;
    const OP_TEXT: u8 = Opcode::Text as u8;
    const OP_BINARY: u8 = Opcode::Binary as u8;
    const OP_CLOSE: u8 = Opcode::Close as u8;
    const OP_PING: u8 = Opcode::Ping as u8;
    const OP_PONG: u8 = Opcode::Pong as u8;

    /// A client frame: FIN, opcode, masked with `key`.
    fn frame(fin: bool, opcode: u8, payload: &[u8], key: [u8; 4]) -> Vec<u8> {
        let mut out = vec![(u8::from(fin) << 7) | opcode];
        match payload.len() {
            n if n < 126 => out.push(0x80 | n as u8),
            n if n <= 0xffff => {
                out.push(0x80 | 126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(0x80 | 127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(&key);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
        out
    }

    const KEY: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

    /// Feeds `chunks` one after the other; what was handed over, as text.
    fn run(reader: &mut FrameReader, chunks: &[&[u8]]) -> (Vec<String>, Result<Next, FrameError>) {
        let mut got = Vec::new();
        let mut result = Ok(Next::More);
        for chunk in chunks {
            let mut bytes = chunk.to_vec();
            result = reader.feed(&mut bytes, &mut |f| {
                got.push(match f {
                    Frame::Binary(b) => format!("bin:{}", String::from_utf8_lossy(b)),
                    Frame::Text(t) => format!("text:{t}"),
                    Frame::TextRefused => "text refused".into(),
                    Frame::Ping(p) => format!("ping:{}", String::from_utf8_lossy(p)),
                    Frame::Pong => "pong".into(),
                    Frame::Close(c) => format!("close:{c:?}"),
                });
                Next::More
            });
            if result.is_err() {
                break;
            }
        }
        (got, result)
    }

    #[test]
    fn whole_frames_come_back_unmasked_and_nothing_is_kept() {
        let mut r = FrameReader::new(4096);
        let mut bytes = frame(true, OP_BINARY, b"hello", KEY);
        bytes.extend(frame(true, OP_PING, b"p", KEY));
        bytes.extend(frame(true, OP_PONG, b"", KEY));
        let (got, result) = run(&mut r, &[&bytes]);
        assert_eq!(got, ["bin:hello", "ping:p", "pong"]);
        assert_eq!(result, Ok(Next::More));
        assert!(r.is_idle(), "no allocation between reads");
    }

    #[test]
    fn a_frame_cut_anywhere_is_kept_until_it_is_whole() {
        let bytes = frame(true, OP_BINARY, &[b'x'; 300], KEY);
        for cut in 1..bytes.len() {
            let mut r = FrameReader::new(4096);
            let (got, _) = run(&mut r, &[&bytes[..cut]]);
            assert!(got.is_empty() && !r.is_idle(), "cut at {cut}");
            let (got, _) = run(&mut r, &[&bytes[cut..]]);
            assert_eq!(got.len(), 1, "cut at {cut}");
            assert!(r.is_idle(), "dropped once whole");
        }
    }

    #[test]
    fn fragments_make_one_message_with_control_frames_between() {
        let mut r = FrameReader::new(4096);
        let a = frame(false, OP_BINARY, b"ab", KEY);
        let ping = frame(true, OP_PING, b"!", KEY);
        let b = frame(false, OP_CONTINUATION, b"cd", KEY);
        let c = frame(true, OP_CONTINUATION, b"ef", KEY);
        let (got, result) = run(&mut r, &[&a, &ping, &b, &c]);
        assert_eq!(got, ["ping:!", "bin:abcdef"]);
        assert_eq!(result, Ok(Next::More));
        assert!(r.is_idle());
    }

    #[test]
    fn bad_frames_are_protocol_errors() {
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("rsv bits", {
                let mut f = frame(true, OP_BINARY, b"x", KEY);
                f[0] |= 0x40;
                f
            }),
            ("reserved opcode", frame(true, 0x3, b"x", KEY)),
            ("unmasked", vec![0x82, 0x01, b'x']),
            ("fragmented ping", frame(false, OP_PING, b"x", KEY)),
            ("long ping", frame(true, OP_PING, &[0; 126], KEY)),
            ("stray continuation", frame(true, OP_CONTINUATION, b"x", KEY)),
            ("one-byte close", frame(true, OP_CLOSE, &[3], KEY)),
            ("64-bit length with the top bit", {
                let mut f = vec![0x82, 0x80 | 127];
                f.extend_from_slice(&(1u64 << 63).to_be_bytes());
                f.extend_from_slice(&KEY);
                f
            }),
        ];
        for (what, bytes) in cases {
            let (_, result) = run(&mut FrameReader::new(4096), &[&bytes]);
            assert_eq!(result, Err(FrameError::Protocol), "{what}");
        }
        let mut r = FrameReader::new(4096);
        let start = frame(false, OP_BINARY, b"a", KEY);
        let again = frame(true, OP_BINARY, b"b", KEY);
        assert_eq!(run(&mut r, &[&start, &again]).1, Err(FrameError::Protocol), "a new message inside one");
    }

    #[test]
    fn sizes_are_checked_from_the_header_and_across_fragments() {
        let mut r = FrameReader::new(16);
        let big = frame(true, OP_BINARY, &[0; 17], KEY);
        assert_eq!(run(&mut r, &[&big[..4]]).1, Err(FrameError::TooBig), "before the payload arrives");
        let mut r = FrameReader::new(16);
        let a = frame(false, OP_BINARY, &[0; 10], KEY);
        let b = frame(true, OP_CONTINUATION, &[0; 10], KEY);
        assert_eq!(run(&mut r, &[&a, &b]).1, Err(FrameError::TooBig));
    }

    #[test]
    fn a_message_may_come_in_at_most_its_fragment_limit_even_of_empty_fragments() {
        assert_eq!((max_fragments(4096), max_fragments(16 << 20)), (64, 262_144));
        // 64 fragments (the first, 62 empty ones, the last) make a message.
        let mut frames = vec![frame(false, OP_BINARY, b"a", KEY)];
        frames.extend((0..62).map(|_| frame(false, OP_CONTINUATION, b"", KEY)));
        frames.push(frame(true, OP_CONTINUATION, b"b", KEY));
        let chunks: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
        let (got, result) = run(&mut FrameReader::new(4096), &chunks);
        assert_eq!((got, result), (vec!["bin:ab".to_owned()], Ok(Next::More)));
        // A 65th fragment, empty or not, is refused before the message ends:
        // an endless run of empty ones ends here, not at the size limit.
        let mut flood = vec![frame(false, OP_BINARY, b"", KEY)];
        flood.extend((0..64).map(|_| frame(false, OP_CONTINUATION, b"", KEY)));
        let chunks: Vec<&[u8]> = flood.iter().map(Vec::as_slice).collect();
        assert_eq!(run(&mut FrameReader::new(4096), &chunks).1, Err(FrameError::TooFragmented));
        assert_eq!(crate::websocket::closing::classify(FrameError::TooFragmented), crate::close::CloseReason::TooBig);
    }

    #[test]
    fn close_frames_carry_their_code_and_a_utf8_reason() {
        let mut with_code = 1000u16.to_be_bytes().to_vec();
        with_code.extend_from_slice("bye".as_bytes());
        assert_eq!(
            run(&mut FrameReader::new(4096), &[&frame(true, OP_CLOSE, &with_code, KEY)]).0,
            ["close:Some(1000)"]
        );
        assert_eq!(run(&mut FrameReader::new(4096), &[&frame(true, OP_CLOSE, b"", KEY)]).0, ["close:None"]);
        let mut bad = 1000u16.to_be_bytes().to_vec();
        bad.extend_from_slice(&[0xff, 0xfe]);
        assert_eq!(
            run(&mut FrameReader::new(4096), &[&frame(true, OP_CLOSE, &bad, KEY)]).1,
            Err(FrameError::InvalidUtf8)
        );
    }

    #[test]
    fn text_is_refused_when_utf8_and_an_invalid_payload_when_not() {
        let text = frame(true, OP_TEXT, "héllo".as_bytes(), KEY);
        assert_eq!(run(&mut FrameReader::new(4096), &[&text]).0, ["text refused"]);
        let bad = frame(true, OP_TEXT, &[0x68, 0xc3, 0x28], KEY);
        assert_eq!(run(&mut FrameReader::new(4096), &[&bad]).1, Err(FrameError::InvalidUtf8));
        let cut_in_a_character = frame(false, OP_TEXT, &[0x68, 0xc3], KEY);
        assert_eq!(run(&mut FrameReader::new(4096), &[&cut_in_a_character]).0, ["text refused"]);
        let cut_at_the_end = frame(true, OP_TEXT, &[0x68, 0xc3], KEY);
        assert_eq!(run(&mut FrameReader::new(4096), &[&cut_at_the_end]).1, Err(FrameError::InvalidUtf8));
    }

    fn text_reader() -> FrameReader {
        FrameReader::taking(4096, Messages::TextAndBinary)
    }

    #[test]
    fn a_reader_taking_text_hands_whole_messages_over() {
        let whole = frame(true, OP_TEXT, "héllo".as_bytes(), KEY);
        assert_eq!(run(&mut text_reader(), &[&whole]).0, ["text:héllo"]);
        // "é" is c3 a9 and "€" e2 82 ac: cut inside both, a ping between.
        let a = frame(false, OP_TEXT, &[b'h', 0xc3], KEY);
        let ping = frame(true, OP_PING, b"", KEY);
        let b = frame(false, OP_CONTINUATION, &[0xa9, 0xe2], KEY);
        let c = frame(true, OP_CONTINUATION, &[0x82, 0xac], KEY);
        let mut r = text_reader();
        assert_eq!(run(&mut r, &[&a, &ping, &b, &c]), (vec!["ping:".into(), "text:hé€".into()], Ok(Next::More)));
        assert!(r.is_idle());
        let empty = frame(true, OP_TEXT, b"", KEY);
        assert_eq!(run(&mut text_reader(), &[&empty]).0, ["text:"]);
        let binary = frame(true, OP_BINARY, &[0xff], KEY);
        assert_eq!(run(&mut text_reader(), &[&binary]).0, ["bin:\u{fffd}"]);
    }

    #[test]
    fn invalid_text_fails_at_the_fragment_that_breaks_it() {
        let a = frame(false, OP_TEXT, b"ok", KEY);
        // 0xf4 0x90 would be above U+10FFFF: no continuation can mend it.
        let b = frame(false, OP_CONTINUATION, &[0xf4, 0x90], KEY);
        let mut r = text_reader();
        let (got, result) = run(&mut r, &[&a, &b]);
        assert!(got.is_empty());
        assert_eq!(result, Err(FrameError::InvalidUtf8), "before the message ends");
        let bad_start = frame(false, OP_TEXT, &[0xc0], KEY);
        assert_eq!(run(&mut text_reader(), &[&bad_start]).1, Err(FrameError::InvalidUtf8));
        let a = frame(false, OP_TEXT, &[b'x', 0xe2, 0x82], KEY);
        let unfinished = frame(true, OP_CONTINUATION, b"", KEY);
        assert_eq!(run(&mut text_reader(), &[&a, &unfinished]).1, Err(FrameError::InvalidUtf8), "cut at the end");
    }

    #[test]
    fn invalid_text_fails_before_its_frame_is_whole() {
        // One frame sent in three reads; the second breaks the text.
        let mut bytes = frame(true, OP_TEXT, &[b'a', b'b', 0xf4, 0x90, b'c', b'd'], KEY);
        let mut r = text_reader();
        let n = bytes.len();
        let (head, rest) = bytes.split_at_mut(n - 4);
        let (broken, tail) = rest.split_at_mut(2);
        let mut got = 0;
        assert_eq!(
            r.feed(head, &mut |_| {
                got += 1;
                Next::More
            }),
            Ok(Next::More),
            "valid so far"
        );
        assert_eq!(
            r.feed(broken, &mut |_| {
                got += 1;
                Next::More
            }),
            Err(FrameError::InvalidUtf8),
            "the tail {tail:?} never read"
        );
        assert_eq!(got, 0);
        // Valid text cut anywhere comes out whole, unmasked once.
        let text = "hé€𝄞!".as_bytes();
        let mut lead = frame(false, OP_TEXT, &text[..3], KEY);
        let cont = frame(true, OP_CONTINUATION, &text[3..], KEY);
        lead.extend(&cont);
        for cut in 1..lead.len() {
            for second in cut..lead.len() {
                let mut r = text_reader();
                let (got, result) = run(&mut r, &[&lead[..cut], &lead[cut..second], &lead[second..]]);
                assert_eq!((got, result), (vec!["text:hé€𝄞!".to_owned()], Ok(Next::More)), "cut at {cut} and {second}");
                assert!(r.is_idle());
            }
        }
    }

    #[test]
    fn bytes_read_past_the_upgrade_are_read_first() {
        let mut r = text_reader();
        let first = frame(true, OP_TEXT, b"one", KEY);
        let second = frame(true, OP_BINARY, b"two", KEY);
        r.unread(&first[..4]);
        let mut rest = first[4..].to_vec();
        rest.extend(&second);
        assert_eq!(run(&mut r, &[&[], &rest]).0, ["text:one", "bin:two"]);
        assert!(r.is_idle());
    }

    #[test]
    fn stop_keeps_the_rest_for_the_next_call() {
        let mut r = FrameReader::new(4096);
        let mut bytes = frame(true, OP_BINARY, b"hello", KEY);
        bytes.extend(frame(true, OP_BINARY, b"after", KEY));
        bytes.extend(&frame(true, OP_BINARY, b"cut", KEY)[..3]);
        let mut got = 0;
        let result = r.feed(&mut bytes, &mut |_| {
            got += 1;
            Next::Stop
        });
        assert_eq!((got, result), (1, Ok(Next::Stop)));
        assert!(!r.is_idle(), "the rest is kept");
        let (got, _) = run(&mut r, &[&[]]);
        assert_eq!(got, ["bin:after"], "and read on the next call");
        let (got, _) = run(&mut r, &[&frame(true, OP_BINARY, b"cut", KEY)[3..]]);
        assert_eq!(got, ["bin:cut"]);
        assert!(r.is_idle());
    }
}
