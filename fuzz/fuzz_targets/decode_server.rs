//! Fuzzes the verified decoder of server messages (bots, relaying shards):
//! any bytes must give a message or an error, never a panic; and whatever is
//! accepted must read within its bytes (a snapshot's players, each item of a
//! view frame, each cell of a bundle between shards).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mino_protocol::server::{decode, player_id, ServerMsg};

fuzz_target!(|data: &[u8]| {
    match decode(data) {
        Ok(ServerMsg::Snapshot(s)) => {
            if let Some(players) = s.players() {
                for p in players.iter() {
                    let _ = player_id(p);
                }
            }
        }
        Ok(ServerMsg::View(v)) => {
            // Verified end to end: every section's cells and items read
            // within the frame's bytes.
            for s in v.sections() {
                for c in s.cells() {
                    for i in c.items() {
                        assert!(i.bytes.ends_with(i.body), "an item's body is its end");
                    }
                }
            }
        }
        Ok(ServerMsg::CellBundle(b)) => {
            let n = b.items().len();
            for c in b.cells() {
                assert!(c.full.end <= n, "a cell's full form within the bundle's items");
                assert!(c.deltas.iter().all(|(_, r)| r.end <= n), "a cell's deltas within the bundle's items");
            }
        }
        _ => {}
    }
});
