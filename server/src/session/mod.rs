//! One websocket player session: the hello handshake, inbound messages with
//! their limits, and the outbox the shard's fan-out writes each tick's frames
//! to (one vectored write a socket a tick).

mod close;
mod connection;
mod fanout;
mod outbound;
mod outbox;
mod rate_limit;
pub mod socket;
pub mod ws_frame;

pub use close::CloseReason;
pub use connection::{serve, SessionContext};
pub use fanout::Fanout;
pub use outbound::Batch;
pub use outbox::{Outbox, SlowLimits, Stuck, Tally};
pub use rate_limit::TokenBucket;
