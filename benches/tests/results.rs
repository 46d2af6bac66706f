//! RESULTS.md and its comparison charts are exactly what the committed raw
//! results make (`benches/results/raw/`, `benches/original.json`), as the
//! schema's generated code is exactly what `schema/mino.fbs` makes
//! (`schema/tests/codegen.rs`): the report reads nothing else, so anyone can
//! rebuild RESULTS.md, and a raw file that lacks a field the report needs
//! fails here, naming the file.
//!
//! By default the test writes into a temporary directory and fails on any
//! difference. `MINO_UPDATE_RESULTS=1 cargo test -p mino-benches --test
//! results` writes into the tree instead (what `scale --report-only` does).

use mino_benches::report::{self, Output};
use std::path::{Path, PathBuf};

/// The charts the report draws, beside RESULTS.md in `results/`.
const CHARTS: [&str; 3] = ["gap-vs-original.svg", "ticks-vs-original.svg", "cpu-per-frame-vs-original.svg"];

fn benches() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn build(markdown: &Path, svg_dir: &Path) {
    let b = benches();
    let out = Output { markdown: markdown.to_owned(), svg_dir: svg_dir.to_owned() };
    report::write(&b.join("results/raw"), &b.join("original.json"), &out)
        .unwrap_or_else(|e| panic!("the report cannot be built from the committed raw results: {e}"));
}

#[test]
fn results_md_is_what_the_raw_results_make() {
    let b = benches();
    if std::env::var_os("MINO_UPDATE_RESULTS").is_some() {
        build(&b.join("RESULTS.md"), &b.join("results"));
        return;
    }
    let dir = std::env::temp_dir().join(format!("mino-results-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    build(&dir.join("RESULTS.md"), &dir);
    for (made, committed) in std::iter::once(("RESULTS.md".to_owned(), b.join("RESULTS.md")))
        .chain(CHARTS.iter().map(|c| (c.to_string(), b.join("results").join(c))))
    {
        let made_text = std::fs::read_to_string(dir.join(&made)).expect("written");
        let committed_text = std::fs::read_to_string(&committed).unwrap_or_default();
        if made_text != committed_text {
            let line = made_text.lines().zip(committed_text.lines()).position(|(a, b)| a != b);
            panic!(
                "{} differs from what the raw results make (first at line {}; the new one is in {}): rebuild it \
                 with MINO_UPDATE_RESULTS=1 cargo test -p mino-benches --test results",
                committed.display(),
                line.map_or("end".into(), |l| (l + 1).to_string()),
                dir.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
