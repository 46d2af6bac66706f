//! The shared fixture of protocol 8's view frames: sequences of frames built
//! with `mino_protocol`'s encoders (`tests/delta_cases`), and after each
//! frame what a client holds as `Held` computes it (every cell's tick and
//! players) and the updates the frame made (a sequence's `delivery` says
//! whether the client holds its frames in order or by the lossy rule of
//! datagrams, `Delivery::Lossy`); frames that do not verify, deltas
//! and full forms that do not apply, each with the error Rust gives (its Debug
//! form), in `schema/fixtures/delta.json`. The browser client's unit tests
//! (client-web/src/net/delta.test.ts) apply the same bytes with
//! `net/delta.ts`, `net/view.ts` and `net/held.ts` and must agree exactly.
//!
//! `MINO_UPDATE_FIXTURES=1 cargo test -p mino-protocol --test delta_fixture`
//! rewrites the file; otherwise the test fails unless it matches. The test
//! also fails unless the frames cover every item kind, every record kind and
//! every error (so a change to the cases cannot quietly drop one).

mod delta_cases;
mod fixture_file;

use delta_cases::{bad_deltas, bad_frames, bad_fulls, sequences, World, WORLDS};
use mino_protocol::delta::{self, DeltaError, Reader};
use mino_protocol::entry::Entry;
use mino_protocol::held::{Delivery, Held, HeldError, Update};
use mino_protocol::view::{ItemKind, ViewError, ViewFrame};
use std::collections::BTreeSet;
use std::fmt::Write as _;

