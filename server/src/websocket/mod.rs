//! The websocket protocol (RFC 6455), server side, in one place and with no
//! I/O: bytes and headers in, decisions and bytes out. The hub, the handshake
//! task and the conformance suite's echo carry them out on their sockets.
//!
//! - [`handshake`]: the opening handshake (section 4.2): which upgrade
//!   requests are refused and why, and the `Sec-WebSocket-Accept` of the rest.
//! - [`reader`]: the client's frames in (section 5), with no buffer of their
//!   own while a connection is idle; [`utf8`]: text checked as it arrives.
//! - [`frame`]: the server's frames out, encoded once and written as they
//!   are by every socket.
//! - [`closing`]: the closing rules (sections 7 and 8.1): how the read side
//!   ended, the close code of a framing fault, and the linger after the
//!   server's close frame.
//!
//! The opcodes and the control frames' limit, which both directions share,
//! are here.

pub mod closing;
pub mod frame;
pub mod handshake;
pub mod reader;
pub mod utf8;

/// A frame's opcode (RFC 6455 section 5.2); the other values are reserved
/// and refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Opcode {
    /// The next fragment of a message.
    Continuation = 0x0,
    /// A text message (its first frame).
    Text = 0x1,
    /// A binary message (its first frame).
    Binary = 0x2,
    /// A close frame: a status code and a UTF-8 reason, both optional.
    Close = 0x8,
    /// A ping, to be answered with a pong carrying its payload.
    Ping = 0x9,
    /// A pong.
    Pong = 0xA,
}

impl Opcode {
    /// The opcode of a frame's low 4 bits; `None` for a reserved value.
    pub fn from_bits(bits: u8) -> Option<Opcode> {
        match bits {
            0x0 => Some(Opcode::Continuation),
            0x1 => Some(Opcode::Text),
            0x2 => Some(Opcode::Binary),
            0x8 => Some(Opcode::Close),
            0x9 => Some(Opcode::Ping),
            0xA => Some(Opcode::Pong),
            _ => None,
        }
    }

    /// Its value, the low 4 bits of a frame's first byte.
    pub fn bits(self) -> u8 {
        self as u8
    }

    /// True for close, ping and pong: at most [`MAX_CONTROL_PAYLOAD`] bytes,
    /// never fragmented.
    pub fn is_control(self) -> bool {
        self.bits() & 0x08 != 0
    }
}

/// Longest payload of a control frame, bytes (RFC 6455 section 5.5).
pub const MAX_CONTROL_PAYLOAD: usize = 125;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every opcode, in value order.
    const ALL: [Opcode; 6] =
        [Opcode::Continuation, Opcode::Text, Opcode::Binary, Opcode::Close, Opcode::Ping, Opcode::Pong];

    #[test]
    fn opcodes_read_back_and_reserved_values_are_none() {
        for op in ALL {
            assert_eq!(Opcode::from_bits(op.bits()), Some(op));
        }
        let reserved = (0..16).filter(|b| Opcode::from_bits(*b).is_none()).count();
        assert_eq!(reserved, 16 - ALL.len());
        let control: Vec<_> = ALL.into_iter().filter(|o| o.is_control()).collect();
        assert_eq!(control, [Opcode::Close, Opcode::Ping, Opcode::Pong]);
    }
}
