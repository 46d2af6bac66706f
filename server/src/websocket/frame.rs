//! The server's websocket frames (RFC 6455 section 5.2), encoded once and
//! written as they are. A server's frames are never masked, so one encoded
//! frame is the same bytes for every socket: the snapshot of a tick is framed
//! once and every socket writes those exact bytes.

use super::{Opcode, MAX_CONTROL_PAYLOAD};
use bytes::{BufMut, Bytes, BytesMut};

/// One final (FIN) unmasked frame of `opcode` carrying `payload`.
pub fn encode(opcode: Opcode, payload: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(payload.len() + 10);
    put_header(&mut out, opcode, payload.len());
    out.extend_from_slice(payload);
    out.freeze()
}

/// Puts the header (2, 4 or 10 bytes) of one final unmasked frame of
/// `opcode` whose payload is `len` bytes; the payload follows it.
pub fn put_header(out: &mut impl BufMut, opcode: Opcode, len: usize) {
    out.put_u8(0x80 | opcode.bits());
    if len < 126 {
        out.put_u8(len as u8);
    } else if len <= usize::from(u16::MAX) {
        out.put_u8(126);
        out.put_u16(len as u16);
    } else {
        out.put_u8(127);
        out.put_u64(len as u64);
    }
}

/// The payload of an unmasked frame encoded by [`encode`]: what was framed
/// (take it from a `Bytes` with `Bytes::slice_ref`, zero-copy). Empty for
/// bytes too short to be a frame.
pub fn payload(frame: &[u8]) -> &[u8] {
    let len = match frame.get(1).map(|b| b & 0x7f) {
        Some(126) => 4,
        Some(127) => 10,
        Some(_) => 2,
        None => return &[],
    };
    &frame[len.min(frame.len())..]
}

/// A binary message frame.
pub fn binary(payload: &[u8]) -> Bytes {
    encode(Opcode::Binary, payload)
}

/// A text message frame (the game never sends one; the conformance suite's
/// echo does).
pub fn text(payload: &str) -> Bytes {
    encode(Opcode::Text, payload.as_bytes())
}

/// An empty ping: the same two bytes for every socket, never allocated.
pub fn ping() -> Bytes {
    const EMPTY_PING: [u8; 2] = [0x80 | Opcode::Ping as u8, 0];
    Bytes::from_static(&EMPTY_PING)
}

/// A pong echoing `payload` (cut to 125 bytes).
pub fn pong(payload: &[u8]) -> Bytes {
    encode(Opcode::Pong, &payload[..payload.len().min(MAX_CONTROL_PAYLOAD)])
}

/// A close frame with `code` and `reason` (cut to fit, on a character boundary).
pub fn close(code: u16, reason: &str) -> Bytes {
    let mut end = reason.len().min(MAX_CONTROL_PAYLOAD - 2);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let mut payload = Vec::with_capacity(2 + end);
    payload.extend_from_slice(&code.to_be_bytes());
    payload.extend_from_slice(&reason.as_bytes()[..end]);
    encode(Opcode::Close, &payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_is_what_was_framed_whatever_its_length() {
        for len in [0, 125, 126, 65_535, 65_536] {
            let body: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let framed = binary(&body);
            assert_eq!(payload(&framed), &body[..]);
        }
        assert!(payload(&[]).is_empty());
    }
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;

    fn tungstenite_binary(payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        Frame::message(payload.to_vec(), OpCode::Data(Data::Binary), true).format(&mut out).expect("format");
        out
    }

    #[test]
    fn binary_frames_match_tungstenite_for_every_length_class() {
        for len in [0, 1, 125, 126, 127, 65_535, 65_536, 200_000] {
            let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
            assert_eq!(binary(&payload)[..], tungstenite_binary(&payload)[..], "length {len}");
        }
    }

    #[test]
    fn close_carries_code_and_a_cut_reason() {
        let f = close(4009, "connection too slow");
        assert_eq!(&f[..4], &[0x88, 21, 0x0f, 0xa9]);
        assert_eq!(&f[4..], b"connection too slow");
        let long = close(1000, &"é".repeat(100));
        assert!(long.len() <= 2 + MAX_CONTROL_PAYLOAD);
        assert!(std::str::from_utf8(&long[4..]).is_ok(), "cut on a char boundary");
    }

    #[test]
    fn ping_and_pong_are_control_frames() {
        assert_eq!(&ping()[..], &[0x89, 0]);
        assert_eq!(&pong(b"ab")[..], &[0x8a, 2, b'a', b'b']);
        assert_eq!(pong(&[0; 300]).len(), 2 + MAX_CONTROL_PAYLOAD);
    }
}
