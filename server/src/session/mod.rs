//! A player socket's handshake: from the upgraded connection to the player's
//! admission, in a task of its own; then the socket is handed to the hub
//! ([`crate::hub`]) the tick driver owns, and the task ends.
//!
//! - [`task`]: a socket's handshake, from the Hello to admission.
//! - [`command`]: what a handshake asks of the tick driver.
//! - [`admit`]: from a read Hello to the join, whatever the transport.
//!
//! The websocket protocol itself is [`crate::websocket`]; the connection,
//! before and after the handover, [`crate::socket`].

pub mod admit;
pub mod command;
pub mod task;

pub use admit::Refused;
pub use command::{Ask, Command, Join, COMMAND_QUEUE};
pub use task::{serve, SessionContext};
