//! What a test player receives, as owned values a test can match on: every
//! server message (verified and decoded by loadgen's decoder,
//! [`mino_loadgen::ServerEvent`]) with plain ids and positions, and the end of
//! the websocket.

use mino_loadgen::{ServerEvent, SnapshotFrame, Welcomed};
use mino_protocol::wire;

/// What a Welcome told the player.
#[derive(Clone, Debug)]
pub struct Welcome {
    /// True when this resumed an earlier session.
    pub resumed: bool,
    /// The player's id.
    pub player_id: u32,
    /// The shard that simulates the player.
    pub shard_id: u32,
    /// Snapshot rate, Hz.
    pub tick_hz: u16,
    /// Walking speed, world units per second.
    pub speed: f32,
    /// World bounds, world units.
    pub bounds: wire::Bounds,
    /// Position, world units.
    pub x: f32,
    /// Position, world units.
    pub y: f32,
    /// The resume ticket (secret).
    pub ticket: Vec<u8>,
}

/// One thing a test player received.
#[derive(Clone, Debug)]
pub enum Frame {
    /// Admitted.
    Welcome(Welcome),
    /// One shard's players at one tick: (id, x, y) in world units.
    Snapshot {
        /// The shard.
        shard: u32,
        /// Its tick.
        tick: u64,
        /// Its wall clock at the tick, ms since the Unix epoch.
        time_ms: u64,
        /// Every player: id and position.
        players: Vec<(u32, f32, f32)>,
    },
    /// A chat line.
    Chat {
        /// Sender's id.
        from: u32,
        /// Sender's name.
        name: String,
        /// The line.
        text: String,
        /// Sender's shard.
        shard: u32,
    },
    /// Players that joined (id, name) and left on one shard.
    Presence {
        /// Joined players.
        joined: Vec<(u32, String)>,
        /// Players that left.
        left: Vec<u32>,
    },
    /// Every present player (id, name).
    Roster(Vec<(u32, String)>),
    /// Refused for now.
    Busy {
        /// Why.
        reason: String,
        /// Retry after, ms.
        retry_after_ms: u32,
    },
    /// The close code the server is about to close with.
    Error(u16),
    /// Answer to a Ping: the Ping's client time, ms.
    Pong(f64),
    /// Drain: the fresh resume ticket to present elsewhere.
    Move(Vec<u8>),
    /// The websocket closed with this code (None: no close frame).
    Closed(Option<u16>),
}

impl Frame {
    /// Verifies and decodes one binary message from the server.
    ///
    /// Panics: the bytes fail verification (the server must never send such).
    pub fn decode(bytes: &[u8]) -> Frame {
        Frame::from(ServerEvent::decode(bytes).expect("server sent a valid frame"))
    }
}

impl From<ServerEvent> for Frame {
    fn from(event: ServerEvent) -> Frame {
        match event {
            ServerEvent::Welcome(w) => Frame::Welcome(Welcome::from(w)),
            ServerEvent::Snapshot(s) => snapshot(s),
            ServerEvent::Chat { from, name, text, shard_id } => {
                Frame::Chat { from: from.0, name, text, shard: shard_id.0 }
            }
            ServerEvent::Presence { joined, left, .. } => {
                Frame::Presence { joined: named(joined), left: left.into_iter().map(|p| p.0).collect() }
            }
            ServerEvent::Roster(players) => Frame::Roster(named(players)),
            ServerEvent::Busy { reason, retry_after_ms } => Frame::Busy { reason, retry_after_ms },
            ServerEvent::Error { code, .. } => Frame::Error(code),
            ServerEvent::Pong { client_time_ms, .. } => Frame::Pong(client_time_ms),
            ServerEvent::Move { ticket, .. } => Frame::Move(ticket),
        }
    }
}

impl From<Welcomed> for Welcome {
    fn from(w: Welcomed) -> Welcome {
        Welcome {
            resumed: w.resumed,
            player_id: w.player_id.0,
            shard_id: w.shard_id.0,
            tick_hz: w.tick_hz,
            speed: w.speed,
            bounds: w.bounds,
            x: w.position.0,
            y: w.position.1,
            ticket: w.ticket,
        }
    }
}

fn snapshot(s: SnapshotFrame) -> Frame {
    Frame::Snapshot {
        shard: s.shard_id.0,
        tick: s.tick.0,
        time_ms: s.server_time_ms,
        players: s.players.iter().map(|p| (p.id.0, p.x, p.y)).collect(),
    }
}

fn named(players: Vec<(mino_protocol::PlayerId, String)>) -> Vec<(u32, String)> {
    players.into_iter().map(|(id, name)| (id.0, name)).collect()
}

/// The websocket close code of `c`, as [`crate::Player::closed`] reports it.
pub fn close_code(c: wire::CloseCode) -> Option<u16> {
    Some(c.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::server;

    #[test]
    fn messages_become_frames() {
        assert!(matches!(
            Frame::decode(&server::encode_busy("full", 700)),
            Frame::Busy { reason, retry_after_ms: 700 } if reason == "full"
        ));
        assert!(matches!(Frame::decode(&server::encode_move(&[1, 2], "drain")), Frame::Move(t) if t == [1, 2]));
        let error = server::encode_error(wire::CloseCode::TicketUsed, "used");
        assert!(matches!(Frame::decode(&error), Frame::Error(4015)));
        assert_eq!(close_code(wire::CloseCode::Moved), Some(wire::CloseCode::Moved.0));
    }
}
