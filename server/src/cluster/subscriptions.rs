//! Which channels a subscription connection should hear, which it does, and
//! which commands to send to close the difference: the subscriber's
//! bookkeeping, free of I/O (the subscriber runs the commands and reports
//! each one's end here).
//!
//! Every channel goes its own way: a command a channel, and a channel whose
//! command failed (on a Redis Cluster, its node is down until a replica is
//! promoted) is tried again at the next [`Subscriptions::retry`] while the
//! others are held and heard as usual. A lost node's channels are not
//! known by name, so [`Subscriptions::lost_all`] subscribes every channel
//! again: on the nodes that are up, a second `SSUBSCRIBE` of a channel
//! changes nothing and loses no message.

use crate::metrics::ResubscribeReason;
use std::collections::{BTreeSet, HashMap};

/// Why every wanted channel is being subscribed (again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renewal {
    /// A new connection: the first of this subscriber, or one after the
    /// last ended for the reason given.
    Connection(Option<ResubscribeReason>),
    /// On the same connection, after the reason given.
    Again(ResubscribeReason),
}

/// One command to send: subscribe to (`subscribe`) or unsubscribe from
/// `channel`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The channel.
    pub channel: String,
    /// Subscribe (true) or unsubscribe (false).
    pub subscribe: bool,
}

/// After this many failed commands in a row for one channel, the subscriber
/// says so at warn (a refusal, say an ACL without the channel, never heals;
/// a node down until its replica is promoted heals within a few).
pub const FAILURES_TO_WARN: u32 = 5;

/// The channels of one subscription connection.
#[derive(Debug)]
pub struct Subscriptions {
    /// What should be heard.
    wanted: BTreeSet<String>,
    /// What the connection is subscribed to, as far as its replies said.
    held: BTreeSet<String>,
    /// Channels whose subscribe failed: the server may have taken it (a
    /// timeout), so one no longer wanted is unsubscribed to be sure.
    doubtful: BTreeSet<String>,
    /// Channels with a command in flight: subscribe (true) or not.
    pending: HashMap<String, bool>,
    /// Channels with a subscribe in flight that the server dropped since it
    /// was sent (a slot moved, a node lost): its success holds nothing.
    stale: BTreeSet<String>,
    /// Channels unsubscribed by this subscriber whose confirmation has not
    /// come (it comes as the same push as the server's own unsubscribe).
    ours: BTreeSet<String>,
    /// Channels whose last command failed: not tried again before the next
    /// [`Subscriptions::retry`].
    failed: BTreeSet<String>,
    /// Failed commands in a row, a channel.
    streaks: HashMap<String, u32>,
    /// A renewal under way: it ends when every wanted channel is held.
    renewal: Option<Renewal>,
    /// Something changed since the last [`Subscriptions::changes`] (the
    /// subscriber asks after every message; most change nothing).
    dirty: bool,
}

impl Subscriptions {
    /// A new connection that should hear `wanted`, subscribed for `renewal`'s
    /// sake (nothing held yet).
    pub fn new(wanted: BTreeSet<String>, renewal: Renewal) -> Subscriptions {
        Subscriptions {
            wanted,
            held: BTreeSet::new(),
            doubtful: BTreeSet::new(),
            pending: HashMap::new(),
            stale: BTreeSet::new(),
            ours: BTreeSet::new(),
            failed: BTreeSet::new(),
            streaks: HashMap::new(),
            renewal: Some(renewal),
            dirty: true,
        }
    }

    /// From now on, hear `wanted`.
    pub fn want(&mut self, wanted: BTreeSet<String>) {
        self.dirty = true;
        self.wanted = wanted;
    }

