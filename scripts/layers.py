#!/usr/bin/env python3
"""The layering check: no module of a crate imports from a layer above it.

`layers.toml` (at the repository root) declares, per crate source folder, the
crate's top-level modules in layers, bottom first:

    [crate."loadgen/src"]
    layers = [
        ["failure", "target"],        # layer 0: imports nothing of the crate above it
        ["client"],                   # layer 1: may import layer 0
    ]

and, per TypeScript source folder, its modules the same way: each file
(`x.ts`, `x.d.ts`) and each subfolder of the folder is one module, and the
relative imports (`import ... from './x.js'`, `export ... from`, `import('./x')`,
type-only ones too: a type cycle is a cycle) that reach another of them are
its imports; `*.test.ts` files are left out, like Rust's unit tests:

    [ts."client-web/src"]
    layers = [["generated"], ["net"], ["app"]]

A declaration may list `docs`, files that show its layers: between the lines
`<!-- layers: SRC -->` and `<!-- end of layers -->` (in a `.rs` file, as `//!`
lines) each holds the table this script makes from the declaration, one row a
layer: its number and name, its modules, and what it is, from the comment
above the layer in layers.toml (`# name: what ...`). The check fails when a
file's table differs; `--write-docs` rewrites them.

This script reads every `.rs` file of each declared crate (comments, strings
and `#[cfg(test)]` items left out), finds each path that reaches another
top-level module (`crate::x`, `crate::{x, y}`, `super::x` climbing to the
crate root, or `crate::Name` re-exported by `lib.rs` from `x`), and fails when

  - a module imports a module of a higher layer (an upward import), or
  - modules of one layer import each other in a cycle, or
  - a top-level module is in no layer, or a listed one does not exist.

Usage: scripts/layers.py [--root DIR] [--config FILE] [--graph CRATE_SRC] [--write-docs]
  --graph prints a crate's import edges (to decide where a new module goes).
  --write-docs rewrites the layer tables of the declared docs.
Exit 0 when every declared crate is layered; 1 with one line per problem
(file:line and the import) otherwise; 2 on a bad configuration.
Python 3.11+ (tomllib), standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

# Files that are a crate's root, not one of its modules.
ROOT_FILES = ("lib.rs", "main.rs")

# `#[path = "file.rs"]` before `mod name;`, possibly among other attributes.
PATH_ATTRIBUTE = re.compile(r'#\[path\s*=\s*"([^"]+)"\](?:\s*#\[[^\]]*\])*\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;')


@dataclass(frozen=True)
class Token:
    """One token of Rust source: an identifier or keyword, `::`, or one character."""

    text: str
    line: int


@dataclass(frozen=True)
class Import:
    """A path in `source` (a top-level module) reaching top-level module `target`."""

    source: str
    target: str
    path: str
    line: int
    text: str


@dataclass
class Crate:
    """A crate's source folder: its top-level modules and the imports between them."""

    src: str
    modules: set[str] = field(default_factory=set)
    imports: list[Import] = field(default_factory=list)


class ConfigError(Exception):
    """layers.toml is missing, unreadable or inconsistent with the sources."""


# --- reading Rust source -----------------------------------------------------


def tokenize(text: str) -> list[Token]:
    """Identifiers, `::` and single punctuation characters of `text`, with
    comments, string, byte-string, raw-string and char literals dropped."""
    tokens: list[Token] = []
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            i, line = skip_block_comment(text, i, line)
        elif c == '"' or (c in "br" and raw_or_byte_string_start(text, i)):
            i, line = skip_string(text, i, line)
        elif c == "'":
            i = skip_char_or_lifetime(text, i)
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(Token(text[i:j], line))
            i = j
        elif text.startswith("::", i):
            tokens.append(Token("::", line))
            i += 2
        else:
            tokens.append(Token(c, line))
            i += 1
    return tokens


def skip_block_comment(text: str, i: int, line: int) -> tuple[int, int]:
    """Skips a (possibly nested) block comment starting at `i`."""
    depth = 0
    while i < len(text):
        if text.startswith("/*", i):
            depth += 1
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                break
        else:
            line += text[i] == "\n"
            i += 1
    return i, line


