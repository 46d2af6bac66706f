//! Commands sent together whose replies are not needed (a tick's publishes,
//! the newest snapshot). On one Redis they go out as one pipeline; on a
//! cluster a pipeline must stay within one slot, so they are grouped by the
//! slot of the key (or shard channel) each touches, one pipeline a slot,
//! each then sent on its slot's lane ([`super::lanes`]).

use redis::cluster_routing::Slot;
use redis::{Cmd, Pipeline};

/// Commands of one slot, as one pipeline.
pub struct Group {
    /// The slot every command touches (one for all on one Redis).
    pub slot: Slot,
    /// The commands.
    pub pipe: Pipeline,
    /// True when it publishes (added with [`Batch::publish`]), not only
    /// stores.
    pub publishes: bool,
}

/// Commands grouped into pipelines by slot.
pub struct Batch {
    by_slot: bool,
    groups: Vec<Group>,
}

/// The slot of `key` (its key, or the channel it publishes on): its own on a
/// Redis Cluster (`by_slot`), else one for every key.
pub fn slot_of(by_slot: bool, key: &str) -> Slot {
    Slot::for_key(if by_slot { key } else { "" })
}

impl Batch {
    /// An empty batch; `by_slot` on a Redis Cluster.
    pub fn new(by_slot: bool) -> Batch {
        Batch { by_slot, groups: Vec::new() }
    }

    /// Adds `cmd`, which touches `key` (its key, or the channel it
    /// publishes on); its reply is ignored.
    pub fn add(&mut self, key: &str, cmd: Cmd) {
        self.group(key).pipe.add_command(cmd).ignore();
    }

    /// Adds `cmd`, a publish on `channel`; its reply is ignored.
    pub fn publish(&mut self, channel: &str, cmd: Cmd) {
        let group = self.group(channel);
        group.pipe.add_command(cmd).ignore();
        group.publishes = true;
    }

    fn group(&mut self, key: &str) -> &mut Group {
        let slot = slot_of(self.by_slot, key);
        let i = match self.groups.iter().position(|g| g.slot == slot) {
            Some(i) => i,
            None => {
                self.groups.push(Group { slot, pipe: Pipeline::new(), publishes: false });
                self.groups.len() - 1
            }
        };
        &mut self.groups[i]
    }

    /// True when nothing was added.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The pipelines, one a slot (one in all on one Redis).
    pub fn into_groups(self) -> Vec<Group> {
        self.groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_grouped_by_slot_on_a_cluster_only() {
        let mut one = Batch::new(false);
        one.add("mino:{a}:x", redis::cmd("PING"));
        one.publish("mino:{b}:y", redis::cmd("PING"));
        let groups = one.into_groups();
        assert_eq!(groups.iter().map(|g| (g.pipe.len(), g.publishes)).collect::<Vec<_>>(), [(2, true)]);
        let mut spread = Batch::new(true);
        spread.add("mino:{a}:x", redis::cmd("PING"));
        spread.add("mino:{a}:z", redis::cmd("PING"));
        spread.publish("mino:{b}:y", redis::cmd("PING"));
        let groups = spread.into_groups();
        assert_eq!(groups.iter().map(|g| (g.pipe.len(), g.publishes)).collect::<Vec<_>>(), [(2, false), (1, true)]);
        assert_eq!(groups[0].slot, slot_of(true, "mino:{a}:q"));
        assert_ne!(groups[0].slot, groups[1].slot);
    }
}
