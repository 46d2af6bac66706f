//! Replays the cargo-fuzz corpora (`fuzz/`) of the client-message decoder and
//! of protocol 8's view frames (`view_frame`: `ViewFrame::parse` and
//! `Held::apply`, with the target's own checks, `fuzz/checks/view_frame.rs`),
//! and runs a short deterministic mutation fuzz of valid inputs of each, as
//! part of the ordinary test run (cargo-fuzz itself needs no install for this).
//!
//! `MINO_WRITE_FUZZ_SEEDS=1 cargo test -p mino-protocol --test fuzz_corpus`
//! (re)writes the seed inputs into the corpus folders.

mod delta_cases;
#[path = "../../fuzz/checks/view_frame.rs"]
mod view_frame;

use delta_cases::{held_frame, mutate, mutate_bytes, sequences, Rng, WORLDS};
use mino_protocol::client::{self, decode, ClientMsg};
use mino_protocol::limits;
use mino_protocol::view::ViewFrame;
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
        ("seed-resync", client::encode_resync()),
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
        Ok(ClientMsg::Ping { .. } | ClientMsg::Resync) | Err(_) => {}
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

fn view_corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/view_frame")
}

/// The view frame target's seeds: each shared sequence of frames
/// (`tests/delta_cases`) cut into runs of up to four, each run after a frame
/// of full forms setting up what a client held before it. With the frames,
/// for the mutation run: what is held before each frame.
fn view_seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (s, seq) in sequences().into_iter().enumerate() {
        let mut held = WORLDS[seq.world].held();
        for (k, run) in seq.frames.chunks(4).enumerate() {
            let setup = held_frame(&held);
            let frames: Vec<&[u8]> = setup.iter().map(Vec::as_slice).chain(run.iter().map(Vec::as_slice)).collect();
            out.push((format!("seed-{s:02}-{k:02}"), view_frame::join(seq.world as u8, &frames)));
            for f in run {
                let _ = held.apply(&ViewFrame::parse(f).expect("the cases verify"));
            }
        }
    }
    out
}

#[test]
fn view_frame_corpus_replays_with_its_checks() {
    if std::env::var_os("MINO_WRITE_FUZZ_SEEDS").is_some() {
        std::fs::create_dir_all(view_corpus_dir()).expect("mkdir corpus");
        for (name, bytes) in view_seeds() {
            std::fs::write(view_corpus_dir().join(name), bytes).expect("write seed");
        }
    }
    let entries: Vec<_> =
        std::fs::read_dir(view_corpus_dir()).expect("fuzz/corpus/view_frame exists").filter_map(Result::ok).collect();
    assert!(entries.len() >= view_seeds().len(), "the corpus has at least the seeds");
    let mut applied = 0;
    for e in entries {
        let data = std::fs::read(e.path()).expect("read corpus file");
        view_frame::check(&data);
        let (world, frames) = view_frame::split(&data);
        let mut held = WORLDS[world].held();
        applied += frames.iter().filter(|f| ViewFrame::parse(f).is_ok_and(|f| held.apply(&f).is_ok())).count();
    }
    assert!(applied > 100, "the seeds' frames apply: {applied}");
}

#[test]
fn mutations_of_view_frames_keep_the_checks() {
    let mut rng = Rng(0x51ed_270b_9c4f_a3e1);
    let seeds = view_seeds();
    for _ in 0..4_000 {
        let (_, data) = &seeds[rng.below(seeds.len() as u64) as usize];
        let data = if rng.chance(300) {
            mutate_bytes(data, &mut rng)
        } else {
            // One frame mutated as a client holding what came before gets it.
            let (world, frames) = view_frame::split(data);
            let k = rng.below(frames.len().max(1) as u64) as usize;
            let mut held = WORLDS[world].held();
            for f in &frames[..k] {
                if let Ok(f) = ViewFrame::parse(f) {
                    let _ = held.apply(&f);
                }
            }
            let mut frames: Vec<Vec<u8>> = frames.iter().map(|f| f.to_vec()).collect();
            if let Some(f) = frames.get_mut(k) {
                *f = mutate(f, &held, &mut rng);
            }
            view_frame::join(world as u8, &frames.iter().map(Vec::as_slice).collect::<Vec<_>>())
        };
        view_frame::check(&data);
    }
}
