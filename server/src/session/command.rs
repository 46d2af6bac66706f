//! What a handshake (or the admin API) asks of the tick driver, over one
//! bounded queue, and the answers it waits for. The driver hands each ask to
//! the shard core, and the socket itself to its hub (`crate::hub::Hub`).

use crate::close::CloseReason;
use crate::hub::conn::Handover;
use crate::hub::{Handed, Joined, Welcome};
use crate::order::{Order, OrderOutcome};
use crate::resume::{Claimed, ResumeError};
use crate::shard::find::{Found, PlayerQuery};
use crate::shard::{Busy, LinkId};
use bytes::Bytes;
use mino_protocol::PlayerId;
use tokio::sync::oneshot;

/// Capacity of the command queue from handshakes to the tick driver.
pub const COMMAND_QUEUE: usize = 8192;

/// What handshakes (and the admin API) ask of the tick driver: a join,
/// which carries its socket and is answered apart from the rest (a panic of
/// the core on it must still close that socket with a code), or any other
/// ask.
#[derive(Debug)]
pub enum Command {
    /// Admit a player and take its socket into the hub.
    Join(Box<Join>),
    /// Anything else.
    Ask(Ask),
}

/// Admit a player (new, or resumed into a reserved place) and take its
/// socket into the hub; a refused one is closed there with Busy.
#[derive(Debug)]
pub struct Join {
    /// Validated display name (a resumed session keeps its own).
    pub name: String,
    /// The claimed session of a resume.
    pub resume: Option<Claimed>,
    /// The account the session belongs to (`None`: a guest's).
    pub account: Option<Box<str>>,
    /// What the Hello said the client takes (the Welcome grants the known
    /// ones).
    pub capabilities: mino_protocol::client::Capabilities,
    /// The socket and what was read of it, or a session's queue.
    pub conn: Handed,
    /// When the welcome goes out: at once, or held until
    /// [`Ask::ReleaseWelcome`] (clustered: until the session is stored in
    /// Redis).
    pub welcome: Welcome,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Result<Joined, Busy>>,
}

/// What handshakes and the admin API ask of the tick driver, besides a join.
#[derive(Debug)]
pub enum Ask {
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
    /// Write the welcome held at a [`Join`] ([`Welcome::Held`]).
    ReleaseWelcome {
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
            Command::Join(_) => "join",
            Command::Ask(ask) => ask.label(),
        }
    }
}

impl Ask {
    /// Its name, for logs.
    pub fn label(&self) -> &'static str {
        match self {
            Ask::Reserve { .. } => "reserve",
            Ask::Unreserve => "unreserve",
            Ask::ClaimLocal { .. } => "claim_local",
            Ask::LoginLocal { .. } => "login_local",
            Ask::NewId { .. } => "new_id",
            Ask::Order { .. } => "order",
            Ask::Find { .. } => "find",
            Ask::ReleaseWelcome { .. } => "release_welcome",
            Ask::Refuse { .. } => "refuse",
        }
    }
}

impl From<Ask> for Command {
    fn from(ask: Ask) -> Command {
        Command::Ask(ask)
    }
}

impl From<Join> for Command {
    fn from(join: Join) -> Command {
        Command::Join(Box::new(join))
    }
}
