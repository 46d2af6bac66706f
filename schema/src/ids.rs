//! Newtype identifiers shared by the server, the bots and the tests.

use std::fmt;
use std::str::FromStr;

/// A player's id, unique in the place (standalone: in the process; clustered:
/// allocated in Redis). Never 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlayerId(pub u32);

/// A shard (one server process) id, unique in the place. Never 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShardId(pub u32);

/// A tick number of one shard, counted from 1 at the shard's start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tick(pub u64);

impl fmt::Display for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "p{}", self.0)
    }
}

impl fmt::Display for ShardId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08x}", self.0)
    }
}

/// Why a text is not a shard id (see [`ShardId`]'s `FromStr`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShardIdError {
    /// Not 1 to 8 hex digits; holds the text.
    NotHex(String),
    /// All zeros: no shard has the id 0.
    Zero,
}

impl fmt::Display for ShardIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShardIdError::NotHex(s) => {
                write!(f, "{s:?} is not 1 to 8 hex digits (a shard id as the logs show it, e.g. 2a or 0000002a)")
            }
            ShardIdError::Zero => f.write_str("a shard id is not zero"),
        }
    }
}

impl std::error::Error for ShardIdError {}

/// A shard id in the form it is shown in ([`fmt::Display`]): 1 to 8 hex
/// digits, either case, leading zeros optional, surrounding spaces ignored
/// (`2a` and `0000002A` are both shard 42).
///
/// Errors: [`ShardIdError`].
impl FromStr for ShardId {
    type Err = ShardIdError;

    fn from_str(s: &str) -> Result<ShardId, ShardIdError> {
        let digits = s.trim();
        if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(ShardIdError::NotHex(s.to_owned()));
        }
        match u32::from_str_radix(digits, 16) {
            Ok(0) => Err(ShardIdError::Zero),
            Ok(id) => Ok(ShardId(id)),
            Err(_) => Err(ShardIdError::NotHex(s.to_owned())),
        }
    }
}

impl fmt::Display for Tick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_id_reads_back_as_it_is_shown() {
        for id in [1, 42, 0xdead_beef, u32::MAX] {
            assert_eq!(ShardId(id).to_string().parse(), Ok(ShardId(id)));
        }
        assert_eq!(" 2A ".parse(), Ok(ShardId(42)));
        assert_eq!("00000000".parse::<ShardId>(), Err(ShardIdError::Zero));
        for bad in ["", "g1", "123456789", "-1", "0x2a"] {
            assert_eq!(bad.parse::<ShardId>(), Err(ShardIdError::NotHex(bad.to_owned())), "{bad:?}");
        }
    }
}