def raw_or_byte_string_start(text: str, i: int) -> bool:
    """Whether `b"`, `br"`, `br#"`, `r"` or `r#"` starts at `i` (not inside an
    identifier, and not a raw identifier such as `r#type`)."""
    if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
        return False
    j = i + (2 if text.startswith("br", i) else 1)
    if "r" in text[i:j]:
        while j < len(text) and text[j] == "#":
            j += 1
    return j < len(text) and text[j] == '"'


def skip_string(text: str, i: int, line: int) -> tuple[int, int]:
    """Skips a string literal (plain, byte or raw) starting at `i`."""
    j = i
    while text[j] in "br":
        j += 1
    hashes = 0
    while text[j] == "#":
        hashes += 1
        j += 1
    raw = "r" in text[i:j]
    j += 1  # the opening quote
    close = '"' + "#" * hashes
    while j < len(text):
        if not raw and text[j] == "\\":
            line += text[j + 1 : j + 2] == "\n"
            j += 2
            continue
        if text.startswith(close, j):
            return j + len(close), line
        line += text[j] == "\n"
        j += 1
    return j, line


def skip_char_or_lifetime(text: str, i: int) -> int:
    """Skips a char literal (`'a'`, `'\\n'`, `'\\u{7}'`) or a lifetime's quote."""
    if text.startswith("\\", i + 1):
        end = text.find("'", i + 3)  # past the escaped character, which may be a quote
        return len(text) if end < 0 else end + 1
    if i + 2 < len(text) and text[i + 2] == "'":
        return i + 3
    return i + 1  # a lifetime or label: the name is read as an identifier next


def without_test_items(tokens: list[Token]) -> list[Token]:
    """`tokens` without the items marked `#[cfg(test)]` (unit tests and their
    helpers may use any module of the crate; the layering is the library's)."""
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        if texts(tokens, i, 7) == ["#", "[", "cfg", "(", "test", ")", "]"]:
            i = skip_item(tokens, i + 7)
        else:
            out.append(tokens[i])
            i += 1
    return out


def texts(tokens: list[Token], i: int, n: int) -> list[str]:
    """The texts of `n` tokens from `i`."""
    return [t.text for t in tokens[i : i + n]]


def skip_item(tokens: list[Token], i: int) -> int:
    """The index after the item starting at `i`: up to its first `;` outside
    brackets, or its first balanced `{...}` block."""
    depth = 0
    while i < len(tokens):
        t = tokens[i].text
        if t in "([":
            depth += 1
        elif t in ")]":
            depth -= 1
        elif t == "{":
            end = matching_brace(tokens, i)
            return end + 1
        elif t == ";" and depth == 0:
            return i + 1
        i += 1
    return i


def matching_brace(tokens: list[Token], i: int) -> int:
    """The index of the `}` closing the `{` at `i`."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].text == "{":
            depth += 1
        elif tokens[j].text == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


# --- resolving paths to top-level modules -------------------------------------


def module_path(src: str, path: str) -> list[str]:
    """The module path of the file `path` of the crate at `src`:
    `a.rs` and `a/mod.rs` are ["a"], `a/b.rs` is ["a", "b"]."""
    parts = os.path.relpath(path, src).split(os.sep)
    parts[-1] = parts[-1][: -len(".rs")]
    if parts[-1] == "mod":
        parts.pop()
    return parts


def group_heads(tokens: list[Token], i: int) -> list[tuple[str, int]]:
    """The first identifier of each element of the use group `{...}` at `i`."""
    heads: list[tuple[str, int]] = []
    depth, expect = 0, True
    for t in tokens[i:]:
        if t.text == "{":
            depth += 1
            expect = depth == 1
        elif t.text == "}":
            depth -= 1
            if depth == 0:
                break
        elif t.text == "," and depth == 1:
            expect = True
        elif expect and depth == 1 and is_ident(t.text):
            heads.append((t.text, t.line))
            expect = False
        elif depth == 1:
            expect = False
    return heads


def is_ident(text: str) -> bool:
    """Whether `text` is an identifier token."""
    return text[:1].isalpha() or text[:1] == "_"


def reached(tokens: list[Token], i: int, base: list[str]) -> tuple[list[tuple[str, int]], int]:
    """If a path starting at token `i` leaves the module `base` for the crate
    root, the names it reaches there (with their lines) and the index after
    the path's head; else ([], i + 1)."""
    t = tokens[i].text
    if t == "crate" and texts(tokens, i + 1, 1) == ["::"] and not preceded_by(tokens, i, "::"):
        j = i + 2
    elif t == "super" and not preceded_by(tokens, i, "::"):
        j, up = i, 0
        while texts(tokens, j, 2) == ["super", "::"]:
            up, j = up + 1, j + 2
        if up == 0 or up < len(base):
            return [], max(j, i + 1)
    else:
        return [], i + 1
    if j >= len(tokens):
        return [], j
    if tokens[j].text == "{":
        return group_heads(tokens, j), j + 1
    if is_ident(tokens[j].text):
        return [(tokens[j].text, tokens[j].line)], j + 1
    return [], j


