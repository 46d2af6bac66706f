//! The closing rules: how a socket's read side ended, the close code of a
//! framing fault, and the linger that follows the server's close frame.
//!
//! A socket closed while the peer still sends is reset by the kernel (unread
//! bytes turn the close into an RST), and an RST makes the peer's kernel drop
//! whatever it had not yet handed to the peer, our Error and close frame
//! included: the player sees 1006 and no reason. So after its close frame the
//! server half-closes (FIN) and keeps reading, discarding everything, until the
//! peer's close frame, its FIN, [`LINGER`] or [`LINGER_BYTES`].
//!
//! [`classify`] turns a framing fault into a close reason;
//! [`Linger::after`] decides from the [`ReadEnd`] how to linger. Both are
//! pure; the hub (`crate::hub`) carries the linger out.

use super::reader::FrameError;
use crate::close::CloseReason;
use std::time::Duration;

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

/// Maps a framing fault of the peer's bytes to a close reason: bad framing is
/// a protocol error (1002), a close reason that is not UTF-8 an invalid
/// payload (1007), a message over the limit, in bytes or in fragments, too
/// big (1009). What follows is
/// read as raw bytes ([`ReadEnd::Broken`]).
pub fn classify(e: FrameError) -> CloseReason {
    match e {
        FrameError::Protocol => CloseReason::ProtocolError,
        FrameError::InvalidUtf8 => CloseReason::InvalidUtf8,
        FrameError::TooBig | FrameError::TooFragmented => CloseReason::TooBig,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_faults_map_to_their_close_codes() {
        assert_eq!(classify(FrameError::Protocol), CloseReason::ProtocolError);
        assert_eq!(classify(FrameError::InvalidUtf8), CloseReason::InvalidUtf8);
        assert_eq!(classify(FrameError::TooBig), CloseReason::TooBig);
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
