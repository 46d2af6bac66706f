//! Finding players by name or id, for the admin console's search: the query
//! and what is found of a player here. The same query matches the other
//! shards' players (read from Redis by the admin API).

use mino_protocol::PlayerId;
use std::sync::Arc;

/// Longest query, characters.
pub const MAX_QUERY_CHARS: usize = 64;

/// A search: a player id, a part of a name (case-insensitive), or both when
/// the text is a number (`7` finds player 7 and "Agent 007").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerQuery {
    id: Option<PlayerId>,
    /// Lower case.
    needle: String,
}

impl PlayerQuery {
    /// The query `text` asks for (trimmed); `None` when empty or longer than
    /// [`MAX_QUERY_CHARS`].
    pub fn parse(text: &str) -> Option<PlayerQuery> {
        let text = text.trim();
        if text.is_empty() || text.chars().count() > MAX_QUERY_CHARS {
            return None;
        }
        Some(PlayerQuery { id: text.parse().ok().map(PlayerId), needle: text.to_lowercase() })
    }

    /// Whether the player `id` named `name` matches.
    pub fn matches(&self, id: PlayerId, name: &str) -> bool {
        self.id == Some(id) || name.to_lowercase().contains(&self.needle)
    }
}

/// A player found on this shard.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    /// Its id.
    pub player: PlayerId,
    /// Its name.
    pub name: Arc<str>,
    /// Where it stands, world units.
    pub position: (f32, f32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_in_part_and_numbers_match_ids_too() {
        let q = PlayerQuery::parse(" ada ").expect("query");
        assert!(
            q.matches(PlayerId(1), "Ada") && q.matches(PlayerId(2), "Lovelace ADA") && !q.matches(PlayerId(3), "Bo")
        );
        let n = PlayerQuery::parse("7").expect("query");
        assert!(n.matches(PlayerId(7), "Bo") && n.matches(PlayerId(9), "Agent 007") && !n.matches(PlayerId(70), "Bo"));
        assert_eq!(PlayerQuery::parse("   "), None);
        assert_eq!(PlayerQuery::parse(&"x".repeat(MAX_QUERY_CHARS + 1)), None);
    }
}
