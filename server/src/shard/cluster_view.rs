//! What this shard knows of the other shards of its place: which are alive,
//! and their players (for the roster and for "left" when a shard dies; their
//! cells are streams of the area, see `aoi.rs`). I/O-free: fed by the
//! cluster tasks through the tick loop, read by the shard core once a tick.

use bytes::Bytes;
use mino_protocol::server as msg;
use mino_protocol::{PlayerId, ShardId};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Another shard as seen from here.
#[derive(Debug, Default)]
struct Remote {
    players: HashMap<PlayerId, Arc<str>>,
    /// The shard's presence sequence number `players` is current to.
    seq: u64,
    /// The shard's presence epoch (0: no roster read yet).
    epoch: u64,
}

/// The other live shards of the place.
#[derive(Debug, Default)]
pub struct ClusterView {
    live: HashMap<ShardId, Remote>,
}

impl ClusterView {
    /// Shards currently considered alive.
    pub fn live_shards(&self) -> usize {
        self.live.len()
    }

    /// Is `shard` alive as far as this view knows?
    pub fn is_live(&self, shard: ShardId) -> bool {
        self.live.contains_key(&shard)
    }

    /// Players on other live shards, each with the shard that lists it (a
    /// player that moved may be listed by its old shard too until that shard's
    /// "left" or death is known here).
    pub fn players(&self) -> impl Iterator<Item = (PlayerId, &str, ShardId)> {
        self.live.iter().flat_map(|(s, r)| r.players.iter().map(move |(id, n)| (*id, &**n, *s)))
    }

    /// The name of a player of another live shard.
    pub fn name(&self, player: PlayerId) -> Option<&str> {
        self.live.values().find_map(|r| r.players.get(&player)).map(|n| &**n)
    }

    /// Every other live shard with the number of its players known here.
    pub fn shards(&self) -> Vec<(ShardId, usize)> {
        self.live.iter().map(|(s, r)| (*s, r.players.len())).collect()
    }

    /// Number of players on other live shards.
    pub fn player_count(&self) -> usize {
        self.live.values().map(|r| r.players.len()).sum()
    }

    /// Applies presence delta number `seq` of a live shard. Returns false (not
    /// applied, not to be forwarded) for a shard not known to be alive (its next
    /// full roster covers the delta) and for a delta the roster already has.
    pub fn presence(&mut self, shard: ShardId, seq: u64, joined: &[(PlayerId, Arc<str>)], left: &[PlayerId]) -> bool {
        let Some(r) = self.live.get_mut(&shard) else { return false };
        if seq <= r.seq {
            return false;
        }
        r.seq = seq;
        for (id, name) in joined {
            r.players.insert(*id, name.clone());
        }
        for id in left {
            r.players.remove(id);
        }
        true
    }

    /// Applies the registry's list of live shards (other than this one).
    /// Returns a Presence frame "left" for every player of each shard that died,
    /// to hand to sockets.
    pub fn set_live(&mut self, live: &[ShardId]) -> Vec<Bytes> {
        let keep: HashSet<ShardId> = live.iter().copied().collect();
        let dead: Vec<ShardId> = self.live.keys().filter(|s| !keep.contains(s)).copied().collect();
        let mut frames = Vec::new();
        for shard in dead {
            if let Some(r) = self.live.remove(&shard) {
                if !r.players.is_empty() {
                    frames.push(msg::encode_presence(shard, 0, std::iter::empty(), r.players.keys().copied()));
                }
            }
        }
        for shard in live {
            self.live.entry(*shard).or_default();
        }
        frames
    }

