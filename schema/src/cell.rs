//! Area-of-interest frames: one per occupied cell of a shard a tick, encoded
//! once and shared by every socket that sees the cell and by the other shards.
//!
//! A cell frame is a `ServerMessage` with `cell` (a 16-byte [`wire::CellHeader`])
//! and `players` set and no body: 40 bytes of FlatBuffers plus 10 a player
//! (padded to a multiple of 4),
//! the least FlatBuffers allows for a self-contained message (root offset,
//! an 8-byte vtable, the table, the vector's length). Everything the Welcome
//! already gave (bounds, tick rate, the grid) stays out of it.
//!
//! Between shards, a shard's frames of one region for one tick travel in one
//! [`wire::CellBundle`]: the frames' bytes back to back with their lengths, so
//! a relaying shard forwards each frame unchanged (a slice of the bundle).

use crate::entry::PlayerEntry;
use crate::ids::{PlayerId, ShardId, Tick};
use crate::root::finish;
use crate::wire;
use bytes::Bytes;
use flatbuffers::FlatBufferBuilder;

/// Whose, where and when a cell frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellKey {
    /// The shard whose players these are.
    pub shard: ShardId,
    /// The cell (1 + row * columns + column).
    pub cell: u32,
    /// The shard's tick.
    pub tick: Tick,
    /// Wall clock of the tick, ms since the Unix epoch (the frame carries its
    /// low 32 bits).
    pub server_time_ms: u64,
}

/// Reusable cell-frame encoder: keeps its builder and staging vector between
/// frames, so a frame allocates only its output [`Bytes`].
#[derive(Default)]
pub struct CellEncoder {
    fbb: FlatBufferBuilder<'static>,
    staged: Vec<wire::PlayerState>,
}

impl CellEncoder {
    /// A new encoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Encodes the frame of one cell: `players` quantized over `bounds` (the
    /// world's, as the Welcome gave them). The bytes are the encoder's,
    /// valid until its next call: copy them once, where they are to live
    /// (the server frames them for the websocket in the same copy).
    pub fn encode(
        &mut self,
        key: &CellKey,
        bounds: &wire::Bounds,
        players: impl IntoIterator<Item = PlayerEntry>,
    ) -> &[u8] {
        self.staged.clear();
        self.staged.extend(players.into_iter().map(|p| p.to_wire(bounds)));
        self.fbb.reset();
        let players = self.fbb.create_vector(&self.staged);
        let header = wire::CellHeader::new(key.shard.0, key.cell, key.tick.0 as u32, key.server_time_ms as u32);
        let root = wire::ServerMessage::create(
            &mut self.fbb,
            &wire::ServerMessageArgs {
                cell: Some(&header),
                players: Some(players),
                body_type: wire::ServerBody::NONE,
                body: None,
            },
        );
        self.fbb.finish(root, None);
        self.fbb.finished_data()
    }
}

/// A verified cell frame.
#[derive(Clone, Copy, Debug)]
pub struct CellView<'a> {
    key: &'a wire::CellHeader,
    players: flatbuffers::Vector<'a, wire::PlayerState>,
}

impl<'a> CellView<'a> {
    /// The cell frame a verified message is, if it is one.
    pub(crate) fn of(msg: &wire::ServerMessage<'a>) -> Option<CellView<'a>> {
        Some(CellView { key: msg.cell()?, players: msg.players()? })
    }

    /// Shard, cell, tick and time (low 32 bits of the ms).
    pub fn key(&self) -> &'a wire::CellHeader {
        self.key
    }

    /// The cell's players of that shard, all of them.
    pub fn players(&self) -> flatbuffers::Vector<'a, wire::PlayerState> {
        self.players
    }
}

/// Encodes the bundle of one shard's cell frames (`frames`, each a complete
/// message) of one region and tick, for the other shards.
pub fn encode_bundle(shard: ShardId, region: u32, tick: Tick, server_time_ms: u64, frames: &[Bytes]) -> Bytes {
    let total: usize = frames.iter().map(Bytes::len).sum();
    let mut fbb = FlatBufferBuilder::with_capacity(total + 4 * frames.len() + 96);
    let lengths: Vec<u32> = frames.iter().map(|f| f.len() as u32).collect();
    let lengths = fbb.create_vector(&lengths);
    let mut joined = Vec::with_capacity(total);
    for f in frames {
        joined.extend_from_slice(f);
    }
    let joined = fbb.create_vector(&joined);
    let body = wire::CellBundle::create(
        &mut fbb,
        &wire::CellBundleArgs {
            shard_id: shard.0,
            region,
            tick: tick.0,
            server_time_ms,
            lengths: Some(lengths),
            frames: Some(joined),
        },
    );
    finish(&mut fbb, wire::ServerBody::CellBundle, body.as_union_value())
}

