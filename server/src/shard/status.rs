//! When the place's status (`PlaceStatus`: players and shards) goes to every
//! socket, with area of interest: at most once a second, and only when it
//! says something new. A place where nobody joins or leaves sends nothing, so
//! a standing player's socket is written nothing at all (a status to every
//! socket each second was 15,000 writes a second at 15,000 players, half of
//! the idle shard's CPU).
//!
//! "New" is a different count, or a socket admitted since the last status:
//! a newcomer is told the place even when someone left on the same second
//! (the counts then did not change).

/// The last status sent and whether a socket came since.
#[derive(Debug, Default)]
pub(crate) struct StatusGate {
    /// (players, shards) last sent; `None` before the first.
    sent: Option<(u32, u32)>,
    /// A socket was admitted since the last status.
    admitted: bool,
}

impl StatusGate {
    /// A socket was admitted: the next check sends the status.
    pub(crate) fn admitted(&mut self) {
        self.admitted = true;
    }

    /// At a check (once a second): true when `(players, shards)` must go out,
    /// which then counts as sent.
    pub(crate) fn due(&mut self, players: u32, shards: u32) -> bool {
        let now = Some((players, shards));
        if self.sent == now && !self.admitted {
            return false;
        }
        self.sent = now;
        self.admitted = false;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_goes_out_once_per_change_and_for_each_newcomer() {
        let mut gate = StatusGate::default();
        assert!(gate.due(0, 1), "the first check always says the place");
        assert!(!gate.due(0, 1), "nothing new: nothing sent");
        gate.admitted();
        assert!(gate.due(1, 1));
        assert!(!gate.due(1, 1));
        assert!(gate.due(1, 2), "a shard came");
        gate.admitted();
        assert!(gate.due(1, 2), "one came and one left: the newcomer is still told");
        assert!(!gate.due(1, 2));
    }
}
