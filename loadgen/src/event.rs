//! Verified server messages as plain Rust values, for tests and tools that
//! want them instead of FlatBuffers views. The measuring bots read the
//! views directly; of these they build only [`CellFrame`]s, over the entries
//! they hold.

use mino_protocol::entry::Entry;
use mino_protocol::server::{self, ServerDecodeError, ServerMsg};
use mino_protocol::snapshot::{self, FLAG_MOVING};
use mino_protocol::wire::{self, Bounds};
use mino_protocol::{quantize, PlayerId, ShardId, Tick};
use std::borrow::Cow;

/// What a Welcome says.
#[derive(Clone, Debug, PartialEq)]
pub struct Welcomed {
    /// The player's id.
    pub player_id: PlayerId,
    /// The shard that simulates the player.
    pub shard_id: ShardId,
    /// Snapshot rate, Hz.
    pub tick_hz: u16,
    /// World bounds, world units.
    pub bounds: Bounds,
    /// Walking speed, world units per second.
    pub speed: f32,
    /// Resume ticket (secret).
    pub ticket: Vec<u8>,
    /// Server wall clock, ms since the Unix epoch.
    pub server_time_ms: u64,
    /// The name the server accepted.
    pub name: String,
    /// Position, world units.
    pub position: (f32, f32),
    /// True when this resumed an earlier session.
    pub resumed: bool,
    /// Area of interest: cell side, world units (0: whole-shard snapshots).
    pub cell_size: f32,
    /// Area of interest: columns of the grid.
    pub grid_columns: u32,
    /// Area of interest: view radius, world units.
    pub view_radius: f32,
    /// Area of interest: how long an unseen player stays drawn, ms.
    pub view_grace_ms: u32,
    /// A held cell sent nothing for this long is dropped, ms (0: never).
    pub cell_expiry_ms: u32,
    /// The Hello's capabilities the server granted.
    pub capabilities: mino_protocol::client::Capabilities,
}

impl Welcomed {
    /// Copies a verified Welcome view.
    pub fn of(w: &wire::Welcome<'_>) -> Welcomed {
        Welcomed {
            player_id: PlayerId(w.player_id()),
            shard_id: ShardId(w.shard_id()),
            tick_hz: w.tick_hz(),
            bounds: w.bounds().copied().unwrap_or_default(),
            speed: w.speed(),
            ticket: w.resume_ticket().map(|t| t.bytes().to_vec()).unwrap_or_default(),
            server_time_ms: w.server_time_ms(),
            name: w.name().unwrap_or_default().to_owned(),
            position: (w.x(), w.y()),
            resumed: w.resumed(),
            cell_size: w.cell_size(),
            grid_columns: w.grid_columns(),
            view_radius: w.view_radius(),
            view_grace_ms: w.view_grace_ms(),
            cell_expiry_ms: w.cell_expiry_ms(),
            capabilities: mino_protocol::client::Capabilities(w.capabilities()),
        }
    }
}

/// One player of a snapshot, dequantized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayerPos {
    /// The player.
    pub id: PlayerId,
    /// Position, world units.
    pub x: f32,
    /// Position, world units.
    pub y: f32,
    /// Facing, 0..=255 for a full turn.
    pub heading: u8,
    /// Walking this tick.
    pub moving: bool,
    /// The low 7 bits of the last input applied.
    pub input_seq: u8,
}

impl PlayerPos {
    /// One held entry, dequantized over `bounds`.
    pub fn of_entry(e: &Entry, bounds: &Bounds) -> PlayerPos {
        let (x, y) = quantize::world_position(bounds, e.x, e.y);
        PlayerPos { id: e.id, x, y, heading: e.heading, moving: e.moving(), input_seq: e.input_seq() }
    }

    /// One entry, dequantized over `bounds`.
    pub fn of(p: &wire::PlayerState, bounds: &Bounds) -> PlayerPos {
        let (x, y) = quantize::world_position(bounds, p.x(), p.y());
        PlayerPos {
            id: server::player_id(p),
            x,
            y,
            heading: p.heading(),
            moving: p.flags() & FLAG_MOVING != 0,
            input_seq: snapshot::input_seq(p.flags()),
        }
    }
}

/// One cell as a client holds it after a view frame's item (a full form or
/// a delta applied, see [`mino_protocol::held`]), positions still quantized:
/// the Welcome's bounds turn them into world units ([`CellFrame::players`]).
/// Complete for its (shard, cell): a player of that shard missing from it
/// has left the cell. A bot borrows the entries where it holds them
/// ([`crate::reader::ViewReader::next_cell`]: no copy, though a crowd's cell
/// is a thousand entries updated every tick); the test kit keeps its own
/// copy.
#[derive(Clone, Debug, PartialEq)]
pub struct CellFrame<'a> {
    /// The shard whose players these are.
    pub shard_id: ShardId,
    /// The cell.
    pub cell: u32,
    /// That shard's tick (32 bits).
    pub tick: u32,
    /// Server wall clock of the tick, the low 32 bits of the ms.
    pub time_ms: u32,
    /// Every entry, sorted by id.
    pub entries: Cow<'a, [Entry]>,
}

