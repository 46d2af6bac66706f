//! Fuzzes the server's decoder of client messages: any bytes must give a
//! message or an error, never a panic, and a decoded message must respect the
//! protocol's limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mino_protocol::client::{decode, ClientMsg};
use mino_protocol::limits;

fuzz_target!(|data: &[u8]| {
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
});