def preceded_by(tokens: list[Token], i: int, text: str) -> bool:
    """Whether the token before `i` is `text` (`$crate` counts as `crate`)."""
    return i > 0 and tokens[i - 1].text == text


def file_imports(path: str, own: list[str], modules: set[str], reexports: dict[str, str]) -> list[Import]:
    """The imports of other top-level modules in the file `path`, whose module
    path is `own` (`["scenario", "steps"]` for `scenario/steps.rs`)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    tokens = without_test_items(tokenize("\n".join(lines)))
    found: list[Import] = []
    # Inline `mod x { ... }` blocks deepen the module (and so what super:: means).
    scopes: list[tuple[str, int]] = []
    depth, i = 0, 0
    while i < len(tokens):
        t = tokens[i].text
        if t == "mod" and i + 2 < len(tokens) and tokens[i + 2].text == "{":
            scopes.append((tokens[i + 1].text, depth + 1))
        elif t == "{":
            depth += 1
        elif t == "}":
            if scopes and scopes[-1][1] == depth:
                scopes.pop()
            depth -= 1
        base = own + [name for name, _ in scopes]
        names, after = reached(tokens, i, base)
        for name, line in names:
            target = name if name in modules else reexports.get(name)
            if target and target != own[0]:
                found.append(Import(own[0], target, rel(path), line, lines[line - 1].strip()))
        i = after if names else i + 1
    return found


def rel(path: str) -> str:
    """`path` relative to the working folder, for messages."""
    return os.path.relpath(path)


def crate_root_reexports(root: str, modules: set[str]) -> dict[str, str]:
    """Names the crate root brings in from a module, public or not (`pub use
    x::{A, B as C}`, `use x::y as z`): name -> module, so `crate::A` and
    `crate::z` count as imports of `x`."""
    out: dict[str, str] = {}
    with open(root, encoding="utf-8", errors="replace") as f:
        tokens = tokenize(f.read())
    for i in range(len(tokens) - 1):
        if tokens[i].text != "use" or tokens[i + 1].text not in modules:
            continue
        j = i + 2
        while j < len(tokens) and tokens[j].text != ";":
            name, after = tokens[j].text, texts(tokens, j + 1, 1)
            if is_ident(name) and name != "self" and after and after[0] in (",", "}", ";"):
                out.setdefault(name, tokens[i + 1].text)
            j += 1
    return out


def declared_modules(src: str) -> tuple[str, dict[str, list[tuple[str, list[str]]]]]:
    """The crate root (`lib.rs`, else `main.rs`) of the crate at `src`, and
    each module it declares (`mod x;`, with `#[path]` honoured) mapped to its
    files and their module paths (`x.rs` or `x/mod.rs` and the files under
    `x/`). `#[cfg(test)]` modules are left out."""
    root = next((os.path.join(src, r) for r in ROOT_FILES if os.path.exists(os.path.join(src, r))), None)
    if root is None:
        raise ConfigError(f"{src}: no lib.rs or main.rs")
    with open(root, encoding="utf-8", errors="replace") as f:
        text = f.read()
    paths = {m.group(2): m.group(1) for m in PATH_ATTRIBUTE.finditer(text)}
    tokens = without_test_items(tokenize(text))
    modules: dict[str, list[tuple[str, list[str]]]] = {}
    for i in range(len(tokens) - 2):
        if tokens[i].text == "mod" and is_ident(tokens[i + 1].text) and tokens[i + 2].text == ";":
            name = tokens[i + 1].text
            modules[name] = module_files(src, name, paths.get(name))
    return root, modules



def module_files(src: str, name: str, path: str | None) -> list[tuple[str, list[str]]]:
    """The files of top-level module `name` with the module path of each."""
    if path is not None:
        return [(os.path.join(src, path), [name])]
    files = [(os.path.join(src, name + ".rs"), [name])]
    folder = os.path.join(src, name)
    for parent, dirs, names in os.walk(folder):
        dirs.sort()
        for n in sorted(names):
            if n.endswith(".rs"):
                full = os.path.join(parent, n)
                files.append((full, module_path(src, full)))
    return [(f, m) for f, m in files if os.path.exists(f)]


def read_crate(src: str) -> Crate:
    """The top-level modules of the crate at `src` and their imports."""
    if not os.path.isdir(src):
        raise ConfigError(f"{src}: no such folder")
    root, modules = declared_modules(src)
    crate = Crate(src, set(modules))
    reexports = crate_root_reexports(root, crate.modules)
    for files in modules.values():
        for path, own in files:
            crate.imports += file_imports(path, own, crate.modules, reexports)
    return crate


# --- reading TypeScript source ---------------------------------------------------

# An import or re-export with a source (`import x from '...'`, `import type {
# A } from "..."` over several lines, `export * from '...'`), a side-effect
# import (`import '...'`) or a dynamic one (`import('...')`). A statement
# starts a line (after blanks), so commented-out lines (`//`, ` * `) are not read.
TS_IMPORT = re.compile(
    r"""^[ \t]*(?:import|export)\b[^;'"]*?\bfrom[ \t\n]*['"]([^'"]+)['"]"""
    r"""|^[ \t]*import[ \t]*['"]([^'"]+)['"]"""
    r"""|\bimport\([ \t]*['"]([^'"]+)['"][ \t]*\)""",
    re.MULTILINE,
)


