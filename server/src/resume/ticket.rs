//! Resume tickets: 24 bytes, the issue time (ms since the epoch, big-endian)
//! then 128 random bits from a CSPRNG. The time lets a shard tell an expired
//! ticket from a forged one; the random part is the secret. A ticket is never
//! put in a broadcast frame.

use rand::CryptoRng;
use std::fmt;

/// Bytes in a ticket.
pub const TICKET_LEN: usize = 24;

/// A resume ticket.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ticket([u8; TICKET_LEN]);

impl Ticket {
    /// A fresh ticket issued at `now_ms`.
    pub fn issue(now_ms: u64, rng: &mut impl CryptoRng) -> Ticket {
        let mut b = [0u8; TICKET_LEN];
        b[..8].copy_from_slice(&now_ms.to_be_bytes());
        rng.fill_bytes(&mut b[8..]);
        Ticket(b)
    }

    /// Reads a ticket from a Hello; `None` unless it is exactly [`TICKET_LEN`] bytes.
    pub fn parse(bytes: &[u8]) -> Option<Ticket> {
        bytes.try_into().ok().map(Ticket)
    }

    /// Eight of its random bytes as a number: a key to find it by (two
    /// live tickets share one with odds of about n^2 / 2^65 for n tickets).
    pub fn key(&self) -> u64 {
        u64::from_le_bytes(self.eight(8))
    }

    /// Its other 16 bytes folded to 4 (a multiply-xor mix of two words):
    /// kept beside the key, so that a ticket whose key is known but any
    /// other byte differs is told apart (the odds it is not: 2^-32).
    pub fn check(&self) -> u32 {
        let (a, b) = (u64::from_le_bytes(self.eight(0)), u64::from_le_bytes(self.eight(16)));
        let h = a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
        (h ^ (h >> 32)) as u32
    }

    /// When it was issued, ms since the epoch.
    pub fn issued_ms(&self) -> u64 {
        u64::from_be_bytes(self.eight(0))
    }

    /// Its bytes `at..at + 8` (`at` is at most 16: a ticket is 24 bytes).
    fn eight(&self, at: usize) -> [u8; 8] {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[at..at + 8]);
        b
    }

    /// True when a ticket issued when it says and living `ttl_ms` is past
    /// its life at `now_ms`. The issue time is whatever the peer sent: no
    /// value of it overflows here (a forged far-future time is simply not
    /// expired, and the ticket is then refused as unknown).
    pub fn expired(&self, ttl_ms: u64, now_ms: u64) -> bool {
        self.issued_ms().saturating_add(ttl_ms) <= now_ms
    }

    /// The bytes, as sent to the client.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Lower-case hex, for Redis keys.
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Debug for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secret part.
        write!(f, "Ticket(issued {} ms)", self.issued_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_carry_their_issue_time_and_differ() {
        let mut rng = rand::rngs::StdRng::from_os_rng();
        let a = Ticket::issue(1234, &mut rng);
        let b = Ticket::issue(1234, &mut rng);
        assert_eq!(a.issued_ms(), 1234);
        assert_ne!(a, b);
        assert_eq!(Ticket::parse(a.as_bytes()), Some(a));
        assert_eq!(a.hex().len(), 48);
        assert!(!format!("{a:?}").contains(&a.hex()[16..]), "debug output hides the secret");
    }

    #[test]
    fn any_issue_time_a_peer_sends_is_judged_without_overflow() {
        let mut bytes = [0xffu8; TICKET_LEN];
        let far = Ticket::parse(&bytes).expect("24 bytes");
        assert!(!far.expired(u64::MAX, u64::MAX - 1));
        assert!(!far.expired(10_000, 5_000));
        bytes[..8].copy_from_slice(&1000u64.to_be_bytes());
        let old = Ticket::parse(&bytes).expect("24 bytes");
        assert!(old.expired(10_000, 11_000));
        assert!(!old.expired(10_000, 10_999));
    }

    #[test]
    fn wrong_lengths_are_not_tickets() {
        assert_eq!(Ticket::parse(&[0; 16]), None);
        assert_eq!(Ticket::parse(&[0; 4]), None);
        assert_eq!(Ticket::parse(&[]), None);
    }

    use rand::SeedableRng;
}
