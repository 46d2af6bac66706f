//! What a handshake (or the admin API) asks of the tick driver, over one
//! bounded queue, and the answers it waits for. The driver hands each ask to
//! the shard core, and the socket itself to its [`super::Hub`].

use super::conn::Handover;
use crate::close::CloseReason;
use crate::order::{Order, OrderOutcome};
use crate::resume::{Claimed, ResumeError, Ticket};
use crate::shard::find::{Found, PlayerQuery};
use crate::shard::{Busy, LinkId};
use bytes::Bytes;
use mino_protocol::PlayerId;
use tokio::sync::oneshot;

/// Capacity of the command queue from handshakes to the tick driver.
pub const COMMAND_QUEUE: usize = 8192;

/// An admitted player, as its handshake task learns it.
#[derive(Debug, Clone, Copy)]
pub struct Joined {
    /// The player's id.
    pub player: PlayerId,
    /// The link its socket is filed under.
    pub link: LinkId,
    /// The resume ticket carried in the welcome.
    pub ticket: Ticket,
    /// Where the player stands as it is welcomed, world units.
    pub position: (f32, f32),
}

/// What handshakes ask of the tick driver.
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
    /// Admit a player (new, or resumed into a reserved place) and take its
    /// socket into the hub; a refused one is closed there with Busy.
    Join {
        /// Validated display name (a resumed session keeps its own).
        name: String,
        /// The claimed session of a resume.
        resume: Option<Claimed>,
        /// The account the session belongs to (`None`: a guest's).
        account: Option<Box<str>>,
        /// The socket and what was read of it.
        conn: Box<Handover>,
        /// Hold the welcome until [`Command::Welcome`] (clustered: until the
        /// session is stored in Redis).
        hold: bool,
        /// Where the answer goes.
        reply: oneshot::Sender<Result<Joined, Busy>>,
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
    /// Write the welcome held at `Join`.
    Welcome {
        /// The joined socket.
        link: LinkId,
    },
    /// Close a socket refused before admission (in the hub, which lingers).
    Refuse {
        /// The socket and what was read of it.
        conn: Box<Handover>,
        /// Why.
        reason: CloseReason,
        /// A frame to write before the error and close frames (a Busy).
        first: Option<Bytes>,
    },
}

impl Command {
    /// Its name, for logs.
    pub fn label(&self) -> &'static str {
        match self {
            Command::Reserve { .. } => "reserve",
            Command::Unreserve => "unreserve",
            Command::ClaimLocal { .. } => "claim_local",
            Command::LoginLocal { .. } => "login_local",
            Command::NewId { .. } => "new_id",
            Command::Join { .. } => "join",
            Command::Order { .. } => "order",
            Command::Find { .. } => "find",
            Command::Welcome { .. } => "welcome",
            Command::Refuse { .. } => "refuse",
        }
    }
}
