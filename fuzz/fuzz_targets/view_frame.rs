//! Fuzzes protocol 8's view frames as a client reads them: `ViewFrame::parse`
//! then `Held::apply`, frame after frame (see `checks/view_frame.rs` for the
//! input's layout and the properties; `cargo test -p mino-protocol --test
//! fuzz_corpus` replays the corpus with the same checks).
#![no_main]

#[path = "../../schema/tests/delta_cases/mod.rs"]
mod delta_cases;
#[path = "../checks/view_frame.rs"]
mod view_frame;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| view_frame::check(data));
