//! Fuzzes the verified decoder of server messages (bots, relaying shards):
//! any bytes must give a message or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mino_protocol::server::ServerMsg::Snapshot(s)) = mino_protocol::server::decode(data) {
        if let Some(players) = s.players() {
            for p in players.iter() {
                let _ = mino_protocol::server::player_id(p);
            }
        }
    }
});
