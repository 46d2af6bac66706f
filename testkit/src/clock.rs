//! A process whose wall clock is off: libfaketime preloaded (Debian's
//! `faketime` package), the monotonic clock left alone, so only what the
//! process reads as the time of day moves (its timers and its tick do not).

use std::path::Path;

/// Where Debian's `faketime` package puts the library.
const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// Environment variables that put a process's wall clock `seconds` ahead
/// (negative: behind) of the machine's, its monotonic clock untouched; for
/// [`crate::Shard::start_with_env`].
///
/// Panics: libfaketime is not installed (`apt-get install faketime`,
/// scripts/setup.sh).
pub fn skewed(seconds: i64) -> Vec<(String, String)> {
    assert!(Path::new(LIBFAKETIME).exists(), "{LIBFAKETIME} is missing: apt-get install faketime (scripts/setup.sh)");
    vec![
        ("LD_PRELOAD".into(), LIBFAKETIME.into()),
        ("FAKETIME".into(), format!("{seconds:+}s")),
        ("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()),
        // Read FAKETIME once, not on every clock read.
        ("FAKETIME_NO_CACHE".into(), "0".into()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_is_signed_seconds() {
        let env = skewed(-5);
        assert!(env.contains(&("FAKETIME".into(), "-5s".into())));
        assert!(skewed(5).contains(&("FAKETIME".into(), "+5s".into())));
    }
}