    /// The connection was told `channel` is unsubscribed. The confirmation
    /// of this subscriber's own unsubscribe is taken as such (if the channel
    /// was subscribed again since, it is subscribed once more to be sure);
    /// otherwise the server dropped it (on a cluster, its slot moved), and a
    /// wanted channel is subscribed again, a renewal for `reason`. True when
    /// the server dropped a wanted channel that was held or being subscribed.
    pub fn lost(&mut self, channel: &str, reason: ResubscribeReason) -> bool {
        self.dirty = true;
        if self.ours.remove(channel) {
            self.held.remove(channel);
            return false;
        }
        let held = self.held.remove(channel);
        let subscribing = self.pending.get(channel) == Some(&true);
        if subscribing {
            self.stale.insert(channel.to_owned());
        }
        let lost = (held || subscribing) && self.wanted.contains(channel);
        if lost {
            self.renewal.get_or_insert(Renewal::Again(reason));
        }
        lost
    }

    /// Any channel may have been dropped (a cluster node's connection was
    /// lost, which channels it served is not known): every wanted channel
    /// is subscribed again, a renewal for `reason`.
    pub fn lost_all(&mut self, reason: ResubscribeReason) {
        self.dirty = true;
        let wanted = &self.wanted;
        // Held channels no longer wanted stay held, to be unsubscribed.
        self.held.retain(|c| !wanted.contains(c));
        self.stale.extend(self.pending.iter().filter(|(_, sub)| **sub).map(|(c, _)| c.clone()));
        // A lost node's confirmations never come; a late one from a node
        // still up reads as the server's own and costs a subscribe.
        self.ours.clear();
        self.renewal.get_or_insert(Renewal::Again(reason));
    }

    /// The commands to send now (each marked in flight): a subscribe for
    /// each wanted channel not held, an unsubscribe for each held (or
    /// doubtful) channel no longer wanted; none for a channel with a command
    /// in flight, or whose last command failed since the last
    /// [`Subscriptions::retry`].
    pub fn changes(&mut self) -> Vec<Change> {
        if !std::mem::take(&mut self.dirty) {
            return Vec::new();
        }
        let idle = |c: &&String| !self.pending.contains_key(*c) && !self.failed.contains(*c);
        let add =
            self.wanted.difference(&self.held).filter(idle).map(|c| Change { channel: c.clone(), subscribe: true });
        let drop = self
            .held
            .union(&self.doubtful)
            .filter(|c| !self.wanted.contains(*c))
            .filter(idle)
            .map(|c| Change { channel: c.clone(), subscribe: false });
        let changes: Vec<Change> = add.chain(drop).collect();
        for c in &changes {
            self.pending.insert(c.channel.clone(), c.subscribe);
            if !c.subscribe {
                self.ours.insert(c.channel.clone());
            }
        }
        changes
    }

    /// `change`'s command ended: `ok`, or failed (tried again after the next
    /// [`Subscriptions::retry`]). Returns the channel's failed commands in a
    /// row (0 on success).
    pub fn done(&mut self, change: &Change, ok: bool) -> u32 {
        self.dirty = true;
        let channel = &change.channel;
        self.pending.remove(channel);
        let stale = self.stale.remove(channel);
        if ok {
            self.doubtful.remove(channel);
            self.streaks.remove(channel);
            if !change.subscribe {
                self.held.remove(channel);
            } else if !stale {
                self.held.insert(channel.clone());
            }
            return 0;
        }
        if change.subscribe {
            self.doubtful.insert(channel.clone());
        } else {
            // Its confirmation may never come; one that does reads as the
            // server's own and costs at most a subscribe.
            self.ours.remove(channel);
        }
        self.failed.insert(channel.clone());
        let streak = self.streaks.entry(channel.clone()).or_insert(0);
        *streak += 1;
        *streak
    }

    /// Channels whose command failed may be tried again.
    pub fn retry(&mut self) {
        self.dirty = true;
        self.failed.clear();
    }

    /// The renewal that just ended, if one did: every wanted channel is held
    /// (once each; None until then, and after).
    pub fn renewed(&mut self) -> Option<Renewal> {
        self.renewal?;
        if self.wanted.is_subset(&self.held) {
            self.renewal.take()
        } else {
            None
        }
    }

