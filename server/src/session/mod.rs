//! One websocket player session: the hello handshake, inbound messages with
//! their limits, and the outbox the shard's fan-out writes each tick's frames
//! to (one vectored write a socket a tick).
//!
//! - [`task`]: the task of one socket, from the Hello to the close.
//! - [`command`]: what a session asks of the tick driver.
//! - [`socket`]: the upgraded socket's two halves (our own frames are
//!   [`crate::ws_frame`]).
//! - [`outbox`]: a socket's write side, shared with the [`fanout`], which
//!   writes every tick to every socket; [`batch`]: what a blocked socket keeps.
//! - [`rate_limit`]: token buckets for inputs and chat.

pub mod batch;
pub mod command;
pub mod fanout;
pub mod outbox;
pub mod rate_limit;
pub mod socket;
pub mod task;

pub use batch::Batch;
pub use command::{Command, COMMAND_QUEUE};
pub use fanout::Fanout;
pub use outbox::Outbox;
pub use rate_limit::TokenBucket;
pub use task::{serve, SessionContext};
