//! Player sockets: the handshake of each in a task until it is admitted, then
//! all of them in one hub the tick driver owns, read when ready and written
//! once a tick (one vectored write a socket).
//!
//! - [`task`]: a socket's handshake, from the Hello to admission.
//! - [`command`]: what a handshake asks of the tick driver.
//! - [`socket`]: the upgraded connection, given up by tokio at the handover.
//! - [`hub`]: every admitted socket, readiness-driven, no task per socket;
//!   [`conn`]: one socket in it.
//! - [`frames`]: reading the client's websocket frames with no buffer of
//!   their own (our own frames out are [`crate::ws_frame`]).
//! - [`outbox`]: a socket's write side; [`batch`]: what a blocked socket
//!   keeps.
//! - [`rate_limit`]: token buckets for inputs, chat and control frames.
//! - [`liveness`]: when to ping the peer and when its silence ends the
//!   session (a stall of the process is not the peer's silence).
//! - [`utf8`]: text checked as it arrives (the echo's reader).
//! - [`read_end`]: how the read side ended (FIN, close frame, protocol
//!   error) and the linger after the server's close frame.

pub mod batch;
pub mod command;
pub mod conn;
pub mod frames;
pub mod hub;
pub mod liveness;
pub mod outbox;
pub mod rate_limit;
pub mod read_end;
pub mod socket;
pub mod task;
pub mod utf8;

pub use batch::Batch;
pub use command::{Command, Joined, COMMAND_QUEUE};
pub use conn::Inbound;
pub use hub::Hub;
pub use task::{serve, SessionContext};
