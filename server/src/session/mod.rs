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
//! - [`rate_limit`]: token buckets for inputs, chat and control frames.
//! - [`liveness`]: when to ping the peer and when its silence ends the
//!   session (a stall of the process is not the peer's silence).
//! - [`read_end`]: how the read side ended (FIN, close frame, protocol
//!   error) and the linger after the server's close frame.

pub mod batch;
pub mod command;
pub mod fanout;
pub mod liveness;
pub mod outbox;
pub mod rate_limit;
pub mod read_end;
pub mod socket;
pub mod task;

pub use batch::Batch;
pub use command::{Command, COMMAND_QUEUE};
pub use fanout::Fanout;
pub use outbox::Outbox;
pub use rate_limit::TokenBucket;
pub use task::{serve, SessionContext};
