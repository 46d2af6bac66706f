//! One connection's bug stays that connection's: [`caught`] runs a piece of
//! work done for one socket or one player (the hub reading its bytes, the
//! shard core carrying out its request or its message) and turns a panic in
//! it into an `Err` with the panic's message, so the caller closes that
//! connection with 1011 and every other one goes on.
//!
//! State the work had changed before it panicked stays changed: callers
//! guard work whose half-done state is that one connection's (its socket,
//! its player), and close that connection.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `work`; a panic in it is caught and returned as its message (`&str`
/// and `String` payloads; others as "(not a string)"). The panic hook has
/// already printed it to stderr with its place in the source.
pub fn caught<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(work)).map_err(|panic| {
        panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(not a string)".to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_and_a_result_passes_through() {
        assert_eq!(caught(|| 7), Ok(7));
        assert_eq!(caught(|| -> u8 { panic!("a bug") }), Err("a bug".to_owned()));
        let n = 3;
        assert_eq!(caught(|| -> u8 { panic!("bug {n}") }), Err("bug 3".to_owned()));
    }
}
