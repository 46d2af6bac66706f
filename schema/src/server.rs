//! Server-to-client messages: the encoders a shard uses for everything but the
//! snapshot (see [`crate::snapshot`]), and a verified, zero-copy decoder for bots,
//! tests and relaying shards.

use crate::ids::{PlayerId, ShardId};
use crate::limits;
use crate::root::finish;
use crate::wire::{self, CloseCode};
use bytes::Bytes;
use flatbuffers::{FlatBufferBuilder, WIPOffset};

/// Everything a Welcome carries.
#[derive(Clone, Debug)]
pub struct WelcomeInfo<'a> {
    /// The player's id in the place.
    pub player_id: PlayerId,
    /// The shard that simulates the player.
    pub shard_id: ShardId,
    /// Snapshot rate, Hz.
    pub tick_hz: u16,
    /// World bounds, world units.
    pub bounds: wire::Bounds,
    /// Walking speed, world units per second.
    pub speed: f32,
    /// Secret resume ticket.
    pub resume_ticket: &'a [u8],
    /// Server wall clock, ms since the Unix epoch.
    pub server_time_ms: u64,
    /// Accepted display name.
    pub name: &'a str,
    /// Current position, world units.
    pub position: (f32, f32),
    /// True when this resumed an earlier session.
    pub resumed: bool,
    /// Area of interest (`None`: the whole place is one cell).
    pub aoi: Option<AoiInfo>,
    /// The Hello's capabilities granted.
    pub capabilities: crate::client::Capabilities,
    /// A held cell sent nothing for this long is dropped, ms (0: held until
    /// forgotten; see [`crate::held::Held::expiring`]).
    pub cell_expiry_ms: u32,
}

/// The area-of-interest settings a Welcome tells the client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AoiInfo {
    /// Cell side, world units.
    pub cell_size: f32,
    /// Columns of the grid.
    pub grid_columns: u32,
    /// View radius, world units.
    pub view_radius: f32,
    /// How long a player seen in no cell stays drawn, ms.
    pub view_grace_ms: u32,
}

/// Encodes a Welcome.
pub fn encode_welcome(w: &WelcomeInfo<'_>) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(256);
    let ticket = fbb.create_vector(w.resume_ticket);
    let name = fbb.create_string(w.name);
    let body = wire::Welcome::create(
        &mut fbb,
        &wire::WelcomeArgs {
            player_id: w.player_id.0,
            shard_id: w.shard_id.0,
            tick_hz: w.tick_hz,
            bounds: Some(&w.bounds),
            speed: w.speed,
            resume_ticket: Some(ticket),
            server_time_ms: w.server_time_ms,
            name: Some(name),
            x: w.position.0,
            y: w.position.1,
            resumed: w.resumed,
            cell_size: w.aoi.map_or(0.0, |a| a.cell_size),
            grid_columns: w.aoi.map_or(0, |a| a.grid_columns),
            view_radius: w.aoi.map_or(0.0, |a| a.view_radius),
            view_grace_ms: w.aoi.map_or(0, |a| a.view_grace_ms),
            capabilities: w.capabilities.0,
            cell_expiry_ms: w.cell_expiry_ms,
        },
    );
    finish(&mut fbb, wire::ServerBody::Welcome, body.as_union_value())
}

/// Encodes a chat line from `from` (with its display name) on `shard`.
pub fn encode_chat(from: PlayerId, name: &str, text: &str, shard: ShardId, server_time_ms: u64) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(96 + name.len() + text.len());
    let name = fbb.create_string(name);
    let text = fbb.create_string(text);
    let body = wire::ChatMessage::create(
        &mut fbb,
        &wire::ChatMessageArgs {
            from_id: from.0,
            name: Some(name),
            text: Some(text),
            shard_id: shard.0,
            server_time_ms,
        },
    );
    finish(&mut fbb, wire::ServerBody::ChatMessage, body.as_union_value())
}

