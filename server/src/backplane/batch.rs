//! Commands sent together whose replies are not needed (publishes, the
//! newest snapshot). On one Redis they go out as one pipeline; on a cluster a
//! pipeline must stay within one slot, so they are grouped by the slot of the
//! key (or shard channel) each touches, one pipeline a slot, sent at once.

use redis::cluster_routing::Slot;
use redis::{Cmd, Pipeline};

/// Commands grouped into pipelines by slot.
pub struct Batch {
    by_slot: bool,
    groups: Vec<(Slot, Pipeline)>,
}

impl Batch {
    /// An empty batch; `by_slot` on a Redis Cluster.
    pub fn new(by_slot: bool) -> Batch {
        Batch { by_slot, groups: Vec::new() }
    }

    /// Adds `cmd`, which touches `key` (its key, or the channel it
    /// publishes on); its reply is ignored.
    pub fn add(&mut self, key: &str, cmd: Cmd) {
        let slot = if self.by_slot { Slot::for_key(key) } else { Slot::for_key("") };
        let i = match self.groups.iter().position(|(s, _)| *s == slot) {
            Some(i) => i,
            None => {
                self.groups.push((slot, Pipeline::new()));
                self.groups.len() - 1
            }
        };
        self.groups[i].1.add_command(cmd).ignore();
    }

    /// True when nothing was added.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The pipelines, one a slot (one in all on one Redis).
    pub fn into_pipelines(self) -> Vec<Pipeline> {
        self.groups.into_iter().map(|(_, p)| p).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_grouped_by_slot_on_a_cluster_only() {
        let mut one = Batch::new(false);
        one.add("mino:{a}:x", redis::cmd("PING"));
        one.add("mino:{b}:y", redis::cmd("PING"));
        assert_eq!(one.into_pipelines().len(), 1);
        let mut spread = Batch::new(true);
        spread.add("mino:{a}:x", redis::cmd("PING"));
        spread.add("mino:{a}:z", redis::cmd("PING"));
        spread.add("mino:{b}:y", redis::cmd("PING"));
        let pipes = spread.into_pipelines();
        assert_eq!(pipes.iter().map(|p| p.len()).collect::<Vec<_>>(), [2, 1]);
    }
}
