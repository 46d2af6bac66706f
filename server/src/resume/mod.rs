//! Resume: a player whose socket closed, or whose shard died or drained,
//! continues with the same id, in place, by presenting its resume ticket in the
//! next Hello — on the same shard or on any other shard of the place.
//!
//! - [`ticket`]: the secret (issue time + 128 random bits), single use: every
//!   Welcome and Move carries a fresh one.
//! - [`local`]: standalone, the tick loop keeps tickets and last positions in
//!   memory.
//! - [`store`]: clustered, tickets and sessions live in Redis with a TTL; a
//!   claim is one Lua script (atomic), which also returns the last snapshot of
//!   the shard that held the player, for its position.
//!
//! Refusals, each with its own close code: a malformed, unknown or forged
//! ticket (4014), a ticket already claimed (4015), an expired one (4016), a
//! ticket whose session another claim is taking over at this very moment
//! (4017). A valid ticket whose session is still live (a second tab, a
//! half-open socket) takes the session over: the older socket is closed with
//! "session replaced" (4013), after which a client must not reconnect.

pub mod local;
pub mod store;
pub mod ticket;

use crate::close::CloseReason;
use mino_protocol::{PlayerId, ShardId};
pub use ticket::Ticket;

/// Why a resume was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    /// Not a ticket of ours (malformed, unknown, forged, a player id).
    #[error("invalid resume ticket")]
    Invalid,
    /// Already claimed once.
    #[error("resume ticket already used")]
    Used,
    /// Older than the ticket TTL.
    #[error("resume ticket expired")]
    Expired,
    /// Another claim of the same session is in progress.
    #[error("session is being resumed elsewhere")]
    Live,
    /// Redis could not be asked (clustered): retry later.
    #[error("resume unavailable")]
    Unavailable,
    /// The ticket's session is another account's than the Hello's token.
    #[error("resume ticket of another account")]
    OtherAccount,
    /// Guests are not admitted and the ticket's session is a guest's.
    #[error("resume ticket of a guest session")]
    GuestSession,
}

/// What a claim must check of the session's account.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccountGate<'a> {
    /// The account the Hello's verified token names: a session of another
    /// account is refused ([`ResumeError::OtherAccount`]).
    pub account: Option<&'a str>,
    /// Guests are not admitted: a guest session is refused
    /// ([`ResumeError::GuestSession`]).
    pub require: bool,
}

impl AccountGate<'_> {
    /// Checks a session's account (`None`: a guest's).
    ///
    /// Errors: [`ResumeError::OtherAccount`], [`ResumeError::GuestSession`].
    pub fn check(&self, session: Option<&str>) -> Result<(), ResumeError> {
        match (self.account, session) {
            (Some(want), Some(have)) if want != have => Err(ResumeError::OtherAccount),
            (Some(_), None) => Err(ResumeError::OtherAccount),
            (None, None) if self.require => Err(ResumeError::GuestSession),
            _ => Ok(()),
        }
    }
}

/// A session claimed by a resume.
#[derive(Clone, Debug, PartialEq)]
pub struct Claimed {
    /// The player's id, kept across the resume.
    pub player: PlayerId,
    /// Its display name.
    pub name: String,
    /// Where it stood in the last snapshot of the shard that held it.
    pub position: Option<(f32, f32)>,
    /// The session's new generation (raised by every claim).
    pub generation: u64,
    /// The shard that held the session before, if another one.
    pub previous_owner: Option<ShardId>,
    /// The fresh ticket for the Welcome.
    pub ticket: Ticket,
    /// The account the session belongs to (`None`: a guest's).
    pub account: Option<String>,
    /// True for an account's first session: a new player, placed at a spawn
    /// point and welcomed as new.
    pub fresh: bool,
}

impl Claimed {
    /// An account's first session: a new player `player` named `name`,
    /// generation 0, to be placed at a spawn point, with `ticket`.
    pub fn fresh_account(player: PlayerId, name: &str, ticket: Ticket, account: &str) -> Claimed {
        Claimed {
            player,
            name: name.to_owned(),
            position: None,
            generation: 0,
            previous_owner: None,
            ticket,
            account: Some(account.to_owned()),
            fresh: true,
        }
    }
}

impl From<ResumeError> for CloseReason {
    fn from(e: ResumeError) -> Self {
        match e {
            ResumeError::Invalid => CloseReason::TicketInvalid,
            ResumeError::Used => CloseReason::TicketUsed,
            ResumeError::Expired => CloseReason::TicketExpired,
            ResumeError::Live | ResumeError::Unavailable => CloseReason::TicketLive,
            ResumeError::OtherAccount => CloseReason::TicketInvalid,
            ResumeError::GuestSession => CloseReason::AuthRequired,
        }
    }
}
