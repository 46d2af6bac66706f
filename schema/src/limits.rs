//! Size limits of the protocol and the FlatBuffers verifier options that enforce
//! them on every buffer read from the network.

use flatbuffers::VerifierOptions;

/// Largest client message the server accepts, bytes. A Hello with a 24-character
/// name, a 2 KiB access token and a ticket fits with room to spare.
pub const MAX_CLIENT_MESSAGE_BYTES: usize = 4 * 1024;

/// Longest display name, in characters (Unicode scalar values).
pub const MAX_NAME_CHARS: usize = 24;

/// Longest chat line, in characters.
pub const MAX_CHAT_CHARS: usize = 200;

/// Longest access token, bytes.
pub const MAX_ACCESS_TOKEN_BYTES: usize = 2048;

/// Longest resume ticket, bytes (tickets are 16 to 64 bytes).
pub const MAX_TICKET_BYTES: usize = 64;

/// Largest server message a client accepts, bytes: a snapshot of 100,000 players
/// (10 bytes each) plus headers.
pub const MAX_SERVER_MESSAGE_BYTES: usize = 1_100_000;

/// Verifier limits for client messages: shallow, few tables, and no more
/// apparent size than the message may have.
pub fn client_verifier() -> VerifierOptions {
    VerifierOptions {
        max_depth: 8,
        max_tables: 16,
        max_apparent_size: MAX_CLIENT_MESSAGE_BYTES,
        ignore_missing_null_terminator: false,
    }
}

/// Verifier limits for server messages (bots, tests, relaying shards).
pub fn server_verifier() -> VerifierOptions {
    VerifierOptions {
        max_depth: 8,
        max_tables: 200_000,
        max_apparent_size: MAX_SERVER_MESSAGE_BYTES * 2,
        ignore_missing_null_terminator: false,
    }
}
