//! What a session (or the admin API) asks of the tick driver, over one
//! bounded queue, and the answers it waits for. The driver hands each ask to
//! the shard core.

use super::Outbox;
use crate::order::{Order, OrderOutcome};
use crate::resume::{Claimed, ResumeError};
use crate::shard::find::{Found, PlayerQuery};
use crate::shard::{Admitted, Busy, LinkId};
use mino_protocol::client::Direction;
use mino_protocol::PlayerId;
use std::sync::Arc;
use tokio::sync::oneshot;

/// Capacity of the command queue from sessions to the tick driver.
pub const COMMAND_QUEUE: usize = 8192;

/// What sessions ask of the tick driver.
#[derive(Debug)]
pub enum Command {
    /// Hold a place for a player whose resume ticket is being checked.
    Reserve {
        /// Ok, or busy with a retry-after.
        reply: oneshot::Sender<Result<(), Busy>>,
    },
    /// Give back a place held by `Reserve` (the resume was refused).
    Unreserve,
    /// Standalone: claim the session a ticket names (kept in memory there).
    ClaimLocal {
        /// The ticket bytes from the Hello.
        ticket: Vec<u8>,
        /// The account of the Hello's verified token.
        account: Option<String>,
        /// Guests are refused: a guest session may not be resumed.
        require_account: bool,
        /// The claimed session or why not.
        reply: oneshot::Sender<Result<Claimed, ResumeError>>,
    },
    /// Standalone: an account signs in (into a reserved place).
    LoginLocal {
        /// The token's account.
        account: String,
        /// The display name.
        name: String,
        /// Its session taken over, or a fresh one.
        reply: oneshot::Sender<Result<Claimed, Busy>>,
    },
    /// Clustered: a player id for an account's first session.
    NewId {
        /// The id, or busy when none is left.
        reply: oneshot::Sender<Result<PlayerId, Busy>>,
    },
    /// Admit a player: new (`resume` is `None`) or resumed into a reserved place.
    Join {
        /// Validated display name (a resumed session keeps its own).
        name: String,
        /// The claimed session of a resume.
        resume: Option<Claimed>,
        /// The socket's outbox; admitted, it gets every tick's frames (held
        /// until the session writes the welcome), and the driver tells the
        /// session through it to close or move.
        outbox: Arc<Outbox>,
        /// Where the answer goes.
        reply: oneshot::Sender<Result<Admitted, Busy>>,
    },
    /// A player's new wanted direction.
    Input {
        /// Who.
        player: PlayerId,
        /// Where to.
        dir: Direction,
        /// The input's sequence number.
        seq: u32,
    },
    /// Which players are these (area of interest)?
    Names {
        /// The ids asked about.
        ids: Vec<u32>,
        /// The encoded Names message.
        reply: oneshot::Sender<bytes::Bytes>,
    },
    /// A chat line (validated).
    Chat {
        /// Who.
        player: PlayerId,
        /// What.
        text: String,
    },
    /// The admin API: carry out an operator's order if it concerns this shard.
    Order {
        /// The order.
        order: Order,
        /// What became of it here.
        reply: oneshot::Sender<OrderOutcome>,
    },
    /// The admin API: the players here that a query matches.
    Find {
        /// The query.
        query: PlayerQuery,
        /// Most players answered.
        limit: usize,
        /// The players found, by id.
        reply: oneshot::Sender<Vec<Found>>,
    },
    /// The player's socket closed.
    Leave {
        /// Who.
        player: PlayerId,
        /// Which of its sockets (a replaced socket's leave is ignored).
        link: LinkId,
    },
}
