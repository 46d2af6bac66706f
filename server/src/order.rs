//! An operator's order to the place, from the admin console or API: drain a
//! shard, or kick a player. The shard that gets the request carries out what
//! concerns itself and sends the rest to the other shards on the place's
//! control channel in Redis (beside the takeover notices), as one line:
//!
//! ```text
//!   drain <shard, 8 hex digits> <operator>
//!   kick <player id> <operator> <reason...>
//! ```
//!
//! Every shard reads every order; the one it concerns carries it out (the
//! shard named, the shard holding the player) and logs who asked.

use mino_protocol::{PlayerId, ShardId};
use std::fmt;
use std::sync::Arc;

/// Longest operator name, bytes.
pub const MAX_OPERATOR_BYTES: usize = 32;

/// Longest kick reason, characters (Unicode scalar values); the close frame
/// carries at most 123 bytes of it, the Error message all of it.
pub const MAX_REASON_CHARS: usize = 120;

/// Why an operator name or a kick reason is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OrderError {
    /// Not 1 to 32 of A-Z a-z 0-9 _ . @ -.
    #[error("an operator name is 1 to {MAX_OPERATOR_BYTES} of A-Z a-z 0-9 _ . @ -")]
    Operator,
    /// Empty (or only spaces).
    #[error("a kick needs a reason")]
    ReasonEmpty,
    /// Over [`MAX_REASON_CHARS`].
    #[error("a kick reason is at most {MAX_REASON_CHARS} characters")]
    ReasonTooLong,
    /// A control character (a line break, a tab...).
    #[error("a kick reason is one line of text without control characters")]
    ReasonControl,
}

/// Who asked: an operator's name from the admin tokens file, or `local` when
/// the admin listener asks for no token (loopback).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Operator(Arc<str>);

impl Operator {
    /// The name used when no token names the operator.
    pub fn local() -> Operator {
        Operator(Arc::from("local"))
    }

    /// The name, checked.
    ///
    /// Errors: [`OrderError::Operator`].
    pub fn new(name: &str) -> Result<Operator, OrderError> {
        let ok = !name.is_empty()
            && name.len() <= MAX_OPERATOR_BYTES
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.@-".contains(&b));
        ok.then(|| Operator(Arc::from(name))).ok_or(OrderError::Operator)
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A kick's reason, shown to the kicked player: one line, 1 to
/// [`MAX_REASON_CHARS`] characters, trimmed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KickReason(Arc<str>);

impl KickReason {
    /// The reason, checked (surrounding spaces trimmed).
    ///
    /// Errors: [`OrderError`]: empty, too long, or with control characters.
    pub fn new(text: &str) -> Result<KickReason, OrderError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(OrderError::ReasonEmpty);
        }
        if text.chars().count() > MAX_REASON_CHARS {
            return Err(OrderError::ReasonTooLong);
        }
        if text.chars().any(char::is_control) {
            return Err(OrderError::ReasonControl);
        }
        Ok(KickReason(Arc::from(text)))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, shared.
    pub fn text(&self) -> Arc<str> {
        self.0.clone()
    }
}

/// An order to the place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Order {
    /// Drain `shard` (as SIGTERM would): its players move to the others.
    Drain {
        /// The shard to drain.
        shard: ShardId,
        /// Who asked.
        by: Operator,
    },
    /// Close `player`'s socket with 4040 and `reason`, and end its session.
    Kick {
        /// The player.
        player: PlayerId,
        /// Who asked.
        by: Operator,
        /// Shown to the player.
        reason: KickReason,
    },
}

impl Order {
    /// The order as one control-channel line.
    pub fn encode(&self) -> String {
        match self {
            Order::Drain { shard, by } => format!("drain {shard} {by}"),
            Order::Kick { player, by, reason } => format!("kick {} {by} {}", player.0, reason.as_str()),
        }
    }

    /// Parses a control-channel line; `None` for anything that is not a
    /// well-formed order (takeover notices among them).
    pub fn parse(line: &str) -> Option<Order> {
        let (verb, rest) = line.split_once(' ')?;
        match verb {
            "drain" => {
                let mut words = rest.split(' ');
                let shard = ShardId(u32::from_str_radix(words.next()?, 16).ok()?);
                let by = Operator::new(words.next()?).ok()?;
                words.next().is_none().then_some(Order::Drain { shard, by })
            }
            "kick" => {
                let (player, rest) = rest.split_once(' ')?;
                let (by, reason) = rest.split_once(' ')?;
                Some(Order::Kick {
                    player: PlayerId(player.parse().ok()?),
                    by: Operator::new(by).ok()?,
                    reason: KickReason::new(reason).ok()?,
                })
            }
            _ => None,
        }
    }

    /// The `action` label of the order's log lines.
    pub fn label(&self) -> &'static str {
        match self {
            Order::Drain { .. } => "drain",
            Order::Kick { .. } => "kick",
        }
    }
}

/// What a shard made of an order that concerned it, or that it was asked
/// about directly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OrderOutcome {
    /// The player was here and is kicked.
    Kicked {
        /// Its name.
        name: Arc<str>,
    },
    /// The drain starts, with this many players to move.
    Draining {
        /// Players on the shard now.
        players: usize,
    },
    /// The shard drains already.
    AlreadyDraining,
    /// Not for this shard (the player is not here, or another shard is named).
    NotHere,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str) -> Operator {
        Operator::new(name).expect("operator")
    }

    #[test]
    fn orders_go_through_the_control_channel_unchanged() {
        for order in [
            Order::Drain { shard: ShardId(2), by: op("alice") },
            Order::Kick {
                player: PlayerId(1025),
                by: op("ops@example.com"),
                reason: KickReason::new("spamming chat").expect("reason"),
            },
            Order::Kick {
                player: PlayerId(7),
                by: Operator::local(),
                reason: KickReason::new("é ünïcode ✓").expect("reason"),
            },
        ] {
            let line = order.encode();
            assert_eq!(Order::parse(&line), Some(order), "{line}");
        }
        assert_eq!(Order::Drain { shard: ShardId(0xab), by: op("bo") }.encode(), "drain 000000ab bo");
    }

    #[test]
    fn anything_else_on_the_channel_is_not_an_order() {
        for line in [
            "takeover 7 3 0000000a",
            "drain",
            "drain zz alice",
            "drain 00000002",
            "drain 00000002 al ice",
            "drain 00000002 bad/name",
            "kick 7 alice",
            "kick x alice reason",
            "kick 7 alice  ",
            "hello",
            "",
        ] {
            assert_eq!(Order::parse(line), None, "{line:?}");
        }
    }

    #[test]
    fn operator_names_and_reasons_are_checked() {
        assert!(Operator::new("ops-team_1.a@b").is_ok());
        for bad in ["", "a b", "x/y", &"a".repeat(33)] {
            assert_eq!(Operator::new(bad), Err(OrderError::Operator), "{bad:?}");
        }
        assert_eq!(KickReason::new("  cheating  ").map(|r| r.as_str().to_owned()), Ok("cheating".to_owned()));
        assert_eq!(KickReason::new("   "), Err(OrderError::ReasonEmpty));
        assert_eq!(KickReason::new("two\nlines"), Err(OrderError::ReasonControl));
        assert_eq!(KickReason::new(&"é".repeat(MAX_REASON_CHARS)).map(|r| r.as_str().chars().count()), Ok(120));
        assert_eq!(KickReason::new(&"x".repeat(MAX_REASON_CHARS + 1)), Err(OrderError::ReasonTooLong));
    }
}
