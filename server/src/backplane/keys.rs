//! Redis key and channel names of one place. Everything of a place lives under
//! `mino:{place}:` so several places can share one Redis; with Redis Cluster
//! the `{place}` hash tag keeps the place's keys (sessions, tickets, the
//! registry) and its event channels (chat, presence, control) in one slot, so
//! every transaction and script stays within one slot. The frame channels,
//! which carry nearly all the traffic, have hash tags of their own in a
//! cluster (each shard's cells of each region), so a busy place spreads over
//! the cluster's primaries.

use mino_protocol::ShardId;

/// Names for one place.
#[derive(Clone, Debug)]
pub struct Keys {
    prefix: String,
    place: String,
    spread: bool,
}

impl Keys {
    /// Names for `place` (already validated: `[A-Za-z0-9_-]{1,64}`) on one
    /// Redis (or Sentinel): one cells channel a region for every shard.
    pub fn new(place: &str) -> Keys {
        Keys { prefix: format!("mino:{{{place}}}:"), place: place.to_owned(), spread: false }
    }

    /// Names for `place` on a Redis Cluster: each shard's cells of a region on
    /// a channel with a hash tag of its own ([`Keys::cells`]).
    pub fn spread(place: &str) -> Keys {
        Keys { spread: true, ..Keys::new(place) }
    }

    /// Pub/sub channel of `publisher`'s region bundles of one region,
    /// `mino:{<place>.r<region>}:cells` on one Redis (every shard's bundles
    /// of the region on one channel), `mino:{<place>.r<region>.s<shard, 8
    /// hex digits>}:cells` on a cluster: a hash tag per region and shard, so
    /// a busy place spreads over the nodes (a place without area of interest
    /// is one region: a channel per shard). A channel per region, not per
    /// cell: subscriptions change with players crossing regions, not cells.
    pub fn cells(&self, region: u32, publisher: ShardId) -> String {
        match self.spread {
            false => format!("mino:{{{}.r{region}}}:cells", self.place),
            true => format!("mino:{{{}.r{region}.s{publisher}}}:cells", self.place),
        }
    }

    /// The region channels to hear `regions` of the shards `peers` on (on
    /// one Redis, one a region whoever the peers are).
    pub fn cell_channels(&self, regions: &[u32], peers: &[ShardId]) -> Vec<String> {
        match self.spread {
            false => regions.iter().map(|&r| self.cells(r, ShardId(0))).collect(),
            true => regions.iter().flat_map(|&r| peers.iter().map(move |&p| self.cells(r, p))).collect(),
        }
    }

    /// True on a Redis Cluster: region channels are per shard, and a
    /// subscriber follows the live shards.
    pub fn spreads(&self) -> bool {
        self.spread
    }

    /// The prefix of every region channel of the place.
    pub fn cells_prefix(&self) -> String {
        format!("mino:{{{}.r", self.place)
    }

    /// Pub/sub channel of chat frames.
    pub fn chat(&self) -> String {
        format!("{}chat", self.prefix)
    }

    /// Pub/sub channel of presence frames.
    pub fn presence_channel(&self) -> String {
        format!("{}presence", self.prefix)
    }

    /// A shard's heartbeat: a JSON `Heartbeat` (the registry's), with a TTL.
    pub fn shard(&self, id: ShardId) -> String {
        format!("{}shard:{id}", self.prefix)
    }

    /// A shard's players: hash of player id to name, with a TTL.
    pub fn players(&self, id: ShardId) -> String {
        format!("{}players:{id}", self.prefix)
    }

    /// Sorted set of shard ids scored by heartbeat expiry (ms since the epoch).
    pub fn shards(&self) -> String {
        format!("{}shards", self.prefix)
    }

    /// Counter that hands out cluster-unique player ids in blocks.
    pub fn next_player(&self) -> String {
        format!("{}next_player", self.prefix)
    }

    /// A resume ticket: the player id it names, or `used:<id>` once claimed.
    pub fn ticket(&self, hex: &str) -> String {
        format!("{}ticket:{hex}", self.prefix)
    }

    /// A player's session: hash with owner (shard id, 8 hex digits), gen,
    /// name and its current ticket.
    pub fn session(&self, player: mino_protocol::PlayerId) -> String {
        format!("{}session:{}", self.prefix, player.0)
    }

    /// An account's session: the player id it plays as (identity), with the
    /// session's TTL. The account id is the token's `sub`, percent-free
    /// printable; it is hex-encoded into the key.
    pub fn account(&self, account: &str) -> String {
        let hex: String = account.bytes().map(|b| format!("{b:02x}")).collect();
        format!("{}account:{hex}", self.prefix)
    }

    /// A shard's last snapshot (bytes as published), for resumed positions.
    pub fn last_snapshot(&self, id: ShardId) -> String {
        format!("{}lastsnap:{id}", self.prefix)
    }

    /// Pub/sub channel of session takeovers (`takeover <player> <gen> <new owner>`).
    pub fn control(&self) -> String {
        format!("{}control", self.prefix)
    }

    /// Every key and channel of the place starts with this.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_share_the_place_prefix_and_hash_tag() {
        let k = Keys::new("main");
        for name in
            [k.chat(), k.presence_channel(), k.shard(ShardId(1)), k.players(ShardId(1)), k.shards(), k.next_player()]
        {
            assert!(name.starts_with("mino:{main}:"), "{name}");
        }
        assert_eq!(k.shard(ShardId(0xab)), "mino:{main}:shard:000000ab");
        assert_eq!(k.cells(12, ShardId(2)), "mino:{main.r12}:cells", "a region has a hash tag of its own");
        assert!(k.cells(12, ShardId(2)).starts_with(&k.cells_prefix()));
        assert_eq!(
            k.cell_channels(&[1, 12], &[ShardId(1), ShardId(2)]),
            ["mino:{main.r1}:cells", "mino:{main.r12}:cells"]
        );
    }

    #[test]
    fn on_a_cluster_each_shard_publishes_under_its_own_hash_tag() {
        let k = Keys::spread("main");
        assert_eq!(k.cells(3, ShardId(0xab)), "mino:{main.r3.s000000ab}:cells");
        assert!(k.cells(3, ShardId(0xab)).starts_with(&k.cells_prefix()));
        assert_eq!(
            k.cell_channels(&[1], &[ShardId(1), ShardId(2)]),
            ["mino:{main.r1.s00000001}:cells", "mino:{main.r1.s00000002}:cells"]
        );
        assert_eq!(k.session(mino_protocol::PlayerId(3)), "mino:{main}:session:3", "sessions keep the place tag");
        assert_eq!(k.control(), "mino:{main}:control", "the claim script publishes here: same slot");
    }
}
