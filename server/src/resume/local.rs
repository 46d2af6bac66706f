//! Standalone resume: tickets, names and last positions kept in memory by the
//! tick loop. I/O-free; the caller passes `now_ms`.

use super::{AccountGate, Claimed, ResumeError, Ticket};
use mino_protocol::PlayerId;
use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::Arc;

#[derive(Debug)]
struct Session {
    /// Shared with the world's copy of the name: no allocation of its own.
    name: Arc<str>,
    ticket: Ticket,
    generation: u64,
    /// Where the player stood when its socket closed (None while connected).
    parked_at: Option<(f32, f32)>,
    /// When the session may be forgotten, ms (refreshed while connected).
    expires_ms: u64,
    /// The account it belongs to (`None`: a guest's).
    account: Option<String>,
}

/// A ticket handed out: whose, and when it was claimed or replaced.
#[derive(Clone, Copy, Debug)]
struct Issued {
    player: PlayerId,
    /// The ticket's [`Ticket::check`]: a ticket of the same key and another
    /// check is one never handed out.
    check: u32,
    /// When it was claimed or replaced, ms (at least 1); `None`: still
    /// claimable. The niche of `NonZeroU64` keeps an entry 16 bytes.
    used: Option<NonZeroU64>,
}

impl Issued {
    /// `ticket` of `player`, still claimable.
    fn unused(player: PlayerId, ticket: &Ticket) -> Issued {
        Issued { player, check: ticket.check(), used: None }
    }

    /// `ticket` of `player`, claimed or replaced at `now_ms` (a use at ms 0
    /// is kept as ms 1).
    fn used(player: PlayerId, ticket: &Ticket, now_ms: u64) -> Issued {
        Issued { player, check: ticket.check(), used: NonZeroU64::new(now_ms.max(1)) }
    }
}

/// Sessions of one standalone shard.
#[derive(Debug, Default)]
pub struct LocalSessions {
    ttl_ms: u64,
    /// Boxed: the table then holds 16-byte entries, not whole sessions (a
    /// hash table keeps up to twice the slots it needs).
    sessions: HashMap<PlayerId, Box<Session>>,
    /// Every ticket handed out and not yet expired, by [`Ticket::key`]: the
    /// player it names, its check and, once claimed or replaced, when
    /// (24-byte entries, not the 40 of the whole ticket as key: one per
    /// present player). The whole ticket is the session's: a claim must
    /// match it byte for byte; a used one is known by key and check.
    tickets: HashMap<u64, Issued>,
    /// The session of each account.
    accounts: HashMap<String, PlayerId>,
    /// Nothing expires before this, ms: at most the earliest parked
    /// session's or used ticket's end (a lower bound: an unparked session
    /// leaves it early, costing one sweep). A place of connected players
    /// has nothing to expire and is not swept.
    next_expiry_ms: u64,
}

impl LocalSessions {
    /// Tickets and parked sessions live `ttl_ms` after issue or parking.
    pub fn new(ttl_ms: u64) -> LocalSessions {
        LocalSessions { ttl_ms, next_expiry_ms: u64::MAX, ..Default::default() }
    }

    /// Records a new session's (or a resumed session's fresh) ticket, of
    /// `account` (`None`: a guest). A ticket it replaces can no longer be
    /// claimed.
    pub fn issue(
        &mut self,
        player: PlayerId,
        name: &Arc<str>,
        ticket: Ticket,
        generation: u64,
        now_ms: u64,
        account: Option<&str>,
    ) {
        if let Some(old) = self.sessions.get(&player).map(|s| s.ticket) {
            if old != ticket {
                self.retire(player, &old, now_ms);
            }
        }
        self.hand_out(player, &ticket);
        if let Some(account) = account {
            self.accounts.insert(account.to_owned(), player);
        }
        let session = Session {
            name: name.clone(),
            ticket,
            generation,
            parked_at: None,
            expires_ms: now_ms + self.ttl_ms,
            account: account.map(str::to_owned),
        };
        self.sessions.insert(player, Box::new(session));
    }

    /// An account signs in: takes its session over (the ticket `next`
    /// replaces the session's), or `None` when it has none (a new player).
    pub fn login(&mut self, account: &str, name: &str, next: Ticket, now_ms: u64) -> Option<Claimed> {
        self.expire(now_ms);
        let player = *self.accounts.get(account)?;
        let old = self.sessions.get(&player).filter(|s| s.account.as_deref() == Some(account))?.ticket;
        self.retire(player, &old, now_ms);
        self.hand_out(player, &next);
        let session = self.sessions.get_mut(&player)?;
        session.ticket = next;
        session.generation += 1;
        session.expires_ms = now_ms + self.ttl_ms;
        session.name = name.into();
        Some(Claimed {
            player,
            name: session.name.to_string(),
            position: session.parked_at.take(),
            generation: session.generation,
            previous_owner: None,
            ticket: next,
            account: Some(account.to_owned()),
            fresh: false,
        })
    }

    /// The account of `player`'s session (`None`: a guest's, or no session).
    pub fn account_of(&self, player: PlayerId) -> Option<&str> {
        self.sessions.get(&player).and_then(|s| s.account.as_deref())
    }

