//! Messages on a session's reliable stream: each one its length, 4 bytes
//! little-endian, then the message (a FlatBuffers `ClientMessage` one way,
//! a `ServerMessage` the other: the bytes a websocket message carries).
//! The length prefix replaces the websocket's framing; nothing else does.
//!
//! ```text
//! stream  := message*
//! message := len (u32 le) bytes[len]
//! ```

use bytes::{Buf, BufMut, Bytes, BytesMut};
use wtransport::RecvStream;

/// Bytes of the length prefix.
pub const PREFIX_BYTES: usize = 4;

/// Bytes taken off the stream at once, at most.
const READ_CHUNK: usize = 4096;

/// Why no more messages come from a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    /// A length over the message limit (the websocket's 1009).
    #[error("message of {0} bytes over the limit")]
    TooBig(usize),
    /// The stream ended inside a message.
    #[error("the stream ended inside a message")]
    Truncated,
    /// The stream failed (reset, or the connection is gone).
    #[error("the stream failed")]
    Failed,
}

/// Reads length-prefixed messages off a stream; what it has read of an
/// unfinished message stays in it, so [`MessageReader::next`] may be
/// cancelled between reads (as in a `select!`) and called again.
#[derive(Debug)]
pub struct MessageReader {
    buf: BytesMut,
    max: usize,
}

impl MessageReader {
    /// A reader of messages up to `max` bytes each.
    pub fn new(max: usize) -> MessageReader {
        MessageReader { buf: BytesMut::new(), max }
    }

    /// A whole message already read, if any.
    ///
    /// Errors: [`FramingError::TooBig`].
    pub fn take(&mut self) -> Result<Option<Bytes>, FramingError> {
        let Some(prefix) = self.buf.get(..PREFIX_BYTES) else { return Ok(None) };
        let len = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
        if len > self.max {
            return Err(FramingError::TooBig(len));
        }
        if self.buf.len() < PREFIX_BYTES + len {
            return Ok(None);
        }
        self.buf.advance(PREFIX_BYTES);
        Ok(Some(self.buf.split_to(len).freeze()))
    }

    /// Feeds bytes read off the stream (for tests and [`MessageReader::next`]).
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next message; `None` when the stream ended between messages.
    /// Cancel-safe.
    ///
    /// Errors: [`FramingError`].
    pub async fn next(&mut self, stream: &mut RecvStream) -> Result<Option<Bytes>, FramingError> {
        loop {
            if let Some(message) = self.take()? {
                return Ok(Some(message));
            }
            // quinn's own received bytes, not a copy into a buffer of ours:
            // a buffer on this future's stack would be held, across the
            // await, in every session's task for as long as it lives (4 KB).
            match stream.quic_stream_mut().read_chunk(READ_CHUNK, true).await {
                Ok(Some(chunk)) => self.feed(&chunk.bytes),
                Ok(None) if self.buf.is_empty() => return Ok(None),
                Ok(None) => return Err(FramingError::Truncated),
                Err(_) => return Err(FramingError::Failed),
            }
        }
    }
}

/// Appends `message` with its length prefix to `out`.
pub fn put(out: &mut BytesMut, message: &[u8]) {
    out.reserve(PREFIX_BYTES + message.len());
    out.put_u32_le(message.len() as u32);
    out.extend_from_slice(message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_come_whole_whatever_the_reads() {
        let mut wire = BytesMut::new();
        put(&mut wire, b"hello");
        put(&mut wire, b"");
        put(&mut wire, &[7u8; 300]);
        let mut reader = MessageReader::new(1000);
        let mut got = Vec::new();
        for byte in wire.iter() {
            reader.feed(&[*byte]);
            while let Some(m) = reader.take().expect("within the limit") {
                got.push(m);
            }
        }
        assert_eq!(got.len(), 3);
        assert_eq!(&got[0][..], b"hello");
        assert!(got[1].is_empty());
        assert_eq!(got[2].len(), 300);
    }

    #[test]
    fn a_length_over_the_limit_is_refused_before_its_bytes_come() {
        let mut reader = MessageReader::new(16);
        reader.feed(&17u32.to_le_bytes());
        assert_eq!(reader.take(), Err(FramingError::TooBig(17)));
    }
}