/// PlayerInfos of `players`: id, name and, when given, the shard the player is on.
fn player_infos<'a, 'f>(
    fbb: &mut FlatBufferBuilder<'f>,
    players: impl Iterator<Item = (PlayerId, &'a str, Option<ShardId>)>,
) -> WIPOffset<flatbuffers::Vector<'f, flatbuffers::ForwardsUOffset<wire::PlayerInfo<'f>>>> {
    let infos: Vec<_> = players
        .map(|(id, name, shard)| {
            let name = fbb.create_string(name);
            let shard_id = shard.map(|s| s.0);
            wire::PlayerInfo::create(fbb, &wire::PlayerInfoArgs { id: id.0, name: Some(name), shard_id })
        })
        .collect();
    fbb.create_vector(&infos)
}

/// Encodes a Presence: players of `shard` that joined (with names) and left;
/// `seq` is the shard's presence sequence number (0 for one made about another shard).
pub fn encode_presence<'a>(
    shard: ShardId,
    seq: u64,
    joined: impl Iterator<Item = (PlayerId, &'a str)>,
    left: impl Iterator<Item = PlayerId>,
) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(256);
    let joined = player_infos(&mut fbb, joined.map(|(id, name)| (id, name, None)));
    let left: Vec<u32> = left.map(|p| p.0).collect();
    let left = fbb.create_vector(&left);
    let body = wire::Presence::create(
        &mut fbb,
        &wire::PresenceArgs { shard_id: shard.0, joined: Some(joined), left: Some(left), seq },
    );
    finish(&mut fbb, wire::ServerBody::Presence, body.as_union_value())
}

/// Encodes a Roster of every present player: id, name and the shard it is on
/// (a client then drops a player on a "left" of that shard only).
pub fn encode_roster<'a>(players: impl Iterator<Item = (PlayerId, &'a str, ShardId)>) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(4096);
    let players = player_infos(&mut fbb, players.map(|(id, name, shard)| (id, name, Some(shard))));
    let body = wire::Roster::create(&mut fbb, &wire::RosterArgs { players: Some(players) });
    finish(&mut fbb, wire::ServerBody::Roster, body.as_union_value())
}

/// Encodes a Busy refusal with a retry-after in ms.
pub fn encode_busy(reason: &str, retry_after_ms: u32) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(128);
    let reason = fbb.create_string(reason);
    let body = wire::Busy::create(&mut fbb, &wire::BusyArgs { reason: Some(reason), retry_after_ms });
    finish(&mut fbb, wire::ServerBody::Busy, body.as_union_value())
}

/// Encodes an Error that precedes a close with the same code.
pub fn encode_error(code: CloseCode, message: &str) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(128);
    let message = fbb.create_string(message);
    let body = wire::Error::create(&mut fbb, &wire::ErrorArgs { code, message: Some(message) });
    finish(&mut fbb, wire::ServerBody::Error, body.as_union_value())
}

/// Encodes a Pong answering a Ping.
pub fn encode_pong(client_time_ms: f64, server_time_ms: u64) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(64);
    let body = wire::Pong::create(&mut fbb, &wire::PongArgs { client_time_ms, server_time_ms });
    finish(&mut fbb, wire::ServerBody::Pong, body.as_union_value())
}

/// Encodes a Move: reconnect and resume with `resume_ticket`.
pub fn encode_move(resume_ticket: &[u8], reason: &str) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(128);
    let ticket = fbb.create_vector(resume_ticket);
    let reason = fbb.create_string(reason);
    let body = wire::Move::create(&mut fbb, &wire::MoveArgs { resume_ticket: Some(ticket), reason: Some(reason) });
    finish(&mut fbb, wire::ServerBody::Move, body.as_union_value())
}

/// Encodes the Names a NamesRequest asked for.
pub fn encode_names<'a>(players: impl Iterator<Item = (PlayerId, &'a str)>) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(512);
    let players = player_infos(&mut fbb, players.map(|(id, name)| (id, name, None)));
    let body = wire::Names::create(&mut fbb, &wire::NamesArgs { players: Some(players) });
    finish(&mut fbb, wire::ServerBody::Names, body.as_union_value())
}