    /// The player left at `position`: keep its session for the TTL.
    pub fn park(&mut self, player: PlayerId, position: (f32, f32), now_ms: u64) {
        if let Some(s) = self.sessions.get_mut(&player) {
            s.parked_at = Some(position);
            s.expires_ms = now_ms + self.ttl_ms;
            lower(&mut self.next_expiry_ms, s.expires_ms);
        }
    }

    /// Claims the session `bytes` names, as `gate` allows; the fresh ticket
    /// `next` replaces it.
    ///
    /// Errors: [`ResumeError::Invalid`], [`ResumeError::Used`],
    /// [`ResumeError::Expired`], and the gate's refusals (nothing changes then).
    pub fn claim(
        &mut self,
        bytes: &[u8],
        next: Ticket,
        now_ms: u64,
        gate: AccountGate<'_>,
    ) -> Result<Claimed, ResumeError> {
        let ticket = Ticket::parse(bytes).ok_or(ResumeError::Invalid)?;
        self.expire(now_ms);
        let issued = self.tickets.get(&ticket.key()).filter(|i| i.check == ticket.check());
        let Some(&Issued { player, used, .. }) = issued else {
            return Err(if ticket.expired(self.ttl_ms, now_ms) { ResumeError::Expired } else { ResumeError::Invalid });
        };
        if used.is_some() {
            return Err(ResumeError::Used);
        }
        let session = self.sessions.get(&player).ok_or(ResumeError::Expired)?;
        if session.ticket != ticket {
            // Its key and check, not all its bytes: not a ticket handed out.
            return Err(ResumeError::Invalid);
        }
        gate.check(session.account.as_deref())?;
        self.retire(player, &ticket, now_ms);
        self.hand_out(player, &next);
        let session = self.sessions.get_mut(&player).ok_or(ResumeError::Expired)?;
        session.ticket = next;
        session.generation += 1;
        session.expires_ms = now_ms + self.ttl_ms;
        Ok(Claimed {
            player,
            name: session.name.to_string(),
            position: session.parked_at.take(),
            generation: session.generation,
            previous_owner: None,
            ticket: next,
            account: session.account.clone(),
            fresh: false,
        })
    }

    /// Ends `player`'s session (an operator kicked it): its tickets no longer
    /// resume it, and its account starts a new one.
    pub fn end(&mut self, player: PlayerId) {
        self.sessions.remove(&player);
        self.tickets.retain(|_, issued| issued.player != player);
        self.accounts.retain(|_, p| *p != player);
    }

    /// Forgets parked sessions past their TTL and their tickets. A connected
    /// player's ticket stays valid however old it is; a used ticket is
    /// remembered (to be refused as used) for a TTL after its use.
    pub fn expire(&mut self, now_ms: u64) {
        if now_ms < self.next_expiry_ms {
            return;
        }
        let ttl = self.ttl_ms;
        self.sessions.retain(|_, s| s.parked_at.is_none() || s.expires_ms > now_ms);
        let sessions = &self.sessions;
        self.accounts.retain(|_, player| sessions.contains_key(player));
        let sessions = &self.sessions;
        self.tickets.retain(|k, issued| match issued.used {
            None => {
                sessions.get(&issued.player).is_some_and(|s| s.ticket.key() == *k && s.ticket.check() == issued.check)
            }
            Some(at) => at.get().saturating_add(ttl) > now_ms,
        });
        let parked = self.sessions.values().filter(|s| s.parked_at.is_some()).map(|s| s.expires_ms);
        let used = self.tickets.values().filter_map(|i| i.used).map(|at| at.get().saturating_add(ttl));
        self.next_expiry_ms = parked.chain(used).min().unwrap_or(u64::MAX);
    }
}

impl LocalSessions {
    /// `ticket` of `player` was claimed or replaced at `now_ms`: refused as
    /// used for a TTL from now.
    fn retire(&mut self, player: PlayerId, ticket: &Ticket, now_ms: u64) {
        self.tickets.insert(ticket.key(), Issued::used(player, ticket, now_ms));
        lower(&mut self.next_expiry_ms, now_ms + self.ttl_ms);
    }

    /// `ticket` is `player`'s claimable one.
    fn hand_out(&mut self, player: PlayerId, ticket: &Ticket) {
        self.tickets.insert(ticket.key(), Issued::unused(player, ticket));
    }
}

