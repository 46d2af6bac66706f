//! Value parsers the flag groups share: ranged floats, an octal file mode, a
//! place name, a shard id in hex. Each error names the range or the shape it
//! wanted, so clap's message names the flag and why.

use mino_protocol::{ShardId, ShardIdError};
use std::num::NonZeroU32;

/// A clap parser for an `f32` within `min..=max` (NaN refused).
pub(super) fn ranged_f32(min: f32, max: f32) -> impl Fn(&str) -> Result<f32, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v: f32 = s.trim().parse().map_err(|e| format!("{e}"))?;
        if (min..=max).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{s} is not in {min}..={max}"))
        }
    }
}

/// A clap parser for an `f64` within `min..=max` (NaN refused).
pub(super) fn ranged_f64(min: f64, max: f64) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v: f64 = s.trim().parse().map_err(|e| format!("{e}"))?;
        if (min..=max).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{s} is not in {min}..={max}"))
        }
    }
}

/// A clap parser for a file mode in octal (`0660`, `660`), at most 0777.
pub(super) fn parse_mode(s: &str) -> Result<u32, String> {
    match u32::from_str_radix(s.trim(), 8) {
        Ok(mode) if mode <= 0o777 => Ok(mode),
        _ => Err(format!("{s} is not a file mode in octal (0000 to 0777)")),
    }
}

/// A clap parser for a place name: 1 to 64 of A-Z a-z 0-9 _ -.
pub(super) fn parse_place(s: &str) -> Result<String, String> {
    let ok = !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(s.to_owned())
    } else {
        Err("a place is 1 to 64 of A-Z a-z 0-9 _ -".into())
    }
}

/// A clap parser for a shard id: 1 to 8 hex digits (either case), not zero,
/// as [`ShardId`](mino_protocol::ShardId)'s Display writes it.
pub(super) fn parse_shard_id(s: &str) -> Result<NonZeroU32, String> {
    let ShardId(id) = s.parse().map_err(|e: ShardIdError| e.to_string())?;
    NonZeroU32::new(id).ok_or_else(|| ShardIdError::Zero.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_refuse_nan_and_values_outside() {
        let p = ranged_f32(1.0, 2.0);
        assert_eq!(p(" 1.5 "), Ok(1.5));
        assert!(p("NaN").is_err() && p("0.5").is_err() && p("x").is_err());
        assert!(ranged_f64(0.01, 1000.0)("1000.5").expect_err("over").contains("0.01..=1000"));
    }

    #[test]
    fn modes_are_octal_up_to_0777_and_places_are_short_names() {
        assert_eq!((parse_mode("0660"), parse_mode("600")), (Ok(0o660), Ok(0o600)));
        assert!(parse_mode("0999").is_err() && parse_mode("01000").is_err());
        assert_eq!(parse_place("main-2_b"), Ok("main-2_b".into()));
        assert!(parse_place("").is_err() && parse_place("a b").is_err() && parse_place(&"a".repeat(65)).is_err());
    }
}