    /// Replaces a live shard's players with its full roster from the registry
    /// (a shard that appeared, came back or restarted, and every few seconds),
    /// current to presence number `seq` of presence epoch `epoch`. A roster
    /// older than the deltas already applied is ignored (the two come over
    /// different connections and may arrive out of order), unless its epoch
    /// is another one (a restarted shard numbers from its new start, whatever
    /// its clock said). Returns the Presence frame of the difference, if any,
    /// for sockets, and whether this repaired a shard known before (a
    /// presence message was lost).
    pub fn roster(
        &mut self,
        shard: ShardId,
        epoch: u64,
        seq: u64,
        players: Vec<(PlayerId, Arc<str>)>,
    ) -> (Option<Bytes>, bool) {
        let Some(r) = self.live.get_mut(&shard) else { return (None, false) };
        let known = r.epoch == epoch && r.epoch != 0;
        if seq < r.seq && (known || r.epoch == 0) {
            return (None, false);
        }
        r.seq = seq;
        r.epoch = epoch;
        let fresh: HashMap<PlayerId, Arc<str>> = players.into_iter().collect();
        let joined: Vec<(PlayerId, Arc<str>)> =
            fresh.iter().filter(|(id, _)| !r.players.contains_key(id)).map(|(id, n)| (*id, n.clone())).collect();
        let left: Vec<PlayerId> = r.players.keys().filter(|id| !fresh.contains_key(id)).copied().collect();
        r.players = fresh;
        let changed = !joined.is_empty() || !left.is_empty();
        let frame =
            changed.then(|| msg::encode_presence(shard, 0, joined.iter().map(|(id, n)| (*id, &**n)), left.into_iter()));
        (frame, changed && known)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::server::{decode, ServerMsg};

    fn names(pairs: &[(u32, &str)]) -> Vec<(PlayerId, Arc<str>)> {
        pairs.iter().map(|(id, n)| (PlayerId(*id), Arc::from(*n))).collect()
    }

    fn left_of(frame: &Bytes) -> Vec<u32> {
        let Ok(ServerMsg::Presence(p)) = decode(frame) else { panic!("presence") };
        let mut v: Vec<u32> = p.left().map(|l| l.iter().collect()).unwrap_or_default();
        v.sort();
        v
    }

    #[test]
    fn dead_shard_yields_left_for_all_its_players() {
        let mut v = ClusterView::default();
        v.set_live(&[ShardId(2), ShardId(3)]);
        v.presence(ShardId(2), 1, &names(&[(10, "a"), (11, "b")]), &[]);
        v.presence(ShardId(3), 1, &names(&[(20, "c")]), &[]);
        let frames = v.set_live(&[ShardId(3)]);
        assert_eq!(frames.len(), 1);
        assert_eq!(left_of(&frames[0]), [10, 11]);
        assert_eq!(v.player_count(), 1);
        assert!(!v.is_live(ShardId(2)));
    }

    #[test]
    fn roster_of_returning_shard_diffs_against_what_was_known() {
        let mut v = ClusterView::default();
        v.set_live(&[ShardId(2)]);
        v.presence(ShardId(2), 1, &names(&[(10, "a"), (11, "b")]), &[]);
        let frame = v.roster(ShardId(2), 9, 2, names(&[(11, "b"), (12, "c")])).0.expect("a difference");
        let Ok(ServerMsg::Presence(p)) = decode(&frame) else { panic!() };
        assert_eq!(p.joined().map(|j| j.get(0).id()), Some(12));
        assert_eq!(left_of(&frame), [10]);
        assert!(v.roster(ShardId(2), 9, 2, names(&[(11, "b"), (12, "c")])).0.is_none(), "no change, no frame");
        assert!(v.roster(ShardId(9), 9, 5, vec![]).0.is_none(), "unknown shard ignored");
    }

    #[test]
    fn presence_deltas_update_players() {
        let mut v = ClusterView::default();
        v.set_live(&[ShardId(2)]);
        v.presence(ShardId(2), 1, &names(&[(10, "a")]), &[]);
        v.presence(ShardId(2), 2, &names(&[(11, "b")]), &[PlayerId(10)]);
        let ps: Vec<_> = v.players().map(|(id, n, s)| (id.0, n.to_owned(), s)).collect();
        assert_eq!(ps, [(11, "b".to_owned(), ShardId(2))]);
        assert!(!v.presence(ShardId(5), 1, &names(&[(1, "x")]), &[]));
    }

    #[test]
    fn stale_roster_after_a_newer_delta_is_ignored_and_old_deltas_too() {
        let mut v = ClusterView::default();
        v.set_live(&[ShardId(2)]);
        // Delta 5 (Ada joined) arrives before a roster read at 4 (without her).
        assert!(v.presence(ShardId(2), 5, &names(&[(10, "Ada")]), &[]));
        assert!(v.roster(ShardId(2), 9, 4, vec![]).0.is_none());
        assert_eq!(v.player_count(), 1, "Ada kept");
        // A roster current to 6 replaces; delta 6 then is already in it.
        v.roster(ShardId(2), 9, 6, names(&[(10, "Ada"), (11, "Bob")]));
        assert!(!v.presence(ShardId(2), 6, &names(&[(11, "Bob")]), &[]));
        assert_eq!(v.player_count(), 2);
    }

    #[test]
    fn a_lost_left_is_repaired_by_the_next_roster_and_counted() {
        let mut v = ClusterView::default();
        v.set_live(&[ShardId(2)]);
        assert!(!v.roster(ShardId(2), 9, 3, names(&[(10, "Ada")])).1, "first roster: nothing repaired");
        // Delta 4 (Ada left) was lost; the hash, current to 4, no longer lists her.
        let (frame, repaired) = v.roster(ShardId(2), 9, 4, vec![]);
        assert_eq!(left_of(&frame.expect("a difference")), [10]);
        assert!(repaired);
        assert_eq!(v.player_count(), 0);
    }

    #[test]
    fn a_restarted_shard_is_believed_whatever_its_numbers() {
        let mut v = ClusterView::default();
        v.set_live(&[ShardId(2)]);
        v.roster(ShardId(2), 100, 500, names(&[(10, "Ada")]));
        // Restarted within the TTL with a clock behind: numbers from 90.
        assert!(!v.presence(ShardId(2), 91, &names(&[(11, "Bob")]), &[]), "older numbers of the old epoch");
        let (frame, _) = v.roster(ShardId(2), 90, 91, names(&[(11, "Bob")]));
        assert!(frame.is_some());
        assert_eq!(v.name(PlayerId(11)), Some("Bob"));
        assert_eq!(v.name(PlayerId(10)), None);
        assert!(v.presence(ShardId(2), 92, &names(&[(12, "Cy")]), &[]), "its deltas count again");
    }
}
