//! One websocket player session: the hello handshake, inbound messages with
//! their limits, and the outbound batch written once a tick.

mod close;
mod connection;
mod outbound;
mod rate_limit;
pub mod socket;
pub mod ws_frame;

pub use close::CloseReason;
pub use connection::{serve, SessionContext};
pub use outbound::Batch;
pub use rate_limit::TokenBucket;