/// Lowers `bound` (ms) to `end`: something ends then (a used ticket's or a
/// parked session's TTL; a use at ms 0, kept as 1, ends a ms later than this
/// says, which a lower bound allows).
fn lower(bound: &mut u64, end: u64) {
    *bound = (*bound).min(end);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn an_issued_ticket_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Issued>(), 16);
    }

    fn t(now: u64) -> Ticket {
        Ticket::issue(now, &mut rand::rngs::StdRng::from_os_rng())
    }

    #[test]
    fn parked_player_resumes_in_place_once() {
        let mut s = LocalSessions::new(10_000);
        let first = t(0);
        s.issue(PlayerId(7), &"Ada".into(), first, 0, 0, None);
        s.park(PlayerId(7), (12.0, 34.0), 100);
        let next = t(200);
        let c = s.claim(first.as_bytes(), next, 200, AccountGate::default()).expect("claimed");
        assert_eq!((c.player, c.name.as_str(), c.position, c.generation), (PlayerId(7), "Ada", Some((12.0, 34.0)), 1));
        assert_eq!(
            s.claim(first.as_bytes(), t(300), 300, AccountGate::default()),
            Err(ResumeError::Used),
            "single use"
        );
        let c2 = s.claim(next.as_bytes(), t(400), 400, AccountGate::default()).expect("the fresh ticket works");
        assert_eq!(c2.position, None, "still connected: the tick loop knows where it stands");
    }

    #[test]
    fn unknown_forged_and_expired_tickets_are_refused() {
        let mut s = LocalSessions::new(1_000);
        assert_eq!(
            s.claim(&[1, 2, 3, 4], t(0), 0, AccountGate::default()),
            Err(ResumeError::Invalid),
            "a player id is no ticket"
        );
        assert_eq!(s.claim(t(0).as_bytes(), t(0), 0, AccountGate::default()), Err(ResumeError::Invalid), "forged");
        let old = t(0);
        s.issue(PlayerId(1), &"a".into(), old, 0, 0, None);
        s.park(PlayerId(1), (0.0, 0.0), 0);
        assert_eq!(s.claim(old.as_bytes(), t(5_000), 5_000, AccountGate::default()), Err(ResumeError::Expired));
    }

    #[test]
    fn a_ticket_is_claimed_only_whole_not_by_its_key() {
        let mut s = LocalSessions::new(1_000);
        let live = t(0);
        s.issue(PlayerId(1), &"a".into(), live, 0, 0, None);
        // The same key (and issue time), another last byte.
        let mut forged = live.as_bytes().to_vec();
        *forged.last_mut().expect("a ticket has bytes") ^= 1;
        assert_eq!(Ticket::parse(&forged).map(|f| f.key()), Some(live.key()));
        assert_eq!(s.claim(&forged, t(10), 10, AccountGate::default()), Err(ResumeError::Invalid));
        assert!(s.claim(live.as_bytes(), t(20), 20, AccountGate::default()).is_ok(), "the live ticket still works");
        // Used now: the same again is used, a variant of it in any byte but the key's is unknown.
        assert_eq!(s.claim(live.as_bytes(), t(30), 30, AccountGate::default()), Err(ResumeError::Used));
        for at in (0..8).chain(16..24) {
            let mut variant = live.as_bytes().to_vec();
            variant[at] ^= 0x5a;
            assert_eq!(s.claim(&variant, t(40), 40, AccountGate::default()), Err(ResumeError::Invalid), "byte {at}");
        }
        assert_eq!(std::mem::size_of::<(u64, Issued)>(), 24, "a ticket's table entry");
    }

    #[test]
    fn a_connected_players_old_ticket_stays_valid_and_a_replaced_one_is_used() {
        let mut s = LocalSessions::new(1_000);
        let first = t(0);
        s.issue(PlayerId(1), &"a".into(), first, 0, 0, None);
        s.expire(50_000);
        let moved = t(50_000);
        s.issue(PlayerId(1), &"a".into(), moved, 0, 50_000, None);
        assert_eq!(s.claim(first.as_bytes(), t(50_001), 50_001, AccountGate::default()), Err(ResumeError::Used));
        assert!(s.claim(moved.as_bytes(), t(50_002), 50_002, AccountGate::default()).is_ok());
    }

    #[test]
    fn used_tickets_and_parked_sessions_end_after_the_ttl_whatever_came_between() {
        let mut s = LocalSessions::new(1_000);
        let (a, b, c) = (t(0), t(100), t(0));
        s.issue(PlayerId(1), &"a".into(), a, 0, 0, None);
        s.issue(PlayerId(2), &"c".into(), c, 0, 0, None);
        // Nothing parked, nothing used: connected players never expire.
        s.expire(10_000);
        assert_eq!((s.sessions.len(), s.tickets.len()), (2, 2));
        s.claim(a.as_bytes(), b, 100, AccountGate::default()).expect("claimed");
        s.park(PlayerId(2), (1.0, 2.0), 500);
        assert_eq!(s.claim(a.as_bytes(), t(1_050), 1_050, AccountGate::default()), Err(ResumeError::Used));
        // A was used at 100: forgotten after 1,100 (refused now as an old
        // ticket, not as a used one).
        assert_eq!(s.claim(a.as_bytes(), t(1_200), 1_200, AccountGate::default()), Err(ResumeError::Expired));
        // C's session, parked at 500, ends at 1,500.
        s.expire(1_499);
        assert!(s.sessions.contains_key(&PlayerId(2)));
        s.expire(1_500);
        assert!(!s.sessions.contains_key(&PlayerId(2)), "parked past its TTL");
        assert_eq!(s.claim(c.as_bytes(), t(1_600), 1_600, AccountGate::default()), Err(ResumeError::Expired));
        assert_eq!(s.next_expiry_ms, u64::MAX, "only connected player 1 is left: nothing to expire");
    }
}
