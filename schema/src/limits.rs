//! Size limits of the protocol and the FlatBuffers verifier options that enforce
//! them on every buffer read from the network. The numbers live in `mino.fbs`
//! (so the browser client shares them); this module gives them Rust types.

use flatbuffers::VerifierOptions;

use crate::wire::{ClientVerifierLimit, Limit, ServerVerifierLimit};

// Every value comes from the schema's constant enums (`Limit`, `ClientVerifierLimit`,
// `ServerVerifierLimit` in `mino.fbs`), which the browser client reads too.
// The casts widen u32 to usize.

/// Largest client message the server accepts, bytes. A Hello with a 24-character
/// name, a 2 KiB access token and a ticket fits with room to spare.
pub const MAX_CLIENT_MESSAGE_BYTES: usize = Limit::MaxClientMessageBytes.0 as usize;

/// Longest display name, in characters (Unicode scalar values).
pub const MAX_NAME_CHARS: usize = Limit::MaxNameChars.0 as usize;

/// Longest chat line, in characters.
pub const MAX_CHAT_CHARS: usize = Limit::MaxChatChars.0 as usize;

/// Longest access token, bytes.
pub const MAX_ACCESS_TOKEN_BYTES: usize = Limit::MaxAccessTokenBytes.0 as usize;

/// Longest resume ticket, bytes (tickets are 16 to 64 bytes).
pub const MAX_TICKET_BYTES: usize = Limit::MaxTicketBytes.0 as usize;

/// Largest server message a client accepts, bytes: a snapshot of 100,000 players
/// (10 bytes each) plus headers.
pub const MAX_SERVER_MESSAGE_BYTES: usize = Limit::MaxServerMessageBytes.0 as usize;

/// Verifier limits for client messages: shallow, few tables, and no more
/// apparent size than the message may have.
pub fn client_verifier() -> VerifierOptions {
    VerifierOptions {
        max_depth: ClientVerifierLimit::MaxDepth.0 as usize,
        max_tables: ClientVerifierLimit::MaxTables.0 as usize,
        max_apparent_size: MAX_CLIENT_MESSAGE_BYTES,
        ignore_missing_null_terminator: false,
    }
}

/// Verifier limits for server messages (bots, tests, relaying shards).
pub fn server_verifier() -> VerifierOptions {
    VerifierOptions {
        max_depth: ServerVerifierLimit::MaxDepth.0 as usize,
        max_tables: ServerVerifierLimit::MaxTables.0 as usize,
        max_apparent_size: MAX_SERVER_MESSAGE_BYTES * 2,
        ignore_missing_null_terminator: false,
    }
}