/// A verified bundle whose lengths add up to its bytes.
#[derive(Clone, Copy, Debug)]
pub struct Bundle<'a> {
    bundle: wire::CellBundle<'a>,
    lengths: flatbuffers::Vector<'a, u32>,
    frames: &'a [u8],
}

impl<'a> Bundle<'a> {
    /// The bundle a verified body is, if its lengths add up.
    pub(crate) fn of(bundle: wire::CellBundle<'a>) -> Option<Bundle<'a>> {
        let lengths = bundle.lengths()?;
        let frames = bundle.frames()?.bytes();
        let total = lengths.iter().try_fold(0usize, |sum, n| sum.checked_add(n as usize))?;
        (total == frames.len()).then_some(Bundle { bundle, lengths, frames })
    }

    /// The publishing shard.
    pub fn shard(&self) -> ShardId {
        ShardId(self.bundle.shard_id())
    }

    /// The region.
    pub fn region(&self) -> u32 {
        self.bundle.region()
    }

    /// The publisher's tick.
    pub fn tick(&self) -> Tick {
        Tick(self.bundle.tick())
    }

    /// The publisher's wall clock at its tick, ms since the Unix epoch.
    pub fn server_time_ms(&self) -> u64 {
        self.bundle.server_time_ms()
    }

    /// Byte ranges of the frames within [`Bundle::bytes`], in order. Each
    /// frame still has to be verified before it is read.
    pub fn ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + 'a {
        self.lengths.iter().scan(0usize, |at, n| {
            let start = *at;
            *at += n as usize;
            Some(start..*at)
        })
    }

    /// The frames' bytes, back to back.
    pub fn bytes(&self) -> &'a [u8] {
        self.frames
    }
}

/// The id of a cell entry, like a snapshot entry's.
pub fn entry_id(p: &wire::PlayerState) -> PlayerId {
    crate::entry::player_id(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{decode, ServerMsg};

    const KEY: CellKey = CellKey { shard: ShardId(7), cell: 12, tick: Tick(40), server_time_ms: 0x1_2345_6789 };

    fn bounds() -> wire::Bounds {
        wire::Bounds::new(0.0, 0.0, 1000.0, 1000.0)
    }

    fn entry(id: u32) -> PlayerEntry {
        PlayerEntry { id: PlayerId(id), x: 110.0, y: 120.0, heading: 3, moving: true, input_seq: 5 }
    }

    #[test]
    fn a_cell_frame_is_forty_bytes_and_ten_a_player() {
        let mut enc = CellEncoder::new();
        let empty = enc.encode(&KEY, &bounds(), []).len();
        assert_eq!(empty, 40, "the header");
        let three = enc.encode(&KEY, &bounds(), [entry(1), entry(2), entry(70_000)]);
        assert!(three.len() <= 40 + 30 + 3, "ten bytes a player, padded to 4: {}", three.len());
        let Ok(ServerMsg::Cell(c)) = decode(three) else { panic!("a cell frame") };
        let k = c.key();
        assert_eq!((k.shard_id(), k.cell(), k.tick(), k.time_ms()), (7, 12, 40, 0x2345_6789));
        let ids: Vec<u32> = c.players().iter().map(|p| entry_id(p).0).collect();
        assert_eq!(ids, [1, 2, 70_000]);
        assert_eq!(crate::entry::input_seq(c.players().get(0).flags()), 5);
    }

    #[test]
    fn a_bundle_carries_frames_unchanged() {
        let mut enc = CellEncoder::new();
        let a = Bytes::copy_from_slice(enc.encode(&KEY, &bounds(), [entry(1)]));
        let b = Bytes::copy_from_slice(enc.encode(&CellKey { cell: 13, ..KEY }, &bounds(), [entry(2), entry(3)]));
        let bundle = encode_bundle(ShardId(7), 4, Tick(40), 99, &[a.clone(), b.clone()]);
        let Ok(ServerMsg::CellBundle(got)) = decode(&bundle) else { panic!("a bundle") };
        assert_eq!((got.shard(), got.region(), got.tick(), got.server_time_ms()), (ShardId(7), 4, Tick(40), 99));
        let frames: Vec<&[u8]> = got.ranges().map(|r| &got.bytes()[r]).collect();
        assert_eq!(frames, [&a[..], &b[..]]);
    }

    #[test]
    fn a_bundle_whose_lengths_do_not_add_up_is_refused() {
        let mut fbb = FlatBufferBuilder::new();
        let lengths = fbb.create_vector(&[5u32, 9]);
        let frames = fbb.create_vector(&[0u8; 10]);
        let body = wire::CellBundle::create(
            &mut fbb,
            &wire::CellBundleArgs { lengths: Some(lengths), frames: Some(frames), ..Default::default() },
        );
        let bytes = finish(&mut fbb, wire::ServerBody::CellBundle, body.as_union_value());
        assert!(decode(&bytes).is_err());
    }
}
