//! What sessions and the tick loop say to each other.

use crate::admission::Refusal;
use crate::resume::{Claimed, ResumeError, Ticket};
use crate::session::{CloseReason, Outbox};
use crate::shard::Admitted;
use mino_protocol::client::Direction;
use mino_protocol::PlayerId;
use std::sync::Arc;
use tokio::sync::oneshot;

/// What sessions ask of the tick loop.
#[derive(Debug)]
pub enum Command {
    /// Hold a place for a player whose resume ticket is being checked.
    Reserve {
        /// Ok, or busy with a retry-after (ms).
        reply: oneshot::Sender<Result<(), (Refusal, u32)>>,
    },
    /// Give back a place held by `Reserve` (the resume was refused).
    Unreserve,
    /// Standalone: claim the session a ticket names (kept in memory here).
    ClaimLocal {
        /// The ticket bytes from the Hello.
        ticket: Vec<u8>,
        /// The claimed session or why not.
        reply: oneshot::Sender<Result<Claimed, ResumeError>>,
    },
    /// Admit a player: new (`resume` is `None`) or resumed into a reserved place.
    Join {
        /// Validated display name (a resumed session keeps its own).
        name: String,
        /// The claimed session of a resume.
        resume: Option<Claimed>,
        /// The socket's outbox; admitted, it gets every tick's frames (held
        /// until the session writes the welcome), and the tick loop tells the
        /// session through it to close or move.
        outbox: Arc<Outbox>,
        /// Where the answer goes.
        reply: oneshot::Sender<JoinReply>,
    },
    /// A player's new wanted direction.
    Input {
        /// Who.
        player: PlayerId,
        /// Where to.
        dir: Direction,
    },
    /// A chat line (validated).
    Chat {
        /// Who.
        player: PlayerId,
        /// What.
        text: String,
    },
    /// The player's socket closed.
    Leave {
        /// Who.
        player: PlayerId,
        /// Which of its sessions (a replaced session's leave is ignored).
        link: u64,
    },
}

/// The answer to [`Command::Join`].
#[derive(Debug)]
pub enum JoinReply {
    /// Welcome; the outbox gets frames from the next tick on.
    Admitted {
        /// The welcome.
        admitted: Admitted,
        /// This session's link number (for `Leave`).
        link: u64,
    },
    /// Busy: retry after `retry_after_ms`.
    Refused {
        /// Why.
        refusal: Refusal,
        /// Suggested wait, ms.
        retry_after_ms: u32,
    },
}

/// What the tick loop tells one session.
#[derive(Debug)]
pub enum Control {
    /// Close with this reason (session replaced, dropped after a pause).
    Close(CloseReason),
    /// Draining: send Move with this fresh ticket, then close.
    Move(Ticket),
}
