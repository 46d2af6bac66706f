//! The shared fixtures' one check: a fixture file under `schema/` is exactly
//! what the Rust side makes now, or, with `MINO_UPDATE_FIXTURES` set, is
//! rewritten to it. Shared by `tests/motion.rs`, `tests/grid.rs` and
//! `tests/delta_fixture.rs` (each includes it as a module).

use std::path::PathBuf;

/// Checks (or rewrites) `relative` (a path under `schema/`) against `want`.
/// Panics naming the file when it is stale: the browser's unit tests read
/// the same file, so it is rewritten and both sides run again.
pub fn matches_or_update(relative: &str, want: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative);
    if std::env::var_os("MINO_UPDATE_FIXTURES").is_some() {
        std::fs::write(&path, want).expect("write the fixture");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: rerun with MINO_UPDATE_FIXTURES=1 (and run the client's unit tests)",
        path.display()
    );
}
