//! How a socket's read side ended, and the linger that follows the server's
//! close frame.
//!
//! A socket closed while the peer still sends is reset by the kernel (unread
//! bytes turn the close into an RST), and an RST makes the peer's kernel drop
//! whatever it had not yet handed to the peer, our Error and close frame
//! included: the player sees 1006 and no reason. So after its close frame the
//! server half-closes (FIN) and keeps reading, discarding everything, until the
//! peer's close frame, its FIN, [`LINGER`] or [`LINGER_BYTES`].
//!
//! [`classify`] turns a read error into a close reason and a [`ReadEnd`];
//! [`Linger::after`] decides from the [`ReadEnd`] how to linger. Both are pure.

use super::socket::Reader;
use crate::close::CloseReason;
use futures_util::StreamExt;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::{self, Message};

/// Longest the server reads on after its close frame.
pub const LINGER: Duration = Duration::from_secs(2);

/// Most bytes the server reads (and discards) after its close frame.
pub const LINGER_BYTES: usize = 1 << 20;

/// Where the read side stands when the session ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadEnd {
    /// Still framed: the peer may still send, and its frames can be parsed.
    Open,
    /// The peer sent its close frame: nothing more comes.
    PeerClosed,
    /// The peer's bytes stopped making frames (a protocol error, a frame too
    /// big): what follows is read as raw bytes.
    Broken,
    /// The connection is gone (FIN, reset, an I/O error).
    Gone,
}

/// How the session reads after its close frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linger {
    /// Not at all: the peer closed, or the connection is gone.
    No,
    /// Frames, until the peer's close frame (or FIN, [`LINGER`],
    /// [`LINGER_BYTES`]).
    Frames,
    /// Raw bytes, until the peer's FIN (or [`LINGER`], [`LINGER_BYTES`]).
    Raw,
}

impl Linger {
    /// How to linger after closing for `reason` with the read side at `end`.
    /// A silent peer (peer timeout) sends nothing worth waiting for.
    pub fn after(end: ReadEnd, reason: CloseReason) -> Linger {
        match end {
            ReadEnd::PeerClosed | ReadEnd::Gone => Linger::No,
            ReadEnd::Open if reason == CloseReason::PeerTimeout => Linger::No,
            ReadEnd::Open => Linger::Frames,
            ReadEnd::Broken => Linger::Raw,
        }
    }
}

/// Maps a websocket read error to a close reason and where the read side
/// stands: a FIN without a close frame is a plain disconnect; bad framing is a
/// protocol error (1002), text that is not UTF-8 an invalid payload (1007), a
/// frame or message over the limit too big (1009); anything else means the
/// connection is gone.
pub fn classify(e: &tungstenite::Error) -> (CloseReason, ReadEnd) {
    match e {
        tungstenite::Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => {
            (CloseReason::ClientClosed, ReadEnd::Gone)
        }
        tungstenite::Error::Protocol(_) => (CloseReason::ProtocolError, ReadEnd::Broken),
        tungstenite::Error::Utf8(_) => (CloseReason::InvalidUtf8, ReadEnd::Broken),
        tungstenite::Error::Capacity(_) => (CloseReason::TooBig, ReadEnd::Broken),
        _ => (CloseReason::ClientClosed, ReadEnd::Gone),
    }
}

/// Reads and discards as `how` says, bounded by [`LINGER`] and
/// [`LINGER_BYTES`]. Returns the bytes discarded (frame payloads for
/// [`Linger::Frames`]).
pub async fn linger(reader: &mut Reader, how: Linger) -> usize {
    let deadline = Instant::now() + LINGER;
    let mut discarded = 0;
    match how {
        Linger::No => {}
        Linger::Frames => {
            while discarded < LINGER_BYTES {
                match tokio::time::timeout_at(deadline, reader.next()).await {
                    Ok(Some(Ok(Message::Close(_)) | Err(_)) | None) | Err(_) => break,
                    Ok(Some(Ok(m))) => discarded += m.len(),
                }
            }
        }
        Linger::Raw => {
            let mut buf = [0u8; 4096];
            while discarded < LINGER_BYTES {
                match tokio::time::timeout_at(deadline, reader.get_mut().read(&mut buf)).await {
                    Ok(Ok(0) | Err(_)) | Err(_) => break,
                    Ok(Ok(n)) => discarded += n,
                }
            }
        }
    }
    discarded
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_tungstenite::tungstenite::error::CapacityError;

    #[test]
    fn a_fin_without_a_close_frame_is_a_plain_disconnect() {
        let fin = tungstenite::Error::Protocol(ProtocolError::ResetWithoutClosingHandshake);
        assert_eq!(classify(&fin), (CloseReason::ClientClosed, ReadEnd::Gone));
        let reset = tungstenite::Error::Io(std::io::ErrorKind::ConnectionReset.into());
        assert_eq!(classify(&reset), (CloseReason::ClientClosed, ReadEnd::Gone));
    }

    #[test]
    fn framing_faults_are_the_peers_and_break_the_stream() {
        for p in [
            ProtocolError::NonZeroReservedBits,
            ProtocolError::UnmaskedFrameFromClient,
            ProtocolError::FragmentedControlFrame,
            ProtocolError::ControlFrameTooBig,
            ProtocolError::UnknownControlFrameType(11),
            ProtocolError::UnknownDataFrameType(3),
            ProtocolError::UnexpectedContinueFrame,
            ProtocolError::InvalidCloseSequence,
        ] {
            assert_eq!(classify(&tungstenite::Error::Protocol(p)), (CloseReason::ProtocolError, ReadEnd::Broken));
        }
        let big = tungstenite::Error::Capacity(CapacityError::MessageTooLong { size: 9000, max_size: 4096 });
        assert_eq!(classify(&big), (CloseReason::TooBig, ReadEnd::Broken));
    }

    #[test]
    fn the_linger_follows_the_read_side() {
        assert_eq!(Linger::after(ReadEnd::Open, CloseReason::InputFlood), Linger::Frames);
        assert_eq!(Linger::after(ReadEnd::Open, CloseReason::Shutdown), Linger::Frames);
        assert_eq!(Linger::after(ReadEnd::Open, CloseReason::PeerTimeout), Linger::No);
        assert_eq!(Linger::after(ReadEnd::Broken, CloseReason::ProtocolError), Linger::Raw);
        assert_eq!(Linger::after(ReadEnd::PeerClosed, CloseReason::ClientClosed), Linger::No);
        assert_eq!(Linger::after(ReadEnd::Gone, CloseReason::ClientClosed), Linger::No);
    }
}
