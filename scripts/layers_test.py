#!/usr/bin/env python3
"""Tests of scripts/layers.py on tiny crates (and TypeScript folders) written to a temporary folder:
an upward import, a cycle within a layer and an unlisted module fail; paths
the check must see (groups, `super::` to the root, re-exports) and must not
see (comments, strings, unit tests) are found and ignored as they should be.

Usage: python3 scripts/layers_test.py
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers.py")

LAYERS = """
[crate."demo/src"]
layers = [["wire"], ["client"], ["bot"]]
"""


def run(files: dict[str, str], layers: str = LAYERS) -> subprocess.CompletedProcess:
    """Writes `files` (path -> Rust source) and `layers` as layers.toml into a
    fresh folder and runs the check there."""
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "layers.toml"), "w") as f:
            f.write(textwrap.dedent(layers))
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(textwrap.dedent(text))
        return subprocess.run(
            [sys.executable, SCRIPT, "--root", root],
            capture_output=True,
            text=True,
            cwd=root,
            check=False,
        )


def crate(**modules: str) -> dict[str, str]:
    """A crate `demo/src` with `lib.rs` declaring `wire`, `client`, `bot` and
    the given module sources (`bot="use crate::client;"`); missing ones empty."""
    files = {f"demo/src/{m}.rs": "" for m in ("wire", "client", "bot")}
    files["demo/src/lib.rs"] = "pub mod wire;\npub mod client;\npub mod bot;\npub use client::Client;\n"
    for name, text in modules.items():
        files[f"demo/src/{name.replace('__', '/')}.rs"] = text
    return files


class LayersTest(unittest.TestCase):
    def assert_passes(self, files, layers=LAYERS):
        out = run(files, layers)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        return out

    def assert_fails(self, files, *wanted, layers=LAYERS, code=1):
        out = run(files, layers)
        self.assertEqual(out.returncode, code, out.stdout + out.stderr)
        for w in wanted:
            self.assertIn(w, out.stderr)
        return out

    def test_downward_imports_pass(self):
        out = self.assert_passes(crate(bot="use crate::client::Client;\nuse crate::wire;\n", client="use crate::wire::X;\n"))
        self.assertIn("demo/src: 3 modules in 3 layers", out.stdout)

    def test_upward_import_fails_naming_the_file_line_and_import(self):
        self.assert_fails(
            crate(client="use std::fmt;\nuse crate::bot::Bot;\n"),
            "demo/src/client.rs:2: upward import: `client` (layer 1) uses `bot` (layer 2): use crate::bot::Bot;",
        )

    def test_upward_imports_in_groups_expressions_and_reexports_fail(self):
        self.assert_fails(crate(wire="use crate::{bot, client::Client};\n"), "`wire` (layer 0) uses `bot`", "uses `client`")
        self.assert_fails(crate(wire="fn f() { crate::bot::run(); }\n"), "wire.rs:1: upward import")
        self.assert_fails(crate(wire="use crate::Client;\n"), "`wire` (layer 0) uses `client` (layer 1)")

    def test_a_private_alias_at_the_crate_root_counts_as_its_module(self):
        files = crate(wire="use crate::bot_api;\n")
        files["demo/src/lib.rs"] += "use bot::api as bot_api;\n"
        self.assert_fails(files, "wire.rs:1: upward import: `wire` (layer 0) uses `bot` (layer 2)")
        files = crate(bot="use crate::wire_codec;\n")
        files["demo/src/lib.rs"] += "use wire::codec as wire_codec;\n"
        self.assert_passes(files)

    def test_super_reaching_the_crate_root_counts_and_within_a_module_does_not(self):
        files = crate(client__conn="use super::super::bot::Bot;\n")
        files["demo/src/client.rs"] = "mod conn;\n"
        self.assert_fails(files, "demo/src/client/conn.rs:1: upward import: `client` (layer 1) uses `bot`")
        files = crate(wire="use super::bot;\n")
        self.assert_fails(files, "wire.rs:1: upward import")
        files = crate(client__conn="use super::Thing;\n")
        files["demo/src/client.rs"] = "mod conn;\nstruct Thing;\n"
        self.assert_passes(files)

    def test_comments_strings_and_unit_tests_are_not_imports(self):
        wire = """
            //! Docs may name [`crate::bot`].
            /* crate::bot::X */
            const S: &str = "crate::bot::X";
            const R: &str = r#"use crate::bot;"#;
            const C: char = '"';
            const Q: char = '\\'';
            const E: &str = "\\" crate::bot";
            fn f<'a>(x: &'a str) -> &'a str { x }
            #[cfg(test)]
            mod tests {
                use crate::bot::Bot;
            }
        """
        self.assert_passes(crate(wire=wire))

    def test_cycle_within_a_layer_fails(self):
        layers = '[crate."demo/src"]\nlayers = [["wire", "client"], ["bot"]]\n'
        self.assert_fails(
            crate(wire="use crate::client;\n", client="use crate::wire;\n"),
            "import cycle in layer 0: client, wire",
            layers=layers,
        )
        self.assert_passes(crate(client="use crate::wire;\n"), layers=layers)

    def test_unlisted_and_unknown_modules_are_configuration_errors(self):
        layers = '[crate."demo/src"]\nlayers = [["wire", "client"], ["robot"]]\n'
        self.assert_fails(crate(), "module `bot` is in no layer", "module `robot` is listed but has no file", layers=layers, code=2)

    def test_path_attribute_names_the_module(self):
        files = crate(wire="use crate::generated::X;\n")
        files["demo/src/lib.rs"] += '#[allow(unused)]\n#[path = "made_by_tool.rs"]\nmod generated;\n'
        files["demo/src/made_by_tool.rs"] = "use crate::bot;\n"
        layers = '[crate."demo/src"]\nlayers = [["generated"], ["wire"], ["client"], ["bot"]]\n'
        self.assert_fails(files, "made_by_tool.rs:1: upward import: `generated` (layer 0) uses `bot`", layers=layers)

    def test_undeclared_crates_are_not_checked(self):
        files = crate(wire="use crate::bot;\n")
        self.assert_passes(files, layers="# nothing declared yet\n")


class DocsTest(unittest.TestCase):
    LAYERS = """
