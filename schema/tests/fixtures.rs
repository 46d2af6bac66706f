//! The shared fixture of real server frames: encodes one frame of every
//! ServerMessage kind with mino_protocol's own encoders and records each with the
//! values a decoder must read from it, in `schema/fixtures/server-frames.json`.
//! The browser client's unit tests (client-web/src/net/fixtures.test.ts) decode
//! the same bytes, so the Rust encoder and the TypeScript decoder are held to
//! one file.
//!
//! `MINO_UPDATE_FIXTURES=1 cargo test -p mino-protocol --test fixtures` rewrites
//! the file; otherwise the test fails unless the file matches byte for byte.

use bytes::Bytes;
use mino_protocol::delta::encode_full;
use mino_protocol::entry::Entry;
use mino_protocol::quantize::world_position;
use mino_protocol::server::{self, AoiInfo, ServerMsg, WelcomeInfo};
use mino_protocol::snapshot::{PlayerEntry, SnapshotEncoder, SnapshotHeader};
use mino_protocol::view::{write_item, write_section, write_view_envelope, ItemKind, Section};
use mino_protocol::wire::{self, CloseCode};
use mino_protocol::{PlayerId, ShardId, Tick};
use std::fmt::Write as _;
use std::path::PathBuf;

const FIXTURE: &str = "fixtures/server-frames.json";

/// One recorded frame: its name, its union member, its bytes and the JSON object
/// of the values a decoder must read back.
struct Frame {
    name: &'static str,
    kind: &'static str,
    bytes: Bytes,
    expect: String,
}