const FIXTURE: &str = "fixtures/delta.json";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A JSON string of plain ASCII text (the cases' names need no escapes).
fn js(s: &str) -> String {
    assert!(s.chars().all(|c| c.is_ascii() && c != '"' && c != '\\'), "{s}");
    format!("\"{s}\"")
}

fn entries_json(entries: &[Entry]) -> String {
    let items: Vec<String> =
        entries.iter().map(|e| format!("[{}, {}, {}, {}, {}]", e.id.0, e.x, e.y, e.heading, e.flags)).collect();
    format!("[{}]", items.join(", "))
}

fn world_json(w: &World) -> String {
    let [a, b, c, d] = w.bounds.map(f64::from);
    format!(
        "{{\"bounds\": {{\"min_x\": {a}, \"min_y\": {b}, \"max_x\": {c}, \"max_y\": {d}}}, \"speed\": {}, \"tick_hz\": {}, \"max_players\": {}, \"cell_size\": {}, \"view_radius\": {}}}",
        f64::from(w.speed),
        w.tick_hz,
        w.max_players,
        f64::from(w.cell_size),
        f64::from(w.view_radius)
    )
}

/// Every cell `held` holds, sorted: [shard, cell, tick, entries].
fn held_json(held: &Held) -> String {
    let mut cells: Vec<_> = held.cells().collect();
    cells.sort_by_key(|(k, _)| **k);
    let items: Vec<String> = cells
        .iter()
        .map(|((shard, cell), c)| format!("[{shard}, {cell}, {}, {}]", c.tick, entries_json(c.entries)))
        .collect();
    format!("[{}]", items.join(", "))
}

fn update_json(u: &Update) -> String {
    match u {
        Update::Cell { shard, cell, tick } => format!("[\"cell\", {shard}, {cell}, {tick}]"),
        Update::Forgot { shard, cell, tick } => format!("[\"forgot\", {shard}, {cell}, {tick}]"),
        Update::Reset { shard, tick } => format!("[\"reset\", {shard}, 0, {tick}]"),
        Update::Broken { shard, cell, tick } => format!("[\"broken\", {shard}, {cell}, {tick}]"),
    }
}

/// What the cases cover, gathered from their bytes.
#[derive(Default)]
struct Coverage {
    /// "full", "forget", "delta 1" .. "delta 64", "length in tag", ...
    seen: BTreeSet<String>,
}

impl Coverage {
    fn see(&mut self, what: impl Into<String>) {
        self.seen.insert(what.into());
    }

    fn frame(&mut self, frame: &ViewFrame<'_>) {
        let sections = frame.sections().count();
        if sections > 1 {
            self.see("several sections");
        }
        let shards: BTreeSet<u32> = frame.sections().map(|s| s.shard).collect();
        if shards.len() < sections {
            self.see("a shard in two sections");
        }
        if frame.sections().filter(|s| s.implied.is_some()).count() > 1 {
            self.see("implied cells of the view named before");
        }
        for s in frame.sections() {
            if s.is_empty() {
                self.see("reset");
            }
            if s.implied.is_some() {
                self.see("implied cells");
            }
            for c in s.cells() {
                if c.items().count() > 1 {
                    self.see("several items in a cell");
                }
                for item in c.items() {
                    self.item(item.kind, item.body, item.bytes);
                }
            }
        }
    }

    fn item(&mut self, kind: ItemKind, body: &[u8], bytes: &[u8]) {
        match body.len() {
            0..=14 => self.see("length in the tag"),
            15 => self.see("length 15"),
            16..=142 => self.see("length in one more byte"),
            _ => self.see("length in two more bytes"),
        }
        assert_eq!(bytes.len() - body.len(), 1 + usize::from(body.len() >= 15) + usize::from(body.len() >= 143));
        match kind {
            ItemKind::Full => self.see("full"),
            ItemKind::Forget => self.see("forget"),
            ItemKind::Supplement => self.see("supplement"),
            ItemKind::Unchanged => self.see("unchanged"),
            ItemKind::Delta { span } => {
                self.see(format!("delta {span}"));
                if body.is_empty() {
                    self.see("empty delta");
                } else {
                    // Those meant not to apply may stop short: what they
                    // covered until then counts.
                    let _ = self.delta(body);
                }
            }
        }
    }

    /// Walks a well-formed delta's records.
    fn delta(&mut self, body: &[u8]) -> Result<(), DeltaError> {
        let mut r = Reader::new(body);
        let counts = r.u8()?;
        let (leaves, changes, enters) = if counts == 0b111_00000 {
            self.see("escaped counts");
            (r.varint()?, r.varint()?, r.varint()?)
        } else {
            (u64::from(counts & 3), u64::from(counts >> 2 & 7), u64::from(counts >> 5))
        };
        for (n, what) in [(leaves, "leaves"), (changes, "changes"), (enters, "enters")] {
            if n > 0 {
                self.see(what);
            }
        }
        for _ in 0..leaves {
            r.varint()?;
        }
        for _ in 0..changes {
            let what = r.varint()? & 7;
            self.see(format!("change {what}"));
            r.take(usize::from(what & 1 != 0) + usize::from(what & 2 != 0))?;
            if what & 4 != 0 {
                for _ in 0..2 {
                    let v = r.varint()?;
                    self.see(if v & 1 == 1 { "negative residual" } else { "positive residual" });
                    if v >= 128 {
                        self.see("residual of several bytes");
                    }
                }
            }
        }
        for _ in 0..enters {
            r.varint()?;
            r.take(delta::ENTRY_TAIL_BYTES)?;
        }
        r.finish()
    }
}

/// The sequences' JSON, and what their frames cover.
fn sequences_json(cover: &mut Coverage) -> String {
    let mut out = Vec::new();
    for seq in sequences() {
        let mut held = WORLDS[seq.world].held_by(seq.delivery);
        let mut frames = Vec::new();
        for bytes in &seq.frames {
            let frame = ViewFrame::parse(bytes).expect("the sequences' frames verify");
            cover.frame(&frame);
            let before: BTreeSet<(u32, u32)> = held.cells().map(|(k, _)| *k).collect();
            let (error, updates) = match held.apply(&frame) {
                Ok(updates) => {
                    for u in &updates {
                        match u {
                            Update::Cell { shard, cell, .. } if !before.contains(&(*shard, *cell)) => {
                                cover.see("a cell told the first time");
                            }
                            Update::Broken { .. } => cover.see("broken"),
                            _ => {}
                        }
                    }
                    let u: Vec<String> = updates.iter().map(update_json).collect();
                    ("null".to_string(), format!("[{}]", u.join(", ")))
                }
                Err(HeldError::Item { shard, cell, error }) => {
                    let lossy = seq.delivery == Delivery::Lossy;
                    assert!(lossy || seq.name == "items that do not apply to what is held", "only there: {error:?}");
                    cover.see(format!("held error {error:?}"));
                    (format!("{{\"shard\": {shard}, \"cell\": {cell}, \"error\": \"{error:?}\"}}"), "null".to_string())
                }
                Err(HeldError::Frame(ViewError::Implied)) => {
                    assert!(seq.name.contains("implied cells"), "only there: {}", seq.name);
                    cover.see("held frame error Implied");
                    ("{\"frame\": \"Implied\"}".to_string(), "null".to_string())
                }
                Err(HeldError::Frame(e)) => panic!("verified, yet {e:?}"),
            };
            frames.push(format!(
                "        {{\"hex\": \"{}\",\n         \"error\": {error}, \"updates\": {updates},\n         \"held\": {}}}",
                hex(bytes),
                held_json(&held)
            ));
        }
        out.push(format!(
            "    {{\"name\": {}, \"world\": {}, \"delivery\": {}, \"frames\": [\n{}\n    ]}}",
            js(seq.name),
            seq.world,
            js(match seq.delivery {
                Delivery::InOrder => "in order",
                Delivery::Lossy => "lossy",
            }),
            frames.join(",\n")
        ));
    }
    format!("[\n{}\n  ]", out.join(",\n"))
}

fn bad_frames_json(cover: &mut Coverage) -> String {
    let items: Vec<String> = bad_frames()
        .into_iter()
        .map(|(name, bytes)| {
            let error = ViewFrame::parse(&bytes).err().unwrap_or_else(|| panic!("{name}: verifies"));
            cover.see(format!("frame error {}", view_error_kind(&error)));
            format!("    {{\"name\": {}, \"hex\": \"{}\", \"error\": \"{error:?}\"}}", js(name), hex(&bytes))
        })
        .collect();
    format!("[\n{}\n  ]", items.join(",\n"))
}

/// A ViewError's variant name.
fn view_error_kind(e: &ViewError) -> String {
    let debug = format!("{e:?}");
    debug.split('(').next().unwrap_or_default().to_string()
}

fn bad_deltas_json(cover: &mut Coverage) -> String {
    let items: Vec<String> = bad_deltas()
        .into_iter()
        .map(|d| {
            let (name, world, base, span, body, max) = (d.name, d.world, d.base, d.span, d.body, d.max_players);
            let mut out = Vec::new();
            let error = delta::apply(&base, &body, span, &WORLDS[world].motion(), max, &mut out)
                .err()
                .unwrap_or_else(|| panic!("{name}: applies"));
            cover.see(format!("delta error {}", format!("{error:?}").split('(').next().unwrap_or_default()));
            format!(
                "    {{\"name\": {}, \"world\": {world}, \"base\": {}, \"span\": {span}, \"body\": \"{}\", \"max_players\": {max}, \"error\": \"{error:?}\"}}",
                js(name),
                entries_json(&base),
                hex(&body)
            )
        })
        .collect();
    format!("[\n{}\n  ]", items.join(",\n"))
}

fn bad_fulls_json(cover: &mut Coverage) -> String {
    let items: Vec<String> = bad_fulls()
        .into_iter()
        .map(|(name, body, max)| {
            let error =
                delta::decode_full(&body, max, &mut Vec::new()).err().unwrap_or_else(|| panic!("{name}: decodes"));
            cover.see(format!("full error {}", format!("{error:?}").split('(').next().unwrap_or_default()));
            format!(
                "    {{\"name\": {}, \"body\": \"{}\", \"max_players\": {max}, \"error\": \"{error:?}\"}}",
                js(name),
                hex(&body)
            )
        })
        .collect();
    format!("[\n{}\n  ]", items.join(",\n"))
}

fn fixture(cover: &mut Coverage) -> String {
    let worlds: Vec<String> = WORLDS.iter().map(|w| format!("    {}", world_json(w))).collect();
    format!(
        "{{\n  \"about\": \"schema/tests/delta_fixture.rs: protocol 8's view frames (mino_protocol::view, delta, held) and what a client holds after each\",\n  \"worlds\": [\n{}\n  ],\n  \"sequences\": {},\n  \"bad_frames\": {},\n  \"bad_deltas\": {},\n  \"bad_fulls\": {}\n}}\n",
        worlds.join(",\n"),
        sequences_json(cover),
        bad_frames_json(cover),
        bad_deltas_json(cover),
        bad_fulls_json(cover)
    )
}

#[test]
fn the_delta_fixture_matches_the_codec_and_covers_every_kind() {
    let mut cover = Coverage::default();
    let want = fixture(&mut cover);
    let mut missing = Vec::new();
    let mut need: Vec<String> = [
        "full",
        "forget",
        "supplement",
        "unchanged",
        "reset",
        "empty delta",
        "leaves",
        "changes",
        "enters",
        "escaped counts",
        "negative residual",
        "positive residual",
        "residual of several bytes",
        "length in the tag",
        "length 15",
        "length in one more byte",
        "length in two more bytes",
        "several sections",
        "a shard in two sections",
        "several items in a cell",
        "a cell told the first time",
        "broken",
    ]
    .map(String::from)
    .to_vec();
    need.extend((0..7).map(|k| format!("delta {}", 1 << k)));
    need.extend((1..8).map(|w| format!("change {w}")));
    let deltas = ["Truncated", "Varint", "Trailing", "Ids", "Index", "Change", "Position", "Duplicate"];
    need.extend(deltas.iter().chain(&["Span", "TooMany", "Counts"]).map(|e| format!("delta error {e}")));
    need.extend(
        deltas.iter().chain(&["TooMany", "Counts", "Supplement", "Unchanged"]).map(|e| format!("held error {e}")),
    );
    need.extend(["Truncated", "Varint", "Ids", "TooMany"].map(|e| format!("full error {e}")));
    need.extend(
        ["Bytes", "Kind", "ForgetBody", "Cells", "Items", "EmptySection", "Implied"]
            .map(|e| format!("frame error {e}")),
    );
    need.extend(
        ["implied cells", "implied cells of the view named before", "held frame error Implied"].map(String::from),
    );
    let seen = &cover.seen;
    for n in need {
        let hit = seen.contains(&n) || seen.iter().any(|s| s.starts_with(&format!("{n}(")));
        if !hit {
            missing.push(n);
        }
    }
    assert!(missing.is_empty(), "the cases miss {missing:?}; they cover {seen:?}");

    fixture_file::matches_or_update(FIXTURE, &want);
}
