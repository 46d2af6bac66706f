//! Replays the cargo-fuzz corpus of the client-message decoder (`fuzz/`), and
//! runs a short deterministic mutation fuzz of valid messages, as part of the
//! ordinary test run (cargo-fuzz itself needs no install for this).
//!
//! `MINO_WRITE_FUZZ_SEEDS=1 cargo test -p mino-protocol --test fuzz_corpus`
//! (re)writes the seed inputs into the corpus folder.

use mino_protocol::client::{self, decode, ClientMsg};
use mino_protocol::limits;
use std::path::PathBuf;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/decode_client")
}

fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("seed-hello", client::encode_hello("Ada", None, None)),
        ("seed-hello-full", client::encode_hello("Zoë 🎮", Some("token"), Some(&[9; 16]))),
        ("seed-input", client::encode_input(1, 0.6, -0.8)),
        ("seed-input-still", client::encode_input(2, 0.0, 0.0)),
        ("seed-chat", client::encode_chat("hello there")),
        ("seed-ping", client::encode_ping(12345.0)),
        ("seed-empty", Vec::new()),
        ("seed-garbage", vec![0xff, 0, 0, 0, 0xff, 0xff]),
    ]
}

/// Checks the properties the fuzz target checks.
fn check(data: &[u8]) {
    match decode(data) {
        Ok(ClientMsg::Hello(h)) => {
            assert!(h.name.chars().count() <= limits::MAX_NAME_CHARS);
            assert!(h.resume_ticket.map_or(0, |t| t.len()) <= limits::MAX_TICKET_BYTES);
        }
        Ok(ClientMsg::Chat(text)) => assert!(text.chars().count() <= limits::MAX_CHAT_CHARS),
        Ok(ClientMsg::Input { dir, .. }) => assert!(dir.x().is_finite() && dir.y().is_finite()),
        Ok(ClientMsg::Names(ids)) => assert!(ids.len() <= mino_protocol::client::MAX_NAMES_REQUEST_IDS),
        Ok(ClientMsg::Ping { .. }) | Err(_) => {}
    }
}

#[test]
fn corpus_replays_without_panic() {
    if std::env::var_os("MINO_WRITE_FUZZ_SEEDS").is_some() {
        std::fs::create_dir_all(corpus_dir()).expect("mkdir corpus");
        for (name, bytes) in seeds() {
            std::fs::write(corpus_dir().join(name), bytes).expect("write seed");
        }
    }
    let entries: Vec<_> =
        std::fs::read_dir(corpus_dir()).expect("fuzz/corpus/decode_client exists").filter_map(Result::ok).collect();
    assert!(entries.len() >= seeds().len(), "corpus has at least the seeds");
    let mut decoded = 0;
    for e in entries {
        let data = std::fs::read(e.path()).expect("read corpus file");
        check(&data);
        decoded += usize::from(decode(&data).is_ok());
    }
    assert!(decoded >= 6, "the valid seeds decode");
}

/// xorshift64*: a tiny deterministic generator so the run is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn mutations_of_valid_messages_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let seeds = seeds();
    for _ in 0..50_000 {
        let (_, base) = &seeds[(rng.next() % seeds.len() as u64) as usize];
        let mut data = base.clone();
        let edits = 1 + rng.next() % 4;
        for _ in 0..edits {
            if data.is_empty() {
                data.push(rng.next() as u8);
                continue;
            }
            let i = (rng.next() % data.len() as u64) as usize;
            match rng.next() % 4 {
                0 => data[i] ^= 1 << (rng.next() % 8),
                1 => data[i] = rng.next() as u8,
                2 => data.truncate(i),
                _ => data.insert(i, rng.next() as u8),
            }
        }
        check(&data);
    }
}
