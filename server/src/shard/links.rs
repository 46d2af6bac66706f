//! The sessions the shard has admitted: one link per present player, with the
//! session generation it holds. A link is the core's name for a socket; the
//! driver keeps the socket itself (its outbox) under the same [`LinkId`].
//!
//! Lifecycle: [`Links::admit`] gives a new link (and names the link it
//! replaced, when the player already had one: a second socket took the session
//! over); [`Links::end`] is the session's own goodbye and is ignored for a
//! replaced link; [`Links::remove`] is the core dropping a player (resumed
//! elsewhere).

use mino_protocol::PlayerId;
use std::collections::HashMap;

/// One admitted socket, as the core and the driver both name it. Never reused
/// within a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId(pub u64);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Link {
    id: LinkId,
    /// The session generation this shard holds (raised by every resume claim).
    generation: u64,
}

/// Every present player's link.
#[derive(Debug)]
pub(crate) struct Links {
    by_player: HashMap<PlayerId, Link>,
    next: u64,
}

impl Links {
    pub(crate) fn new() -> Links {
        Links { by_player: HashMap::new(), next: 1 }
    }

    /// A new link for `player` at session `generation`; returns it and the
    /// link it replaces, if the player had one.
    pub(crate) fn admit(&mut self, player: PlayerId, generation: u64) -> (LinkId, Option<LinkId>) {
        let id = LinkId(self.next);
        self.next += 1;
        let old = self.by_player.insert(player, Link { id, generation });
        (id, old.map(|l| l.id))
    }

    /// The session behind `link` ended. True when it was `player`'s current
    /// link (false for a link replaced meanwhile, whose goodbye changes nothing).
    pub(crate) fn end(&mut self, player: PlayerId, link: LinkId) -> bool {
        if self.by_player.get(&player).is_some_and(|l| l.id == link) {
            self.by_player.remove(&player);
            true
        } else {
            false
        }
    }

    /// Forgets `player`'s link; returns it.
    pub(crate) fn remove(&mut self, player: PlayerId) -> Option<LinkId> {
        self.by_player.remove(&player).map(|l| l.id)
    }

    /// `player`'s current link.
    pub(crate) fn link(&self, player: PlayerId) -> Option<LinkId> {
        self.by_player.get(&player).map(|l| l.id)
    }

    /// The session generation held for `player`.
    pub(crate) fn generation(&self, player: PlayerId) -> Option<u64> {
        self.by_player.get(&player).map(|l| l.generation)
    }

    /// Every linked player with its generation.
    pub(crate) fn generations(&self) -> Vec<(PlayerId, u64)> {
        self.by_player.iter().map(|(p, l)| (*p, l.generation)).collect()
    }

    /// Every linked player.
    pub(crate) fn players(&self) -> impl Iterator<Item = PlayerId> + '_ {
        self.by_player.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_socket_replaces_the_first_and_the_first_goodbye_is_ignored() {
        let mut links = Links::new();
        let (first, replaced) = links.admit(PlayerId(7), 0);
        assert_eq!(replaced, None);
        let (second, replaced) = links.admit(PlayerId(7), 1);
        assert_eq!(replaced, Some(first));
        assert_ne!(first, second, "link ids are never reused");
        assert!(!links.end(PlayerId(7), first), "the replaced socket's goodbye");
        assert_eq!((links.link(PlayerId(7)), links.generation(PlayerId(7))), (Some(second), Some(1)));
        assert!(links.end(PlayerId(7), second));
        assert_eq!(links.link(PlayerId(7)), None);
        assert!(!links.end(PlayerId(7), second), "twice is a no-op");
    }

    #[test]
    fn removal_returns_the_link_once() {
        let mut links = Links::new();
        let (id, _) = links.admit(PlayerId(1), 3);
        assert_eq!(links.generations(), [(PlayerId(1), 3)]);
        assert_eq!(links.remove(PlayerId(1)), Some(id));
        assert_eq!(links.remove(PlayerId(1)), None);
    }
}
