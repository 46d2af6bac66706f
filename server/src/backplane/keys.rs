//! Redis key and channel names of one place. Everything of a place lives under
//! `mino:{place}:` so several places can share one Redis (and, with Redis
//! Cluster, the `{place}` hash tag keeps a place's keys in one slot).

use mino_protocol::ShardId;

/// Names for one place.
#[derive(Clone, Debug)]
pub struct Keys {
    prefix: String,
    place: String,
}

impl Keys {
    /// Names for `place` (already validated: `[A-Za-z0-9_-]{1,64}`).
    pub fn new(place: &str) -> Keys {
        Keys { prefix: format!("mino:{{{place}}}:"), place: place.to_owned() }
    }

    /// Pub/sub channel of every shard's snapshots (bytes as sent to sockets).
    pub fn snapshots(&self) -> String {
        format!("{}snapshots", self.prefix)
    }

    /// Pub/sub channel of the cell-frame bundles of one region (area of
    /// interest), `mino:{<place>.r<region>}:cells`: each region has its own
    /// hash tag, so with Redis Cluster the regions of a busy place spread over
    /// the nodes (a channel per region, not per cell: subscriptions change
    /// with players crossing regions, not cells).
    pub fn cells(&self, region: u32) -> String {
        format!("mino:{{{}.r{region}}}:cells", self.place)
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

    /// A shard's heartbeat: a JSON [`super::registry::Heartbeat`], with a TTL.
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
        for name in [
            k.snapshots(),
            k.chat(),
            k.presence_channel(),
            k.shard(ShardId(1)),
            k.players(ShardId(1)),
            k.shards(),
            k.next_player(),
        ] {
            assert!(name.starts_with("mino:{main}:"), "{name}");
        }
        assert_eq!(k.shard(ShardId(0xab)), "mino:{main}:shard:000000ab");
        assert_eq!(k.cells(12), "mino:{main.r12}:cells", "a region has a hash tag of its own");
        assert!(k.cells(12).starts_with(&k.cells_prefix()));
    }
}