    /// How many channels are held.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(channels: &[&str]) -> BTreeSet<String> {
        channels.iter().map(|c| c.to_string()).collect()
    }

    fn names(changes: &[Change]) -> Vec<(&str, bool)> {
        changes.iter().map(|c| (c.channel.as_str(), c.subscribe)).collect()
    }

    fn all_done(s: &mut Subscriptions, changes: &[Change]) {
        for c in changes {
            s.done(c, true);
        }
    }

    #[test]
    fn a_new_connection_subscribes_each_channel_and_is_renewed_once_all_are_held() {
        let mut s = Subscriptions::new(set(&["a", "b"]), Renewal::Connection(None));
        let first = s.changes();
        assert_eq!(names(&first), [("a", true), ("b", true)]);
        assert!(s.changes().is_empty(), "nothing sent twice while in flight");
        s.done(&first[0], true);
        assert_eq!(s.renewed(), None, "b is not held yet");
        s.done(&first[1], true);
        assert_eq!(s.renewed(), Some(Renewal::Connection(None)));
        assert_eq!(s.renewed(), None, "once");
    }

    #[test]
    fn a_failed_channel_waits_for_the_retry_while_the_others_are_held() {
        let mut s = Subscriptions::new(set(&["down", "up"]), Renewal::Connection(None));
        let first = s.changes();
        s.done(&first[0], false);
        s.done(&first[1], true);
        assert_eq!(s.held(), 1, "the channel that answered is held");
        assert!(s.changes().is_empty(), "the failed one is not tried again at once");
        assert_eq!(s.renewed(), None);
        s.retry();
        let again = s.changes();
        assert_eq!(names(&again), [("down", true)]);
        s.done(&again[0], true);
        assert_eq!(s.renewed(), Some(Renewal::Connection(None)));
    }

    #[test]
    fn following_the_wanted_set_subscribes_the_new_and_unsubscribes_the_old() {
        let mut s = Subscriptions::new(set(&["a", "b"]), Renewal::Connection(None));
        let first = s.changes();
        all_done(&mut s, &first);
        let _ = s.renewed();
        s.want(set(&["b", "c"]));
        let follow = s.changes();
        assert_eq!(names(&follow), [("c", true), ("a", false)]);
        all_done(&mut s, &follow);
        assert!(s.changes().is_empty());
        assert_eq!(s.held(), 2);
        assert_eq!(s.renewed(), None, "following is not a renewal");
    }

    #[test]
    fn a_channel_dropped_while_its_subscribe_is_in_flight_is_unsubscribed_after() {
        let mut s = Subscriptions::new(set(&["a"]), Renewal::Connection(None));
        let first = s.changes();
        s.want(BTreeSet::new());
        assert!(s.changes().is_empty(), "a's command is in flight");
        s.done(&first[0], true);
        assert_eq!(names(&s.changes()), [("a", false)]);
    }

    #[test]
    fn a_moved_channel_is_subscribed_again_and_counted_as_moved() {
        let mut s = Subscriptions::new(set(&["a", "b"]), Renewal::Connection(None));
        let first = s.changes();
        all_done(&mut s, &first);
        let _ = s.renewed();
        assert!(s.lost("b", ResubscribeReason::SlotMoved));
        let again = s.changes();
        assert_eq!(names(&again), [("b", true)]);
        s.done(&again[0], true);
        assert_eq!(s.renewed(), Some(Renewal::Again(ResubscribeReason::SlotMoved)));
        assert!(!s.lost("gone", ResubscribeReason::SlotMoved), "a channel not held is no loss");
        assert_eq!(s.renewed(), None, "nor a renewal");
    }

    #[test]
    fn a_lost_node_subscribes_every_channel_again() {
        let mut s = Subscriptions::new(set(&["a", "b"]), Renewal::Connection(None));
        let first = s.changes();
        all_done(&mut s, &first);
        let _ = s.renewed();
        s.lost_all(ResubscribeReason::NodeLost);
        let again = s.changes();
        assert_eq!(names(&again), [("a", true), ("b", true)]);
        all_done(&mut s, &again);
        assert_eq!(s.renewed(), Some(Renewal::Again(ResubscribeReason::NodeLost)));
    }

    #[test]
    fn a_lost_node_still_unsubscribes_what_is_no_longer_wanted() {
        let mut s = Subscriptions::new(set(&["a", "b"]), Renewal::Connection(None));
        let first = s.changes();
        all_done(&mut s, &first);
        s.want(set(&["a"]));
        let drop = s.changes();
        s.done(&drop[0], false);
        s.lost_all(ResubscribeReason::NodeLost);
        s.retry();
        assert_eq!(names(&s.changes()), [("a", true), ("b", false)]);
    }

    #[test]
    fn the_confirmation_of_our_own_unsubscribe_is_no_loss() {
        let mut s = Subscriptions::new(set(&["a", "b"]), Renewal::Connection(None));
        let first = s.changes();
        all_done(&mut s, &first);
        let _ = s.renewed();
        s.want(set(&["a"]));
        let drop = s.changes();
        assert_eq!(names(&drop), [("b", false)]);
        s.done(&drop[0], true);
        assert!(!s.lost("b", ResubscribeReason::SlotMoved), "our own");
        assert!(s.changes().is_empty());
        assert_eq!(s.renewed(), None);
    }

    #[test]
    fn a_late_confirmation_after_a_quick_resubscribe_subscribes_once_more() {
        let mut s = Subscriptions::new(set(&["a"]), Renewal::Connection(None));
        let first = s.changes();
        all_done(&mut s, &first);
        let _ = s.renewed();
        s.want(BTreeSet::new());
        let drop = s.changes();
        s.done(&drop[0], true);
        s.want(set(&["a"]));
        let again = s.changes();
        s.done(&again[0], true);
        // The unsubscribe's confirmation comes after the new subscribe's reply.
        assert!(!s.lost("a", ResubscribeReason::SlotMoved), "not counted as moved");
        assert_eq!(names(&s.changes()), [("a", true)], "subscribed once more, to be sure");
        assert_eq!(s.renewed(), None);
    }

    #[test]
    fn a_subscribe_in_flight_when_its_slot_moves_holds_nothing() {
        let mut s = Subscriptions::new(set(&["a"]), Renewal::Connection(None));
        let first = s.changes();
        let _ = s.lost("a", ResubscribeReason::SlotMoved);
        s.done(&first[0], true);
        assert_eq!(s.held(), 0, "the server dropped it after taking it");
        let again = s.changes();
        assert_eq!(names(&again), [("a", true)]);
        s.done(&again[0], true);
        assert_eq!(s.renewed(), Some(Renewal::Connection(None)));
    }

    #[test]
    fn a_subscribe_in_flight_when_a_node_is_lost_holds_nothing() {
        let mut s = Subscriptions::new(set(&["a"]), Renewal::Connection(None));
        let first = s.changes();
        s.lost_all(ResubscribeReason::NodeLost);
        s.done(&first[0], true);
        assert_eq!(names(&s.changes()), [("a", true)]);
    }

    #[test]
    fn a_failed_subscribe_of_a_channel_no_longer_wanted_is_unsubscribed_to_be_sure() {
        let mut s = Subscriptions::new(set(&["a"]), Renewal::Connection(None));
        let first = s.changes();
        assert_eq!(s.done(&first[0], false), 1);
        s.want(BTreeSet::new());
        assert!(s.changes().is_empty(), "not before the retry");
        s.retry();
        let drop = s.changes();
        assert_eq!(names(&drop), [("a", false)]);
        s.done(&drop[0], true);
        s.retry();
        assert!(s.changes().is_empty());
    }

    #[test]
    fn failures_in_a_row_are_counted_until_one_succeeds() {
        let mut s = Subscriptions::new(set(&["a"]), Renewal::Connection(None));
        for n in 1..=FAILURES_TO_WARN {
            s.retry();
            let c = s.changes();
            assert_eq!(s.done(&c[0], false), n);
        }
        s.retry();
        let c = s.changes();
        assert_eq!(s.done(&c[0], true), 0);
        assert_eq!(s.renewed(), Some(Renewal::Connection(None)));
    }
}