impl<'a> CellFrame<'a> {
    /// The cell of `shard` and `cell` as held after a section of `tick`
    /// (low 32 bits) whose time is `time_ms` (ms since the epoch), reading
    /// `entries` where they are.
    pub fn held(shard: u32, cell: u32, tick: u32, time_ms: u64, entries: &'a [Entry]) -> CellFrame<'a> {
        CellFrame { shard_id: ShardId(shard), cell, tick, time_ms: time_ms as u32, entries: Cow::Borrowed(entries) }
    }

    /// Player `id`'s entry, if the cell lists it: at index `hint` (where it
    /// was last time, most often), else by binary search (a cell's players
    /// are sorted by id, as held); `hint` is moved to where it was found.
    /// O(log n) even when it is not there, which is most cells a bot is told
    /// of (a crowd's cell of 2,000 was scanned whole before).
    pub fn find(&self, id: PlayerId, hint: &mut usize) -> Option<&Entry> {
        let players = &self.entries[..];
        let i = match players.get(*hint) {
            Some(p) if p.id == id => *hint,
            _ => players.binary_search_by_key(&id, |p| p.id).ok()?,
        };
        *hint = i;
        players.get(i)
    }

    /// The same cell with a copy of its entries (kept past the held state).
    pub fn into_owned(self) -> CellFrame<'static> {
        CellFrame { entries: Cow::Owned(self.entries.into_owned()), ..self }
    }

    /// The players, dequantized over the world's `bounds`.
    pub fn players(&self, bounds: &Bounds) -> Vec<PlayerPos> {
        self.entries.iter().map(|e| PlayerPos::of_entry(e, bounds)).collect()
    }
}

/// A verified view frame's bytes (`ServerMessage.view`), owned.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewBytes(pub Vec<u8>);

impl ViewBytes {
    /// The frame, read again (the bytes were verified when decoded).
    ///
    /// Errors: [`ViewError`](mino_protocol::view::ViewError) only for bytes
    /// not made by [`ServerEvent::decode`].
    pub fn frame(&self) -> Result<mino_protocol::view::ViewFrame<'_>, mino_protocol::view::ViewError> {
        mino_protocol::view::ViewFrame::parse(&self.0)
    }
}

/// A snapshot with every player dequantized.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotFrame {
    /// The shard whose players these are.
    pub shard_id: ShardId,
    /// That shard's tick.
    pub tick: Tick,
    /// Server wall clock of the tick, ms since the Unix epoch.
    pub server_time_ms: u64,
    /// Tick rate, Hz.
    pub tick_hz: u16,
    /// Area-of-interest cell (0 = whole shard).
    pub cell: u32,
    /// Bounds the positions were quantized over.
    pub bounds: Bounds,
    /// Every player.
    pub players: Vec<PlayerPos>,
}

impl SnapshotFrame {
    /// Copies a verified Snapshot view.
    pub fn of(s: &wire::Snapshot<'_>) -> SnapshotFrame {
        let bounds = s.bounds().copied().unwrap_or_default();
        let players = s.players().map(|v| v.iter().map(|p| PlayerPos::of(p, &bounds)).collect()).unwrap_or_default();
        SnapshotFrame {
            shard_id: ShardId(s.shard_id()),
            tick: Tick(s.tick()),
            server_time_ms: s.server_time_ms(),
            tick_hz: s.tick_hz(),
            cell: s.cell(),
            bounds,
            players,
        }
    }

    /// The entry of `id`, if present.
    pub fn player(&self, id: PlayerId) -> Option<&PlayerPos> {
        self.players.iter().find(|p| p.id == id)
    }
}

fn infos(
    v: Option<flatbuffers::Vector<'_, flatbuffers::ForwardsUOffset<wire::PlayerInfo<'_>>>>,
) -> Vec<(PlayerId, String)> {
    v.map(|v| v.iter().map(|p| (PlayerId(p.id()), p.name().unwrap_or_default().to_owned())).collect())
        .unwrap_or_default()
}