def ts_module(path: str) -> str | None:
    """The module a TypeScript path relative to its declared folder is in: its
    first component, a file's without `.d.ts`, `.ts` or `.js` (`net/x.js` is
    `net`, `app.js` is `app`); None outside the folder or for another kind of
    file (`style.css`)."""
    parts = os.path.normpath(path).split(os.sep)
    if parts[0] in ("..", "."):
        return None
    head = parts[0]
    if len(parts) > 1:
        return head
    for ext in (".d.ts", ".ts", ".js"):
        if head.endswith(ext):
            return head[: -len(ext)]
    return None


def read_ts_folder(src: str) -> Crate:
    """The modules of the TypeScript folder `src` and their relative imports
    of each other (test files left out)."""
    if not os.path.isdir(src):
        raise ConfigError(f"{src}: no such folder")
    crate = Crate(src)
    files = []
    for parent, dirs, names in os.walk(src):
        dirs.sort()
        for n in sorted(names):
            if n.endswith(".ts") and not n.endswith(".test.ts"):
                full = os.path.join(parent, n)
                module = ts_module(os.path.relpath(full, src))
                if module:
                    crate.modules.add(module)
                    files.append((full, module))
    for full, module in files:
        with open(full, encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.split("\n")
        for m in TS_IMPORT.finditer(text):
            spec = next(g for g in m.groups() if g is not None)
            if not spec.startswith("."):
                continue
            target = ts_module(os.path.relpath(os.path.join(os.path.dirname(full), spec.split("?")[0]), src))
            if target and target != module and target in crate.modules:
                line = text.count("\n", 0, m.end()) + 1
                crate.imports.append(Import(module, target, rel(full), line, lines[line - 1].strip()))
    return crate


# --- the check -----------------------------------------------------------------


@dataclass
class Declared:
    """One declaration of layers.toml: the folder, its layers bottom first,
    and the files that show them."""

    kind: str
    src: str
    layers: list[list[str]]
    docs: list[str]


def load_config(path: str) -> list[Declared]:
    """layers.toml's declarations; kind is `crate` (Rust) or `ts` (TypeScript)."""
    if tomllib is None:
        raise ConfigError("scripts/layers.py needs Python 3.11 or newer (tomllib)")
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{path}: {e}") from e
    out: list[Declared] = []
    for kind in ("crate", "ts"):
        for src, table in doc.get(kind, {}).items():
            layers = table.get("layers") if isinstance(table, dict) else None
            ok = isinstance(layers, list) and all(
                isinstance(layer, list) and all(isinstance(m, str) for m in layer) for layer in layers
            )
            if not ok:
                raise ConfigError(f'{path}: [{kind}."{src}"] needs `layers`, a list of lists of module names')
            docs = table.get("docs", [])
            if not (isinstance(docs, list) and all(isinstance(d, str) for d in docs)):
                raise ConfigError(f'{path}: [{kind}."{src}"] `docs` is a list of file paths')
            out.append(Declared(kind, src, layers, docs))
    return out


# --- the layers shown in the docs ------------------------------------------------

DOCS_START = "<!-- layers: {src} -->"
DOCS_END = "<!-- end of layers -->"


def layer_comments(config_path: str, src: str) -> list[str]:
    """The comment above each layer of the declaration of `src` in the file
    (tomllib drops comments): one text a layer, lines joined."""
    with open(config_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    head = re.compile(r'^\[(crate|ts)\."' + re.escape(src) + r'"\]\s*$')
    start = next((i for i, line in enumerate(lines) if head.match(line)), None)
    if start is None:
        return []
    out: list[str] = []
    comment: list[str] = []
    for line in lines[start + 1 :]:
        stripped = line.strip()
        if line.startswith("["):
            break
        if stripped.startswith("#"):
            comment.append(stripped.lstrip("#").strip())
        elif stripped.startswith("[") and not stripped.startswith("[["):
            out.append(" ".join(comment))
            comment = []
        elif not stripped.startswith("layers"):
            comment = []
    return out


def layer_table(decl: Declared, comments: list[str]) -> list[str]:
    """The Markdown table of `decl`'s layers, bottom first."""
    rows = ["| layer | modules | what |", "|---|---|---|"]
    for n, modules in enumerate(decl.layers):
        text = comments[n] if n < len(comments) else ""
        name, _, what = text.partition(": ")
        label = f"{n} {name}" if what else str(n)
        rows.append(f"| {label} | {', '.join(f'`{m}`' for m in modules)} | {what or text} |")
    return rows


def with_table(text: str, decl: Declared, table: list[str], rust: bool) -> str | None:
    """`text` with the region of `decl` holding `table`; None without the region."""
    prefix = "//! " if rust else ""
    start = prefix + DOCS_START.format(src=decl.src)
    end = prefix + DOCS_END
    lines = text.split("\n")
    try:
        i = lines.index(start)
        j = lines.index(end, i + 1)
    except ValueError:
        return None
    body = [(prefix + row) for row in table]
    return "\n".join(lines[: i + 1] + body + lines[j:])


def docs_problems(root: str, config_path: str, decls: list[Declared], write: bool) -> list[str]:
    """The declared docs whose layer table differs from layers.toml (each
    rewritten when `write`)."""
    problems = []
    for decl in decls:
        table = layer_table(decl, layer_comments(config_path, decl.src))
        for doc in decl.docs:
            path = os.path.join(root, doc)
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except OSError as e:
                problems.append(f"{doc}: {e}")
                continue
            wanted = with_table(text, decl, table, doc.endswith(".rs"))
            if wanted is None:
                marker = DOCS_START.format(src=decl.src)
                problems.append(f"{doc}: no `{marker}` ... `{DOCS_END}` region for the layers of {decl.src}")
            elif wanted != text:
                if write:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(wanted)
                    print(f"layers: {doc}: the layers of {decl.src} rewritten")
                else:
                    problems.append(f"{doc}: the layers of {decl.src} differ from layers.toml (scripts/layers.py --write-docs)")
    return problems


def layer_of(config_path: str, src: str, layers: list[list[str]], modules: set[str]) -> dict[str, int]:
    """Module -> layer index; ConfigError when the list and the sources disagree."""
    index: dict[str, int] = {}
    problems = []
    for n, layer in enumerate(layers):
        for m in layer:
            if m in index:
                problems.append(f"{config_path}: {src}: module `{m}` is listed twice")
            elif m not in modules:
                problems.append(f"{config_path}: {src}: module `{m}` is listed but has no file in {src}")
            index[m] = n
    for m in sorted(modules - index.keys()):
        problems.append(f"{config_path}: {src}: module `{m}` is in no layer (add it to the layer it belongs to)")
    if problems:
        raise ConfigError("\n".join(problems))
    return index


def upward_imports(crate: Crate, index: dict[str, int]) -> list[str]:
    """One message per import of a module in a higher layer."""
    out = []
    for imp in crate.imports:
        if index[imp.target] > index[imp.source]:
            out.append(
                f"{imp.path}:{imp.line}: upward import: `{imp.source}` (layer {index[imp.source]}) "
                f"uses `{imp.target}` (layer {index[imp.target]}): {imp.text}"
            )
    return out


def cycles_within_layers(crate: Crate, index: dict[str, int]) -> list[str]:
    """One message per cycle among modules of the same layer."""
    edges: dict[str, dict[str, Import]] = {m: {} for m in index}
    for imp in crate.imports:
        if index[imp.target] == index[imp.source]:
            edges[imp.source].setdefault(imp.target, imp)
    out = []
    for component in strongly_connected(edges):
        if len(component) < 2:
            continue
        members = set(component)
        lines = [
            f"  {imp.path}:{imp.line}: `{a}` uses `{b}`: {imp.text}"
            for a in sorted(members)
            for b, imp in sorted(edges[a].items())
            if b in members
        ]
        out.append(
            f"{crate.src}: import cycle in layer {index[component[0]]}: {', '.join(sorted(members))}\n"
            + "\n".join(lines)
        )
    return out


def strongly_connected(edges: dict[str, dict[str, Import]]) -> list[list[str]]:
    """Tarjan's strongly connected components of the graph `edges`."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            found.append(sorted(component))

    for v in sorted(edges):
        if v not in order:
            visit(v)
    return found


def check(root: str, config_path: str, write_docs: bool = False) -> list[str]:
    """Every problem of every crate declared in `config_path`, relative to
    `root`, and of the docs that show their layers."""
    problems = []
    decls = load_config(config_path)
    for decl in decls:
        kind, src, layers = decl.kind, decl.src, decl.layers
        read = read_crate if kind == "crate" else read_ts_folder
        crate = read(os.path.join(root, src))
        index = layer_of(config_path, src, layers, crate.modules)
        found = upward_imports(crate, index) + cycles_within_layers(crate, index)
        if not found:
            print(f"layers: {src}: {len(crate.modules)} modules in {len(layers)} layers, no upward import")
        problems += found
    return problems + docs_problems(root, config_path, decls, write_docs)


def print_graph(src: str) -> None:
    """Prints each module's imports of other modules of the crate (or the
    TypeScript folder: one without `lib.rs` or `main.rs`) at `src`."""
    is_rust = any(os.path.exists(os.path.join(src, r)) for r in ROOT_FILES)
    crate = read_crate(src) if is_rust else read_ts_folder(src)
    edges: dict[str, set[str]] = {m: set() for m in crate.modules}
    for imp in crate.imports:
        edges[imp.source].add(imp.target)
    for m in sorted(edges):
        print(f"{m} -> {' '.join(sorted(edges[m]))}")


def main() -> int:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description="No module imports from a layer above it.")
    parser.add_argument("--root", default=here, help="repository root (default: this script's repository)")
    parser.add_argument("--config", help="the layer declarations (default: ROOT/layers.toml)")
    parser.add_argument("--graph", metavar="CRATE_SRC", help="print the import edges of one crate and exit")
    parser.add_argument("--write-docs", action="store_true", help="rewrite the layer tables of the declared docs")
    args = parser.parse_args()
    try:
        if args.graph:
            print_graph(args.graph)
            return 0
        problems = check(args.root, args.config or os.path.join(args.root, "layers.toml"), args.write_docs)
    except ConfigError as e:
        print(f"layers: {e}", file=sys.stderr)
        return 2
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"layers: {len(problems)} problem(s); see layers.toml for each crate's layers", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
