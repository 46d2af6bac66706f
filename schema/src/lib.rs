//! mino's wire protocol: `mino.fbs` is the single source, `mino_generated.rs` is
//! what flatc 25.12.19 makes of it (committed, never edited), and the modules here
//! turn network bytes into domain types once, at the edge.
//!
//! - [`client`]: what a browser or bot sends ([`client::ClientMsg`]), decoded with
//!   explicit verifier limits, and the encoders bots use.
//! - [`server`]: what a shard sends; encoders the server uses and a verified
//!   decoder ([`server::ServerMsg`]) for bots and tests.
//! - [`snapshot`]: the per-tick snapshot, encoded once and shared by every socket.
//! - [`motion`]: the movement rule, integer-exact on the wire's grid, shared
//!   by the server's simulation, the delta frames' prediction and the browser.
//! - [`delta`]: a cell's players as a full form or a delta against an
//!   earlier state (what the movement rule did not predict), and the rule that
//!   applies one.
//! - [`view`]: protocol 8's view frames (sections of a shard's cells, each
//!   cell's items: full forms, deltas, supplements, forgets) and region bundles.
//! - [`grid`]: the area-of-interest grid's cell rule, shared with clients.
//! - [`stencil`]: which cells a viewer sees at which tier, and the tiers' periods
//!   (the server's area of interest; clients read implied cells with it).
//! - [`held`]: what a client holds of the cells view frames told it, and the
//!   rule that applies a frame (bots, the test kit).
//! - [`quantize`]: 16-bit positions and 8-bit headings in [`wire::PlayerState`].
//! - [`limits`]: sizes and verifier options; the numbers, like
//!   [`PROTOCOL_VERSION`], are constants of `mino.fbs` that the browser shares.
//! - [`ids`]: newtype ids.

pub mod client;
pub mod delta;
pub mod entry;
pub mod grid;
pub mod held;
pub mod ids;
pub mod limits;
pub mod motion;
pub mod quantize;
mod root;
pub mod server;
pub mod snapshot;
pub mod stencil;
pub mod view;

#[allow(
    unsafe_code,
    missing_docs,
    clippy::all,
    clippy::unwrap_used,
    unused_imports,
    non_camel_case_types,
    non_snake_case,
    deprecated
)]
#[rustfmt::skip]
#[path = "mino_generated.rs"]
mod generated;

/// The generated FlatBuffers types (`mino.wire` namespace of `mino.fbs`).
pub use generated::mino::wire;

pub use ids::{PlayerId, ShardId, ShardIdError, Tick};

/// The protocol version a Hello must carry: `ProtocolVersion.Current` of
/// `mino.fbs`, bumped there on any incompatible schema change.
pub const PROTOCOL_VERSION: u16 = wire::ProtocolVersion::Current.0;