/// One server message as an owned value.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerEvent {
    /// Admitted.
    Welcome(Welcomed),
    /// One shard's players, one tick.
    Snapshot(SnapshotFrame),
    /// A chat line.
    Chat {
        /// Sender.
        from: PlayerId,
        /// Sender's name.
        name: String,
        /// The line.
        text: String,
        /// Sender's shard.
        shard_id: ShardId,
    },
    /// Players that joined and left on one shard.
    Presence {
        /// The shard.
        shard_id: ShardId,
        /// Joined players with names.
        joined: Vec<(PlayerId, String)>,
        /// Players that left.
        left: Vec<PlayerId>,
    },
    /// Every present player.
    Roster(Vec<(PlayerId, String)>),
    /// Refused for now.
    Busy {
        /// Why.
        reason: String,
        /// Retry after, ms.
        retry_after_ms: u32,
    },
    /// About to close with `code`.
    Error {
        /// The close code (see `CloseCode` in mino.fbs).
        code: u16,
        /// Why.
        message: String,
    },
    /// Answer to a Ping.
    Pong {
        /// The Ping's client time, ms.
        client_time_ms: f64,
        /// Server wall clock, ms since the Unix epoch.
        server_time_ms: u64,
    },
    /// Drain: reconnect and resume with this ticket.
    Move {
        /// Fresh resume ticket.
        ticket: Vec<u8>,
        /// Why.
        reason: String,
    },
    /// A view frame: sections of shards' cells, items to apply to what the
    /// client holds ([`mino_protocol::held::Held`]).
    View(ViewBytes),
    /// Names a NamesRequest asked for.
    Names(Vec<(PlayerId, String)>),
    /// Players and shards in the place (area of interest; when it changed, at most once a second).
    PlaceStatus {
        /// Players in the place.
        players: u32,
        /// Live shards.
        shards: u32,
    },
}

impl ServerEvent {
    /// Verifies and copies one server message.
    ///
    /// Errors: [`ServerDecodeError`] when the bytes fail verification.
    pub fn decode(buf: &[u8]) -> Result<ServerEvent, ServerDecodeError> {
        Ok(match server::decode(buf)? {
            ServerMsg::Welcome(w) => ServerEvent::Welcome(Welcomed::of(&w)),
            ServerMsg::Snapshot(s) => ServerEvent::Snapshot(SnapshotFrame::of(&s)),
            ServerMsg::Chat(c) => ServerEvent::Chat {
                from: PlayerId(c.from_id()),
                name: c.name().unwrap_or_default().to_owned(),
                text: c.text().unwrap_or_default().to_owned(),
                shard_id: ShardId(c.shard_id()),
            },
            ServerMsg::Presence(p) => ServerEvent::Presence {
                shard_id: ShardId(p.shard_id()),
                joined: infos(p.joined()),
                left: p.left().map(|l| l.iter().map(PlayerId).collect()).unwrap_or_default(),
            },
            ServerMsg::Roster(r) => ServerEvent::Roster(infos(r.players())),
            ServerMsg::Busy(b) => ServerEvent::Busy {
                reason: b.reason().unwrap_or_default().to_owned(),
                retry_after_ms: b.retry_after_ms(),
            },
            ServerMsg::Error(e) => {
                ServerEvent::Error { code: e.code().0, message: e.message().unwrap_or_default().to_owned() }
            }
            ServerMsg::Pong(p) => {
                ServerEvent::Pong { client_time_ms: p.client_time_ms(), server_time_ms: p.server_time_ms() }
            }
            ServerMsg::Move(m) => ServerEvent::Move {
                ticket: m.resume_ticket().map(|t| t.bytes().to_vec()).unwrap_or_default(),
                reason: m.reason().unwrap_or_default().to_owned(),
            },
            ServerMsg::View(v) => ServerEvent::View(ViewBytes(v.bytes().to_vec())),
            ServerMsg::Names(n) => ServerEvent::Names(infos(n.players())),
            ServerMsg::PlaceStatus(s) => ServerEvent::PlaceStatus { players: s.players(), shards: s.shards() },
            ServerMsg::CellBundle(_) => {
                return Err(ServerDecodeError::Malformed("a bundle between shards sent to a client".into()))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::snapshot::{PlayerEntry, SnapshotEncoder, SnapshotHeader};

    #[test]
    fn snapshot_is_dequantized_in_world_units() {
        let bounds = Bounds::new(0.0, 0.0, 1000.0, 1000.0);
        let header =
            SnapshotHeader { shard_id: ShardId(4), tick: Tick(9), server_time_ms: 5, tick_hz: 20, bounds, cell: 0 };
        let entry = PlayerEntry { id: PlayerId(70_001), x: 250.0, y: 750.0, heading: 32, moving: true, input_seq: 0 };
        let bytes = SnapshotEncoder::new().encode(&header, [entry]);
        let Ok(ServerEvent::Snapshot(s)) = ServerEvent::decode(&bytes) else { panic!("snapshot") };
        assert_eq!((s.shard_id, s.tick, s.tick_hz), (ShardId(4), Tick(9), 20));
        let p = s.player(PlayerId(70_001)).expect("present");
        assert!((p.x - 250.0).abs() < 0.02 && (p.y - 750.0).abs() < 0.02 && p.moving);
        assert!(s.player(PlayerId(1)).is_none());
    }

    #[test]
    fn busy_move_and_garbage() {
        let busy = server::encode_busy("full", 700);
        assert_eq!(ServerEvent::decode(&busy), Ok(ServerEvent::Busy { reason: "full".into(), retry_after_ms: 700 }));
        let mv = server::encode_move(&[1, 2], "drain");
        assert_eq!(ServerEvent::decode(&mv), Ok(ServerEvent::Move { ticket: vec![1, 2], reason: "drain".into() }));
        assert!(ServerEvent::decode(&[0, 1, 2]).is_err());
    }
}
