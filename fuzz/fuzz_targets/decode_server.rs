//! Fuzzes the verified decoder of server messages (bots, relaying shards):
//! any bytes must give a message or an error, never a panic; and whatever is
//! accepted must read within its bytes (a snapshot's players, each cell of a
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
            let mut players = 0;
            for c in v.cells() {
                players += c.players().len();
                for p in c.players().iter() {
                    let _ = player_id(&p);
                }
            }
            assert_eq!(players, v.players(), "the cells hold every player of the frame");
        }
        Ok(ServerMsg::CellBundle(b)) => {
            for (_, range) in b.cells() {
                assert!(range.end <= b.players().len(), "a cell within the bundle's players");
            }
        }
        _ => {}
    }
});
