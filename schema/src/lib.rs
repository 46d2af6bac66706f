//! mino's wire protocol: `mino.fbs` is the single source, `mino_generated.rs` is
//! what flatc 25.12.19 makes of it (committed, never edited), and the modules here
//! turn network bytes into domain types once, at the edge.
//!
//! - [`client`]: what a browser or bot sends ([`client::ClientMsg`]), decoded with
//!   explicit verifier limits, and the encoders bots use.
//! - [`server`]: what a shard sends; encoders the server uses and a verified
//!   decoder ([`server::ServerMsg`]) for bots and tests.
//! - [`snapshot`]: the per-tick snapshot, encoded once and shared by every socket.
//! - [`cell`]: with area of interest, a cell's players encoded once a tick,
//!   the view frames that carry a view's cells to a socket, and the region
//!   bundles shards relay them in.
//! - [`quantize`]: 16-bit positions and 8-bit headings in [`wire::PlayerState`].
//! - [`limits`]: sizes and verifier options; the numbers, like
//!   [`PROTOCOL_VERSION`], are constants of `mino.fbs` that the browser shares.
//! - [`ids`]: newtype ids.

pub mod cell;
pub mod client;
pub mod entry;
pub mod ids;
pub mod limits;
pub mod quantize;
mod root;
pub mod server;
pub mod snapshot;

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

pub use ids::{PlayerId, ShardId, Tick};

/// The protocol version a Hello must carry: `ProtocolVersion.Current` of
/// `mino.fbs`, bumped there on any incompatible schema change.
pub const PROTOCOL_VERSION: u16 = wire::ProtocolVersion::Current.0;