/// A JSON string literal (RFC 8259 escaping; non-ASCII kept as UTF-8).
fn js(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn bounds_json(b: &wire::Bounds) -> String {
    format!(
        "{{\"min_x\": {}, \"min_y\": {}, \"max_x\": {}, \"max_y\": {}}}",
        b.min_x(),
        b.min_y(),
        b.max_x(),
        b.max_y()
    )
}

fn infos_json(players: &[(u32, &str)]) -> String {
    let items: Vec<String> =
        players.iter().map(|(id, name)| format!("{{\"id\": {id}, \"name\": {}}}", js(name))).collect();
    format!("[{}]", items.join(", "))
}

fn world() -> wire::Bounds {
    wire::Bounds::new(0.0, 0.0, 1000.0, 1000.0)
}

fn welcome() -> Frame {
    let ticket: Vec<u8> = (0u8..32).map(|i| i.wrapping_mul(37).wrapping_add(11)).collect();
    let bytes = server::encode_welcome(&WelcomeInfo {
        player_id: PlayerId(70_001),
        shard_id: ShardId(0x00c0_ffee),
        tick_hz: 20,
        bounds: world(),
        speed: 120.0,
        resume_ticket: &ticket,
        server_time_ms: 1_764_450_000_123,
        name: "Zoë <b>",
        position: (250.5, 731.25),
        resumed: false,
        aoi: None,
        capabilities: mino_protocol::client::Capabilities::DELTAS,
        cell_expiry_ms: 0,
    });
    // shard_id_text: the id as the server writes it for people (ShardId's
    // Display: logs, the admin console, the page's HUD), which the client's
    // formatShardId must match.
    let expect = format!(
        "{{\"player_id\": 70001, \"shard_id\": {}, \"shard_id_text\": {}, \"tick_hz\": 20, \"bounds\": {}, \
         \"speed\": 120, \"resume_ticket_hex\": {}, \"server_time_ms\": 1764450000123, \"name\": {}, \
         \"x\": 250.5, \"y\": 731.25, \"resumed\": false, \"aoi\": null, \"capabilities\": 1, \"cell_expiry_ms\": 0}}",
        0x00c0_ffee_u32,
        js(&ShardId(0x00c0_ffee).to_string()),
        bounds_json(&world()),
        js(&hex(&ticket)),
        js("Zoë <b>"),
    );
    Frame { name: "welcome", kind: "Welcome", bytes, expect }
}

/// The world of the area-of-interest frames: 2,000 units a side, 16 columns
/// of 125-unit cells.
fn aoi_world() -> wire::Bounds {
    wire::Bounds::new(0.0, 0.0, 2000.0, 2000.0)
}

/// Server time of the area-of-interest frames: its low 32 bits are what a
/// view frame carries.
const AOI_TIME_MS: u64 = 1_764_450_000_150;

fn welcome_aoi() -> Frame {
    let ticket = [0x5au8; 16];
    let aoi = AoiInfo { cell_size: 125.0, grid_columns: 16, view_radius: 250.0, view_grace_ms: 500 };
    let bytes = server::encode_welcome(&WelcomeInfo {
        player_id: PlayerId(70_001),
        shard_id: ShardId(7),
        tick_hz: 20,
        bounds: aoi_world(),
        speed: 300.0,
        resume_ticket: &ticket,
        server_time_ms: AOI_TIME_MS - 50,
        name: "ann",
        position: (700.0, 450.0),
        resumed: true,
        aoi: Some(aoi),
        capabilities: mino_protocol::client::Capabilities::DELTAS,
        // As a WebTransport session's (4 refreshes of 64 ticks at 20 Hz).
        cell_expiry_ms: 12_800,
    });
    let expect = format!(
        "{{\"player_id\": 70001, \"shard_id\": 7, \"tick_hz\": 20, \"bounds\": {}, \"speed\": 300, \
         \"resume_ticket_hex\": {}, \"server_time_ms\": {}, \"name\": \"ann\", \"x\": 700, \"y\": 450, \
         \"resumed\": true, \"aoi\": {{\"cell_size\": 125, \"grid_columns\": 16, \"view_radius\": 250, \
         \"view_grace_ms\": 500}}, \"capabilities\": 1, \"cell_expiry_ms\": 12800}}",
        bounds_json(&aoi_world()),
        js(&hex(&ticket)),
        AOI_TIME_MS - 50,
    );
    Frame { name: "welcome-aoi", kind: "Welcome", bytes, expect }
}

/// A view frame (protocol 5) of shard 7 at tick 2^32 + 5 (a section keeps
/// the low 32 bits): cell 54 as a full form of players whose flags echo input
/// sequence numbers, and cell 55 forgotten.
fn view() -> Frame {
    // Cells (column 5, row 3) and (column 6, row 3) of the 16-column grid:
    // 1 + 3 * 16 + 5 and the next.
    let players = vec![
        PlayerEntry { id: PlayerId(3), x: 625.5, y: 499.75, heading: 0, moving: false, input_seq: 127 },
        PlayerEntry { id: PlayerId(0x0001_0002), x: 749.9, y: 375.0, heading: 255, moving: true, input_seq: 0 },
        PlayerEntry { id: PlayerId(70_001), x: 700.0, y: 450.0, heading: 64, moving: true, input_seq: 5 },
    ];
    let entries: Vec<Entry> = players.iter().map(|p| p.quantized(&aoi_world())).collect();
    let (mut body, mut full, mut forget) = (Vec::new(), Vec::new(), Vec::new());
    encode_full(&entries, &mut body);
    write_item(&mut full, ItemKind::Full, &body);
    write_item(&mut forget, ItemKind::Forget, &[]);
    let cells: Vec<(u32, Vec<&[u8]>)> = vec![(54, vec![&full]), (55, vec![&forget])];
    let mut sections = Vec::new();
    write_section(&mut sections, &Section { shard: 7, tick: (1 << 32) + 5, cells: &cells });
    let mut bytes = Vec::new();
    write_view_envelope(&mut bytes, sections.len());
    bytes.extend_from_slice(&sections);
    let expect = format!(
        "{{\"bounds\": {}, \"sections\": [{{\"shard_id\": 7, \"tick\": 5, \"cells\": [\
         {{\"cell\": 54, \"items\": [{{\"kind\": \"full\", \"players\": {}}}]}}, \
         {{\"cell\": 55, \"items\": [{{\"kind\": \"forget\"}}]}}]}}]}}",
        bounds_json(&aoi_world()),
        entries_json(&players, &aoi_world()),
    );
    Frame { name: "view", kind: "View", bytes: Bytes::from(bytes), expect }
}

fn names() -> Frame {
    let players = [(3u32, "Ada"), (0x0001_0002u32, "Zoë <b>")];
    let bytes = server::encode_names(players.iter().map(|(id, n)| (PlayerId(*id), *n)));
    let expect = format!("{{\"players\": {}}}", infos_json(&players));
    Frame { name: "names", kind: "Names", bytes, expect }
}

fn place_status() -> Frame {
    let bytes = server::encode_place_status(12_345, 3);
    Frame { name: "place-status", kind: "PlaceStatus", bytes, expect: "{\"players\": 12345, \"shards\": 3}".into() }
}

fn snapshot_players() -> Vec<PlayerEntry> {
    vec![
        PlayerEntry { id: PlayerId(1), x: 0.0, y: 0.0, heading: 0, moving: false, input_seq: 0 },
        PlayerEntry { id: PlayerId(70_001), x: 250.5, y: 731.25, heading: 64, moving: true, input_seq: 5 },
        PlayerEntry { id: PlayerId(65_535), x: 999.99, y: 12.75, heading: 200, moving: true, input_seq: 127 },
        PlayerEntry { id: PlayerId(0xfffe_0003), x: 500.0, y: 500.0, heading: 255, moving: false, input_seq: 0 },
        PlayerEntry { id: PlayerId(42), x: -5.0, y: 1005.0, heading: 128, moving: false, input_seq: 0 },
    ]
}

/// The entries as a decoder must read them back: id, quantized and world
/// position over `bounds`, heading, flags.
fn entries_json(players: &[PlayerEntry], bounds: &wire::Bounds) -> String {
    let items: Vec<String> = players
        .iter()
        .map(|p| {
            let w = p.to_wire(bounds);
            let (x, y) = world_position(bounds, w.x(), w.y());
            format!(
                "{{\"id\": {}, \"qx\": {}, \"qy\": {}, \"x\": {x}, \"y\": {y}, \"heading\": {}, \"flags\": {}}}",
                p.id.0,
                w.x(),
                w.y(),
                w.heading(),
                w.flags()
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

fn snapshot() -> Frame {
    let header = SnapshotHeader {
        shard_id: ShardId(7),
        tick: Tick(123_456),
        server_time_ms: 1_764_450_000_150,
        tick_hz: 20,
        bounds: world(),
        cell: 0,
    };
    let players = snapshot_players();
    let bytes = SnapshotEncoder::new().encode(&header, players.iter().copied());
    let expect = format!(
        "{{\"shard_id\": 7, \"tick\": 123456, \"server_time_ms\": 1764450000150, \"tick_hz\": 20, \
         \"bounds\": {}, \"cell\": 0, \"players\": {}}}",
        bounds_json(&header.bounds),
        entries_json(&players, &header.bounds)
    );
    Frame { name: "snapshot", kind: "Snapshot", bytes, expect }
}

fn empty_snapshot() -> Frame {
    let bounds = wire::Bounds::new(-500.0, -250.0, 500.0, 250.0);
    let header = SnapshotHeader {
        shard_id: ShardId(9),
        tick: Tick(1),
        server_time_ms: 1_764_450_000_000,
        tick_hz: 30,
        bounds,
        cell: 3,
    };
    let bytes = SnapshotEncoder::new().encode(&header, []);
    let expect = format!(
        "{{\"shard_id\": 9, \"tick\": 1, \"server_time_ms\": 1764450000000, \"tick_hz\": 30, \"bounds\": {}, \
         \"cell\": 3, \"players\": []}}",
        bounds_json(&bounds)
    );
    Frame { name: "snapshot-empty", kind: "Snapshot", bytes, expect }
}

fn chat() -> Frame {
    let text = "hi <img src=x onerror=alert(1)> & \"quotes\" \u{1f600}";
    let bytes = server::encode_chat(PlayerId(70_001), "Zoë <b>", text, ShardId(7), 1_764_450_000_200);
    let expect = format!(
        "{{\"from_id\": 70001, \"name\": {}, \"text\": {}, \"shard_id\": 7, \"server_time_ms\": 1764450000200}}",
        js("Zoë <b>"),
        js(text)
    );
    Frame { name: "chat", kind: "ChatMessage", bytes, expect }
}

fn presence() -> Frame {
    let joined = [(5u32, "Ada"), (70_002u32, "Grace")];
    let left = [3u32, 4];
    let bytes = server::encode_presence(
        ShardId(7),
        12,
        joined.iter().map(|(id, n)| (PlayerId(*id), *n)),
        left.iter().map(|id| PlayerId(*id)),
    );
    let expect = format!("{{\"shard_id\": 7, \"joined\": {}, \"left\": [3, 4], \"seq\": 12}}", infos_json(&joined));
    Frame { name: "presence", kind: "Presence", bytes, expect }
}

fn roster() -> Frame {
    let players = [(1u32, "one", 7u32), (70_001u32, "Zoë <b>", 0xdead_beef), (65_535u32, "edge", 7)];
    let bytes = server::encode_roster(players.iter().map(|(id, n, s)| (PlayerId(*id), *n, ShardId(*s))));
    let items: Vec<String> = players
        .iter()
        .map(|(id, name, shard)| format!("{{\"id\": {id}, \"name\": {}, \"shard_id\": {shard}}}", js(name)))
        .collect();
    let expect = format!("{{\"players\": [{}]}}", items.join(", "));
    Frame { name: "roster", kind: "Roster", bytes, expect }
}

fn busy() -> Frame {
    let bytes = server::encode_busy("ticks are late", 2500);
    Frame {
        name: "busy",
        kind: "Busy",
        bytes,
        expect: "{\"reason\": \"ticks are late\", \"retry_after_ms\": 2500}".into(),
    }
}

fn error() -> Frame {
    let bytes = server::encode_error(CloseCode::SessionReplaced, "opened elsewhere");
    let expect = format!("{{\"code\": {}, \"message\": \"opened elsewhere\"}}", CloseCode::SessionReplaced.0);
    Frame { name: "error", kind: "Error", bytes, expect }
}

fn pong() -> Frame {
    let bytes = server::encode_pong(12_345.678, 1_764_450_000_300);
    Frame {
        name: "pong",
        kind: "Pong",
        bytes,
        expect: "{\"client_time_ms\": 12345.678, \"server_time_ms\": 1764450000300}".into(),
    }
}

fn moved() -> Frame {
    let ticket = [0xa5u8; 16];
    let bytes = server::encode_move(&ticket, "shard draining");
    let expect = format!("{{\"resume_ticket_hex\": {}, \"reason\": \"shard draining\"}}", js(&hex(&ticket)));
    Frame { name: "move", kind: "Move", bytes, expect }
}

fn frames() -> Vec<Frame> {
    vec![
        welcome(),
        welcome_aoi(),
        snapshot(),
        empty_snapshot(),
        view(),
        chat(),
        presence(),
        roster(),
        busy(),
        error(),
        pong(),
        moved(),
        names(),
        place_status(),
    ]
}

/// The union member name of a decoded frame, as in mino.fbs.
fn kind_of(msg: &ServerMsg<'_>) -> &'static str {
    match msg {
        ServerMsg::Welcome(_) => "Welcome",
        ServerMsg::Snapshot(_) => "Snapshot",
        ServerMsg::Chat(_) => "ChatMessage",
        ServerMsg::Presence(_) => "Presence",
        ServerMsg::Roster(_) => "Roster",
        ServerMsg::Busy(_) => "Busy",
        ServerMsg::Error(_) => "Error",
        ServerMsg::Pong(_) => "Pong",
        ServerMsg::Move(_) => "Move",
        ServerMsg::Names(_) => "Names",
        ServerMsg::PlaceStatus(_) => "PlaceStatus",
        ServerMsg::View(_) => "View",
        ServerMsg::CellBundle(_) => "CellBundle",
    }
}

fn render(frames: &[Frame]) -> String {
    let mut out = String::from("{\n  \"generator\": \"schema/tests/fixtures.rs (MINO_UPDATE_FIXTURES=1 cargo test -p mino-protocol --test fixtures)\",\n  \"frames\": [\n");
    for (i, f) in frames.iter().enumerate() {
        let sep = if i + 1 == frames.len() { "" } else { "," };
        let _ = writeln!(
            out,
            "    {{\"name\": {}, \"kind\": {}, \"hex\": {},\n     \"expect\": {}}}{sep}",
            js(f.name),
            js(f.kind),
            js(&hex(&f.bytes)),
            f.expect
        );
    }
    out.push_str("  ]\n}\n");
    out
}

#[test]
fn every_fixture_frame_decodes_as_its_kind() {
    for f in frames() {
        let msg = server::decode(&f.bytes).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        assert_eq!(kind_of(&msg), f.kind, "{}", f.name);
    }
}

#[test]
fn fixture_file_matches_the_encoders() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let want = render(&frames());
    if std::env::var_os("MINO_UPDATE_FIXTURES").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("fixture dir")).expect("create fixtures/");
        std::fs::write(&path, &want).expect("write fixture");
        return;
    }
    let have = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run with MINO_UPDATE_FIXTURES=1 to create it", path.display()));
    assert!(
        have == want,
        "{} is out of date with the encoders; rerun with MINO_UPDATE_FIXTURES=1 and commit it",
        path.display()
    );
}

#[test]
fn protocol_2_messages_still_decode_as_their_kind() {
    // The field ids of ServerMessage's players and body did not move in
    // protocol 3, so a shard reads the snapshots, chat and presence of a
    // shard not yet upgraded (and the last snapshot it left in Redis).
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/protocol-2-messages.txt");
    let text = std::fs::read_to_string(&path).expect("the protocol 2 messages");
    let mut kinds = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (kind, hex) = line.split_once(' ').expect("kind and hex");
        let bytes: Vec<u8> =
            (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex")).collect();
        let msg = server::decode(&bytes).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(kind_of(&msg), kind);
        kinds.push(kind);
    }
    for needed in ["Snapshot", "ChatMessage", "Presence", "Roster", "Welcome"] {
        assert!(kinds.contains(&needed), "{needed} among {kinds:?}");
    }
}
