//! UTF-8 checked as it arrives: a text message's bytes fed in pieces (its
//! fragments, or the parts of one frame cut between reads), refused at the
//! first byte no continuation can make valid, in one pass over each byte.

/// Bytes that cannot be UTF-8, whatever follows them (RFC 6455 section 8.1:
/// the connection fails with 1007).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not utf-8")]
pub struct InvalidUtf8;

/// The state of a text checked piece by piece: the start of a character cut
/// by the end of the last piece (at most 3 bytes).
#[derive(Clone, Copy, Debug, Default)]
pub struct Utf8Stream {
    carry: [u8; 4],
    carry_len: u8,
}

impl Utf8Stream {
    /// Checks the next `bytes` of the text.
    ///
    /// Errors: [`InvalidUtf8`] when the text so far cannot be the start of
    /// valid UTF-8 (a character cut at the end is not an error yet: see
    /// [`Utf8Stream::finish`]).
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), InvalidUtf8> {
        while self.carry_len > 0 {
            let Some((&b, rest)) = bytes.split_first() else { return Ok(()) };
            bytes = rest;
            self.carry[usize::from(self.carry_len)] = b;
            self.carry_len += 1;
            match std::str::from_utf8(&self.carry[..usize::from(self.carry_len)]) {
                Ok(_) => self.carry_len = 0,
                Err(e) if e.error_len().is_some() => return Err(InvalidUtf8),
                // Still a cut character (four bytes are always whole or invalid).
                Err(_) => {}
            }
        }
        match std::str::from_utf8(bytes) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_none() => {
                let tail = &bytes[e.valid_up_to()..];
                self.carry[..tail.len()].copy_from_slice(tail);
                self.carry_len = tail.len() as u8;
                Ok(())
            }
            Err(_) => Err(InvalidUtf8),
        }
    }

    /// The text ended.
    ///
    /// Errors: [`InvalidUtf8`] when it ends inside a character.
    pub fn finish(&self) -> Result<(), InvalidUtf8> {
        match self.carry_len {
            0 => Ok(()),
            _ => Err(InvalidUtf8),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks `text` cut at every place into two pieces, and byte by byte.
    fn checked_in_pieces(text: &[u8]) -> Vec<Result<(), InvalidUtf8>> {
        let mut outcomes = Vec::new();
        for cut in 0..=text.len() {
            let mut s = Utf8Stream::default();
            outcomes.push(s.feed(&text[..cut]).and_then(|()| s.feed(&text[cut..])).and_then(|()| s.finish()));
        }
        let mut s = Utf8Stream::default();
        outcomes.push(text.iter().try_for_each(|b| s.feed(&[*b])).and_then(|()| s.finish()));
        outcomes
    }

    #[test]
    fn valid_text_passes_however_it_is_cut() {
        let text = "κόσμε, 𝄞 € ü".as_bytes();
        assert!(checked_in_pieces(text).iter().all(Result::is_ok));
    }

    #[test]
    fn invalid_text_fails_however_it_is_cut() {
        for bad in
            [&[0xc0, 0x80][..], &[0xed, 0xa0, 0x80], &[0xf4, 0x90, 0x80, 0x80], &[b'a', 0xff], &[0xe2, 0x28, 0xa1]]
        {
            assert!(checked_in_pieces(bad).iter().all(Result::is_err), "{bad:x?}");
        }
    }

    #[test]
    fn it_fails_at_the_first_byte_nothing_can_mend_not_at_the_end() {
        let mut s = Utf8Stream::default();
        assert_eq!(s.feed(&[b'o', b'k', 0xf4]), Ok(()), "a cut character may still be valid");
        assert_eq!(s.feed(&[0x90]), Err(InvalidUtf8), "above U+10FFFF whatever follows");
        let mut s = Utf8Stream::default();
        assert_eq!(s.feed(&[0xe2, 0x82]), Ok(()));
        assert_eq!(s.finish(), Err(InvalidUtf8), "cut at the end");
    }
}