[crate."demo/src"]
docs = ["README.md"]
layers = [
    # wire: bytes on the wire
    ["wire"],
    # the client
    ["client"],
    ["bot"],
]
"""
    README = "# demo\n\n<!-- layers: demo/src -->\nstale\n<!-- end of layers -->\n"
    TABLE = (
        "| layer | modules | what |\n|---|---|---|\n| 0 wire | `wire` | bytes on the wire |\n"
        "| 1 | `client` | the client |\n| 2 | `bot` |  |\n"
    )

    def test_a_stale_table_fails_and_write_docs_rewrites_it_from_the_comments(self):
        files = crate()
        files["README.md"] = self.README
        out = run(files, self.LAYERS)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn("README.md: the layers of demo/src differ from layers.toml", out.stderr)
        with tempfile.TemporaryDirectory() as root:
            for path, text in {**files, "layers.toml": self.LAYERS}.items():
                full = os.path.join(root, path)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w") as f:
                    f.write(textwrap.dedent(text) if path == "layers.toml" else text)
            subprocess.run([sys.executable, SCRIPT, "--root", root, "--write-docs"], capture_output=True, check=True)
            with open(os.path.join(root, "README.md")) as f:
                written = f.read()
            self.assertEqual(written, "# demo\n\n<!-- layers: demo/src -->\n" + self.TABLE + "<!-- end of layers -->\n")
            again = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True, text=True)
            self.assertEqual(again.returncode, 0, again.stderr)

    def test_a_declared_doc_without_the_region_fails(self):
        files = crate()
        files["README.md"] = "# demo\n"
        out = run(files, self.LAYERS)
        self.assertIn("README.md: no `<!-- layers: demo/src -->`", out.stderr)


TS_LAYERS = """
[ts."web/src"]
layers = [["messages"], ["net"], ["app"]]
"""


def ts(**modules: str) -> dict[str, str]:
    """A TypeScript folder `web/src` with `messages.ts`, `net/` (one file) and
    `app.ts`, and the given sources (`net__decode="..."` is `net/decode.ts`)."""
    files = {"web/src/messages.ts": "", "web/src/net/decode.ts": "", "web/src/app.ts": ""}
    for name, text in modules.items():
        path = name.replace("__", "/").replace("_test", ".test")
        files[f"web/src/{path}.ts"] = text
    return files


class TypeScriptLayersTest(unittest.TestCase):
    def test_downward_imports_pass_and_packages_and_assets_are_not_modules(self):
        app = "import { decode } from './net/decode.js';\nimport type { M } from './messages.js';\n"
        app += "import * as fb from 'flatbuffers';\nimport './style.css';\n"
        out = run(ts(app=app, net__decode="export { X } from '../messages.js';\n"), TS_LAYERS)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("web/src: 3 modules in 3 layers", out.stdout)

    def test_an_upward_import_fails_even_a_type_only_one_over_several_lines(self):
        decode = "import type {\n  App,\n} from '../app.js';\n"
        out = run(ts(net__decode=decode), TS_LAYERS)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn("web/src/net/decode.ts:3: upward import: `net` (layer 1) uses `app` (layer 2)", out.stderr)
        out = run(ts(messages="const m = import('./app.js');\n"), TS_LAYERS)
        self.assertIn("`messages` (layer 0) uses `app`", out.stderr)

    def test_files_importing_each_other_in_one_layer_are_a_cycle(self):
        layers = '[ts."web/src"]\nlayers = [["messages", "net", "app"]]\n'
        files = ts(messages="import type { D } from './net/decode.js';\n", net__decode="import type { M } from '../messages.js';\n")
        out = run(files, layers)
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn("import cycle in layer 0: messages, net", out.stderr)

    def test_tests_and_comments_are_not_imports(self):
        files = ts(messages="// import { A } from './app.js';\n/**\n * import { A } from './app.js';\n */\n")
        files["web/src/messages.test.ts"] = "import { A } from './app.js';\n"
        out = run(files, TS_LAYERS)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)


if __name__ == "__main__":
    unittest.main()
