//! The per-tick snapshot: encoded **once** per tick into one buffer whose bytes
//! every socket (and, clustered, every other shard) receives unchanged.
//!
//! Wire size: 10 bytes a player ([`wire::PlayerState`]) plus about 80 bytes of
//! header, so 1,000 players make a 10.1 KB frame.

pub use crate::entry::{input_seq, Entry, PlayerEntry, FLAG_MOVING, INPUT_SEQ_SHIFT};
use crate::ids::{ShardId, Tick};
use crate::root::finish;
use crate::wire;
use bytes::Bytes;
use flatbuffers::FlatBufferBuilder;

/// The header fields of one snapshot.
#[derive(Clone, Copy, Debug)]
pub struct SnapshotHeader {
    /// The shard whose players these are.
    pub shard_id: ShardId,
    /// The shard's tick number.
    pub tick: Tick,
    /// Wall clock of the tick, ms since the Unix epoch.
    pub server_time_ms: u64,
    /// Tick rate, Hz.
    pub tick_hz: u16,
    /// World bounds used to quantize positions.
    pub bounds: wire::Bounds,
    /// Area-of-interest cell (0 = whole shard).
    pub cell: u32,
}

/// Reusable snapshot encoder: keeps its FlatBuffers builder and staging vector
/// between ticks so a tick allocates only the output [`Bytes`].
#[derive(Default)]
pub struct SnapshotEncoder {
    fbb: FlatBufferBuilder<'static>,
    staged: Vec<wire::PlayerState>,
}

impl SnapshotEncoder {
    /// A new encoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Encodes a complete ServerMessage{Snapshot} of `players` (world
    /// units, quantized over the header's bounds).
    pub fn encode(&mut self, header: &SnapshotHeader, players: impl IntoIterator<Item = PlayerEntry>) -> Bytes {
        let bounds = header.bounds;
        self.encode_entries(header, players.into_iter().map(|p| p.quantized(&bounds)))
    }

    /// Encodes a complete ServerMessage{Snapshot} of `players`, already on
    /// the wire's grid.
    pub fn encode_entries(&mut self, header: &SnapshotHeader, players: impl IntoIterator<Item = Entry>) -> Bytes {
        self.staged.clear();
        self.staged.extend(players.into_iter().map(|p| p.to_wire()));
        self.fbb.reset();
        let players = self.fbb.create_vector(&self.staged);
        let body = wire::Snapshot::create(
            &mut self.fbb,
            &wire::SnapshotArgs {
                shard_id: header.shard_id.0,
                tick: header.tick.0,
                server_time_ms: header.server_time_ms,
                tick_hz: header.tick_hz,
                bounds: Some(&header.bounds),
                cell: header.cell,
                players: Some(players),
            },
        );
        finish(&mut self.fbb, wire::ServerBody::Snapshot, body.as_union_value())
    }
}

/// Shard and tick of a snapshot frame, read after verification and without
/// copying: what a relay needs to route the frame. `None` if `buf` is not a
/// valid snapshot.
pub fn peek_header(buf: &[u8]) -> Option<(ShardId, Tick)> {
    match crate::server::decode(buf) {
        Ok(crate::server::ServerMsg::Snapshot(s)) => Some((ShardId(s.shard_id()), Tick(s.tick()))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PlayerId;
    use crate::quantize;
    use crate::server::{decode, player_id, ServerMsg};

    fn header() -> SnapshotHeader {
        SnapshotHeader {
            shard_id: ShardId(77),
            tick: Tick(5),
            server_time_ms: 1_700_000_000_000,
            tick_hz: 20,
            bounds: wire::Bounds::new(0.0, 0.0, 1000.0, 1000.0),
            cell: 0,
        }
    }

    #[test]
    fn snapshot_round_trips_positions_within_a_step() {
        let mut enc = SnapshotEncoder::new();
        let players = [
            PlayerEntry { id: PlayerId(70_000), x: 12.5, y: 999.0, heading: 64, moving: true, input_seq: 0 },
            PlayerEntry { id: PlayerId(1), x: 0.0, y: 0.0, heading: 0, moving: false, input_seq: 0 },
        ];
        let bytes = enc.encode(&header(), players);
        let Ok(ServerMsg::Snapshot(s)) = decode(&bytes) else { panic!("not a snapshot") };
        assert_eq!((s.shard_id(), s.tick(), s.tick_hz()), (77, 5, 20));
        let got = s.players().expect("players");
        assert_eq!(got.len(), 2);
        let p = got.get(0);
        assert_eq!(player_id(p), PlayerId(70_000));
        let (x, y) = quantize::world_position(&header().bounds, p.x(), p.y());
        assert!((x - 12.5).abs() < 0.02 && (y - 999.0).abs() < 0.02);
        assert_eq!((p.heading(), p.flags()), (64, FLAG_MOVING));
        assert_eq!(peek_header(&bytes), Some((ShardId(77), Tick(5))));
    }

    #[test]
    fn entry_is_ten_bytes_and_frame_grows_by_ten_per_player() {
        assert_eq!(std::mem::size_of::<wire::PlayerState>(), 10);
        let mut enc = SnapshotEncoder::new();
        let mk = |n: u32| {
            (0..n).map(|i| PlayerEntry { id: PlayerId(i + 1), x: 1.0, y: 1.0, heading: 0, moving: false, input_seq: 0 })
        };
        let a = enc.encode(&header(), mk(100)).len();
        let b = enc.encode(&header(), mk(1100)).len();
        assert_eq!(b - a, 10_000);
    }

    #[test]
    fn encoder_is_reusable_and_independent_between_ticks() {
        let mut enc = SnapshotEncoder::new();
        let one = enc.encode(
            &header(),
            [PlayerEntry { id: PlayerId(1), x: 1.0, y: 2.0, heading: 3, moving: true, input_seq: 0 }],
        );
        let _ = enc.encode(&header(), []);
        let Ok(ServerMsg::Snapshot(s)) = decode(&one) else { panic!() };
        assert_eq!(s.players().map(|p| p.len()), Some(1));
    }
}