/// Encodes a PlaceStatus: players in the place and live shards.
pub fn encode_place_status(players: u32, shards: u32) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(64);
    let body = wire::PlaceStatus::create(&mut fbb, &wire::PlaceStatusArgs { players, shards });
    finish(&mut fbb, wire::ServerBody::PlaceStatus, body.as_union_value())
}

/// A verified server message, borrowing the buffer it was read from.
#[derive(Clone, Debug)]
pub enum ServerMsg<'a> {
    /// See [`wire::Welcome`].
    Welcome(wire::Welcome<'a>),
    /// See [`wire::Snapshot`].
    Snapshot(wire::Snapshot<'a>),
    /// See [`wire::ChatMessage`].
    Chat(wire::ChatMessage<'a>),
    /// See [`wire::Presence`].
    Presence(wire::Presence<'a>),
    /// See [`wire::Roster`].
    Roster(wire::Roster<'a>),
    /// See [`wire::Busy`].
    Busy(wire::Busy<'a>),
    /// See [`wire::Error`].
    Error(wire::Error<'a>),
    /// See [`wire::Pong`].
    Pong(wire::Pong<'a>),
    /// See [`wire::Move`].
    Move(wire::Move<'a>),
    /// See [`wire::Names`].
    Names(wire::Names<'a>),
    /// See [`wire::PlaceStatus`].
    PlaceStatus(wire::PlaceStatus<'a>),
    /// A view frame: see [`crate::view::ViewFrame`].
    View(crate::view::ViewFrame<'a>),
    /// Between shards: see [`crate::view::Bundle`].
    CellBundle(crate::view::Bundle<'a>),
}

/// Why a server message could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ServerDecodeError {
    /// Over [`limits::MAX_SERVER_MESSAGE_BYTES`].
    #[error("server message of {0} bytes is over the limit")]
    TooLarge(usize),
    /// Fails the verifier.
    #[error("malformed server message: {0}")]
    Malformed(String),
    /// A union member this client does not know.
    #[error("unknown server message type {0}")]
    Unknown(u8),
}

/// Verifies `buf` as a ServerMessage and returns a typed view.
///
/// Errors: [`ServerDecodeError`]; never panics.
pub fn decode(buf: &[u8]) -> Result<ServerMsg<'_>, ServerDecodeError> {
    if buf.len() > limits::MAX_SERVER_MESSAGE_BYTES {
        return Err(ServerDecodeError::TooLarge(buf.len()));
    }
    let msg = flatbuffers::root_with_opts::<wire::ServerMessage>(&limits::server_verifier(), buf)
        .map_err(|e| ServerDecodeError::Malformed(e.to_string()))?;
    use wire::ServerBody as B;
    let kind = msg.body_type();
    if kind == B::NONE {
        if let Some(view) = msg.view() {
            return crate::view::ViewFrame::parse(view.bytes())
                .map(ServerMsg::View)
                .map_err(|e| ServerDecodeError::Malformed(format!("view frame: {e}")));
        }
    }
    if kind == B::CellBundle {
        let bundle = msg.body_as_cell_bundle().ok_or(ServerDecodeError::Unknown(kind.0))?;
        return crate::view::Bundle::of(bundle)
            .map(ServerMsg::CellBundle)
            .map_err(|e| ServerDecodeError::Malformed(format!("region bundle: {e}")));
    }
    match kind {
        B::Welcome => msg.body_as_welcome().map(ServerMsg::Welcome),
        B::Snapshot => msg.body_as_snapshot().map(ServerMsg::Snapshot),
        B::ChatMessage => msg.body_as_chat_message().map(ServerMsg::Chat),
        B::Presence => msg.body_as_presence().map(ServerMsg::Presence),
        B::Roster => msg.body_as_roster().map(ServerMsg::Roster),
        B::Busy => msg.body_as_busy().map(ServerMsg::Busy),
        B::Error => msg.body_as_error().map(ServerMsg::Error),
        B::Pong => msg.body_as_pong().map(ServerMsg::Pong),
        B::Move => msg.body_as_move().map(ServerMsg::Move),
        B::Names => msg.body_as_names().map(ServerMsg::Names),
        B::PlaceStatus => msg.body_as_place_status().map(ServerMsg::PlaceStatus),
        _ => None,
    }
    .ok_or(ServerDecodeError::Unknown(kind.0))
}

pub use crate::entry::player_id;

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds() -> wire::Bounds {
        wire::Bounds::new(0.0, 0.0, 1000.0, 500.0)
    }

    #[test]
    fn welcome_round_trips() {
        let bytes = encode_welcome(&WelcomeInfo {
            player_id: PlayerId(9),
            shard_id: ShardId(3),
            tick_hz: 20,
            bounds: bounds(),
            speed: 100.0,
            resume_ticket: &[7; 16],
            server_time_ms: 123,
            name: "Ada",
            position: (1.5, 2.5),
            resumed: false,
            aoi: Some(AoiInfo { cell_size: 100.0, grid_columns: 10, view_radius: 200.0, view_grace_ms: 400 }),
            capabilities: crate::client::Capabilities::DELTAS,
            cell_expiry_ms: 12_800,
        });
        let Ok(ServerMsg::Welcome(w)) = decode(&bytes) else { panic!("not a welcome") };
        assert_eq!((w.player_id(), w.shard_id(), w.tick_hz()), (9, 3, 20));
        assert_eq!(w.resume_ticket().map(|t| t.bytes().to_vec()), Some(vec![7; 16]));
        assert_eq!(w.bounds().map(|b| b.max_y()), Some(500.0));
        assert_eq!(w.name(), Some("Ada"));
        assert_eq!((w.cell_size(), w.grid_columns(), w.view_radius(), w.view_grace_ms()), (100.0, 10, 200.0, 400));
        assert_eq!(w.capabilities(), 1);
        assert_eq!(w.cell_expiry_ms(), 12_800);
    }

    #[test]
    fn names_and_place_status_round_trip() {
        let names = encode_names([(PlayerId(4), "Ada")].into_iter());
        let Ok(ServerMsg::Names(n)) = decode(&names) else { panic!() };
        assert_eq!(n.players().map(|p| (p.get(0).id(), p.get(0).name())), Some((4, Some("Ada"))));
        let status = encode_place_status(9000, 2);
        let Ok(ServerMsg::PlaceStatus(s)) = decode(&status) else { panic!() };
        assert_eq!((s.players(), s.shards()), (9000, 2));
    }

    #[test]
    fn presence_and_roster_round_trip() {
        let bytes = encode_presence(ShardId(1), 9, [(PlayerId(2), "b")].into_iter(), [PlayerId(5)].into_iter());
        let Ok(ServerMsg::Presence(p)) = decode(&bytes) else { panic!() };
        assert_eq!(p.joined().map(|j| j.get(0).id()), Some(2));
        assert_eq!(p.left().map(|l| l.get(0)), Some(5));
        assert_eq!(p.joined().map(|j| j.get(0).shard_id()), Some(None), "a Presence names its shard once");
        let bytes = encode_roster([(PlayerId(1), "a", ShardId(7)), (PlayerId(2), "b", ShardId(9))].into_iter());
        let Ok(ServerMsg::Roster(r)) = decode(&bytes) else { panic!() };
        let players: Vec<_> = r.players().expect("players").iter().map(|p| (p.id(), p.shard_id())).collect();
        assert_eq!(players, [(1, Some(7)), (2, Some(9))]);
    }

    #[test]
    fn error_and_busy_carry_their_fields() {
        let err = encode_error(CloseCode::TooSlow, "slow");
        let Ok(ServerMsg::Error(e)) = decode(&err) else { panic!() };
        assert_eq!(e.code(), CloseCode::TooSlow);
        let busy = encode_busy("full", 1500);
        let Ok(ServerMsg::Busy(b)) = decode(&busy) else { panic!() };
        assert_eq!((b.reason(), b.retry_after_ms()), (Some("full"), 1500));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(decode(&[1, 2, 3]).is_err());
        assert!(decode(&[0xff; 64]).is_err());
    }
}
