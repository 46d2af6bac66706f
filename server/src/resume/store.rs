//! Clustered resume: sessions and tickets in Redis, with a TTL.
//!
//! - `ticket:<hex>` holds the player id (or `used:<id>` once claimed);
//! - `session:<player>` is a hash: `owner` (shard id, 8 hex digits), `gen`
//!   (raised by every claim), `name`, `ticket` (its current ticket), `x`,
//!   `y` where the player left its owner (cleared by each claim), and `sx`,
//!   `sy` where it was placed when last welcomed;
//! - `lastsnap:<shard>` is the shard's newest snapshot (written by its publisher).
//!
//! A claim is one Lua script (one round trip), so two shards claiming one
//! ticket at once cannot both win: the ticket is marked used, the session moves
//! to the claiming shard with the next generation and a fresh ticket, a
//! takeover notice goes to the old owner on the control channel (it drops the
//! player and closes its socket with "session replaced"), and the script
//! returns the old owner's last snapshot, from which the player's position is
//! read. Every key a script touches, and the control channel it publishes
//! on (`SPUBLISH` on a Redis Cluster, passed in as an argument), carry the
//! place's hash tag: each script runs within one slot. A shard
//! that was paused checks its players' `owner` and `gen` before it publishes
//! again ([`SessionStore::lost`]) and drops those claimed elsewhere.

use super::{AccountGate, Claimed, ResumeError, Ticket};
use crate::backplane::{Backplane, Keys, RedisError};
use mino_protocol::server::{decode, player_id, ServerMsg};
use mino_protocol::{quantize, PlayerId, ShardId};
use redis::Value;
use std::time::Duration;

/// Sets fields of a session only while it is still one shard's at one
/// generation (never creates one): KEYS[1] the session; ARGV: the shard
/// (`owner`, 8 hex digits), the generation (`gen`), then field, value,
/// field, value... A shard's writes to a session after its claim (where the
/// player was placed: `sx`, `sy`; where it left: `x`, `y`, the publisher's
/// park) may land after another shard's claim of the player, whose resume
/// would then take this stale position over the player's newer one.
pub const WRITE_IF_HELD: &str = r"
local s = redis.call('HMGET', KEYS[1], 'owner', 'gen')
if s[1] == ARGV[1] and s[2] == ARGV[2] then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) end";

/// A drain's fresh ticket for a session this shard owns: KEYS the session,
/// the new ticket's key, the old one's; ARGV this shard (8 hex digits), the
/// new ticket, the TTL (ms), the player, the old ticket's "used:" mark.
/// Returns 1 when stored; 0 when the session has no owner (Redis lost it:
/// written alone, the ticket would make a session no claim can take, and
/// the restore that writes it again whole would find it there and skip it);
/// 2 when another shard owns it (nothing written).
const REISSUE: &str = r"
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner then return 0 end
if owner ~= ARGV[1] then return 2 end
local ttl = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'ticket', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('SET', KEYS[2], ARGV[4], 'PX', ttl)
redis.call('SET', KEYS[3], ARGV[5], 'PX', ttl)
return 1
";

/// What [`SessionStore::reissue`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reissued {
    /// The fresh ticket is the session's.
    Stored,
    /// The session is not in Redis (lost with a restart, not yet written
    /// again): nothing written; ask again once it is.
    NoSession,
    /// Another shard owns the session (the player resumed there): nothing
    /// written.
    NotOurs,
}

const CLAIM: &str = r"
local v = redis.call('GET', KEYS[1])
if not v then return {'missing'} end
if string.sub(v, 1, 5) == 'used:' then return {'used'} end
local skey = ARGV[1] .. 'session:' .. v
local s = redis.call('HMGET', skey, 'owner', 'gen', 'name', 'ticket', 'x', 'y', 'sx', 'sy', 'account')
if not s[1] then return {'missing'} end
if s[4] ~= ARGV[5] then return {'used'} end
local account = s[9] or ''
if ARGV[6] ~= '' and account ~= ARGV[6] then return {'other_account'} end
if ARGV[6] == '' and ARGV[7] == '1' and account == '' then return {'guest'} end
redis.call('SET', KEYS[1], 'used:' .. v, 'PX', ARGV[4])
local gen = tonumber(s[2]) + 1
redis.call('HSET', skey, 'owner', ARGV[2], 'gen', gen, 'ticket', ARGV[3])
redis.call('HDEL', skey, 'x', 'y')
redis.call('PEXPIRE', skey, ARGV[4])
redis.call('SET', ARGV[1] .. 'ticket:' .. ARGV[3], v, 'PX', ARGV[4])
local snap = redis.call('GET', ARGV[1] .. 'lastsnap:' .. s[1])
if s[1] ~= ARGV[2] then
  redis.call(ARGV[8], ARGV[1] .. 'control', 'takeover ' .. v .. ' ' .. gen .. ' ' .. ARGV[2])
end
return {'ok', v, s[3], s[1], tostring(gen), snap, s[5], s[6], s[7], s[8], account}
";

/// Keeps a connected player's session, ticket and account key from
/// expiring and, after Redis lost this shard's keys (ARGV[8] '1': restarted
/// empty), writes again those it lost: KEYS: the session, the ticket, the
/// account key (a signed-in player's only); ARGV: the TTL (ms), this shard,
/// the session's generation, the name, the ticket (hex), the player id, the
/// account ('' for a guest), whether to restore. A session that is there is
/// not rewritten, and its ticket and account key are written again only
/// while it is this shard's with that ticket (a player claimed elsewhere
/// meanwhile keeps the claim's). Only after a loss: a session missing
/// otherwise was ended on purpose (an operator's kick), and stays ended.
/// Returns 1 when something was written again.
const KEEP: &str = r"
local ttl = tonumber(ARGV[1])
local wrote = 0
if ARGV[8] ~= '1' then
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ttl) end
  return 0
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'gen', ARGV[3], 'name', ARGV[4], 'ticket', ARGV[5])
  if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'account', ARGV[7]) end
  wrote = 1
end
redis.call('PEXPIRE', KEYS[1], ttl)
local s = redis.call('HMGET', KEYS[1], 'owner', 'ticket')
if s[1] == ARGV[2] and s[2] == ARGV[5] then
  for i = 2, #KEYS do
    if redis.call('EXISTS', KEYS[i]) == 0 then
      redis.call('SET', KEYS[i], ARGV[6], 'PX', ttl)
      wrote = 1
    end
  end
end
for i = 2, #KEYS do redis.call('PEXPIRE', KEYS[i], ttl) end
return wrote
";

/// An account signs in (KEYS[1]: the account key; ARGV: key prefix, this
/// shard, the next ticket, the TTL in ms, the display name, the account,
/// a player id to use when the account has no session, and the publish
/// command). Its live
/// session is taken over as a claim would (the old owner told on the
/// control channel); else a session is made for it under the given id.
const LOGIN: &str = r"
local v = redis.call('GET', KEYS[1])
if v then
  local skey = ARGV[1] .. 'session:' .. v
  local s = redis.call('HMGET', skey, 'owner', 'gen', 'name', 'ticket', 'x', 'y', 'sx', 'sy', 'account')
  if s[1] and s[9] == ARGV[6] then
    redis.call('SET', ARGV[1] .. 'ticket:' .. s[4], 'used:' .. v, 'PX', ARGV[4])
    local gen = tonumber(s[2]) + 1
    redis.call('HSET', skey, 'owner', ARGV[2], 'gen', gen, 'ticket', ARGV[3], 'name', ARGV[5])
    redis.call('HDEL', skey, 'x', 'y')
    redis.call('PEXPIRE', skey, ARGV[4])
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
    redis.call('SET', ARGV[1] .. 'ticket:' .. ARGV[3], v, 'PX', ARGV[4])
    local snap = redis.call('GET', ARGV[1] .. 'lastsnap:' .. s[1])
    if s[1] ~= ARGV[2] then
      redis.call(ARGV[8], ARGV[1] .. 'control', 'takeover ' .. v .. ' ' .. gen .. ' ' .. ARGV[2])
    end
    return {'ok', v, ARGV[5], s[1], tostring(gen), snap, s[5], s[6], s[7], s[8], ARGV[6]}
  end
end
local id = ARGV[7]
local skey = ARGV[1] .. 'session:' .. id
redis.call('HSET', skey, 'owner', ARGV[2], 'gen', 0, 'name', ARGV[5], 'ticket', ARGV[3], 'account', ARGV[6])
redis.call('PEXPIRE', skey, ARGV[4])
redis.call('SET', ARGV[1] .. 'ticket:' .. ARGV[3], id, 'PX', ARGV[4])
redis.call('SET', KEYS[1], id, 'PX', ARGV[4])
return {'new', id}
";

/// What a shard knows of one of its players' sessions, to keep it in Redis
/// ([`SessionStore::refresh`]).
#[derive(Clone, Copy, Debug)]
pub struct Kept<'a> {
    /// Who.
    pub player: PlayerId,
    /// Its current ticket.
    pub ticket: Ticket,
    /// Its account, if signed in.
    pub account: Option<&'a str>,
    /// Its name.
    pub name: &'a str,
    /// The session's generation this shard holds it at.
    pub generation: u64,
    /// Redis lost this shard's keys: write again what is missing (else
    /// only renew).
    pub restore: bool,
}

/// Sessions of a place in Redis, as one shard uses them.
#[derive(Clone)]
pub struct SessionStore {
    backplane: Backplane,
    keys: Keys,
    ttl: Duration,
    me: ShardId,
}

impl SessionStore {
    /// A store for shard `me`; sessions and tickets live `ttl` after their
    /// last refresh.
    pub fn new(backplane: Backplane, ttl: Duration, me: ShardId) -> SessionStore {
        SessionStore { keys: backplane.keys().clone(), backplane, ttl, me }
    }

    fn ttl_ms(&self) -> u64 {
        self.ttl.as_millis() as u64
    }

    /// Records a new player's session and ticket, placed at `position`.
    ///
    /// Errors: Redis unreachable (the player plays on but cannot resume).
    pub async fn register(
        &self,
        player: PlayerId,
        name: &str,
        ticket: Ticket,
        position: (f32, f32),
    ) -> Result<(), RedisError> {
        let (skey, tkey, ttl) = (self.keys.session(player), self.keys.ticket(&ticket.hex()), self.ttl_ms());
        let owner = self.me.to_string();
        let (sx, sy) = (position.0.to_string(), position.1.to_string());
        let fields = [("owner", owner.as_str()), ("gen", "0"), ("name", name), ("ticket", &ticket.hex())];
        let mut pipe = redis::pipe();
        pipe.atomic()
            .hset_multiple(&skey, &fields)
            .ignore()
            .hset_multiple(&skey, &[("sx", sx.as_str()), ("sy", sy.as_str())])
            .ignore()
            .pexpire(&skey, ttl as i64)
            .ignore()
            .set_options(&tkey, player.0, redis::SetOptions::default().with_expiration(redis::SetExpiry::PX(ttl)))
            .ignore();
        self.backplane.pipe::<()>(&pipe).await
    }

    /// Gives a session this shard owns a fresh ticket (a Move on drain); the
    /// old one can no longer be claimed ([`REISSUE`]).
    ///
    /// Errors: Redis unreachable.
    pub async fn reissue(&self, player: PlayerId, old: Ticket, next: Ticket) -> Result<Reissued, RedisError> {
        let script = redis::Script::new(REISSUE);
        let mut inv = script.prepare_invoke();
        inv.key(self.keys.session(player)).key(self.keys.ticket(&next.hex())).key(self.keys.ticket(&old.hex()));
        inv.arg(self.me.to_string()).arg(next.hex()).arg(self.ttl_ms()).arg(player.0).arg(format!("used:{}", player.0));
        let answer: i64 = self.backplane.script(&inv).await?;
        Ok(match answer {
            1 => Reissued::Stored,
            0 => Reissued::NoSession,
            _ => Reissued::NotOurs,
        })
    }

    /// Records where a resumed player was placed (if its session is still
    /// this shard's at the claim's `generation`), so a resume elsewhere finds
    /// it there until a snapshot lists it.
    ///
    /// Errors: Redis unreachable.
    pub async fn placed(&self, player: PlayerId, position: (f32, f32), generation: u64) -> Result<(), RedisError> {
        let script = redis::Script::new(WRITE_IF_HELD);
        let mut inv = script.prepare_invoke();
        inv.key(self.keys.session(player)).arg(self.me.to_string()).arg(generation);
        inv.arg("sx").arg(position.0).arg("sy").arg(position.1);
        self.backplane.script::<()>(&inv).await
    }

    /// Keeps a connected player's session and ticket (and its account's
    /// entry) from expiring, and writes again what of them Redis lost (see
    /// [`KEEP`]); true when something was written again.
    ///
    /// Errors: Redis unreachable.
    pub async fn refresh(&self, kept: &Kept<'_>) -> Result<bool, RedisError> {
        let script = redis::Script::new(KEEP);
        let mut inv = script.prepare_invoke();
        inv.key(self.keys.session(kept.player)).key(self.keys.ticket(&kept.ticket.hex()));
        if let Some(account) = kept.account {
            inv.key(self.keys.account(account));
        }
        inv.arg(self.ttl_ms())
            .arg(self.me.to_string())
            .arg(kept.generation)
            .arg(kept.name)
            .arg(kept.ticket.hex())
            .arg(kept.player.0)
            .arg(kept.account.unwrap_or(""))
            .arg(if kept.restore { "1" } else { "0" });
        self.backplane.script::<u8>(&inv).await.map(|wrote| wrote == 1)
    }

    /// Claims the session `bytes` names for this shard, with `next` as its new
    /// ticket, as `gate` allows (nothing changes when it refuses). `now_ms`
    /// tells an expired ticket from a forged one.
    ///
    /// Errors: [`ResumeError`]: invalid, used, expired, another account's,
    /// a guest's when guests are refused, or unavailable (Redis).
    pub async fn claim(
        &self,
        bytes: &[u8],
        next: Ticket,
        now_ms: u64,
        gate: AccountGate<'_>,
    ) -> Result<Claimed, ResumeError> {
        let ticket = Ticket::parse(bytes).ok_or(ResumeError::Invalid)?;
        let script = redis::Script::new(CLAIM);
        let mut inv = script.prepare_invoke();
        inv.key(self.keys.ticket(&ticket.hex()))
            .arg(self.keys.prefix())
            .arg(self.me.to_string())
            .arg(next.hex())
            .arg(self.ttl_ms())
            .arg(ticket.hex())
            .arg(gate.account.unwrap_or(""))
            .arg(if gate.require { "1" } else { "0" })
            .arg(self.backplane.publish_command());
        let reply: Value = self.backplane.script(&inv).await.map_err(|_| ResumeError::Unavailable)?;
        let Value::Array(items) = reply else { return Err(ResumeError::Unavailable) };
        match text(&items, 0).as_str() {
            "ok" => {}
            "used" => return Err(ResumeError::Used),
            "other_account" => return Err(ResumeError::OtherAccount),
            "guest" => return Err(ResumeError::GuestSession),
            _ if ticket.expired(self.ttl_ms(), now_ms) => return Err(ResumeError::Expired),
            _ => return Err(ResumeError::Invalid),
        }
        self.claimed(&items, next)
    }

    /// An account signs in on this shard: its live session, wherever it is,
    /// is taken over (the old socket is told "session replaced"), or a new
    /// session is made for it as player `new_player` (fresh).
    ///
    /// Errors: [`ResumeError::Unavailable`] when Redis cannot be asked.
    pub async fn login(
        &self,
        account: &str,
        name: &str,
        next: Ticket,
        new_player: PlayerId,
    ) -> Result<Claimed, ResumeError> {
        let script = redis::Script::new(LOGIN);
        let mut inv = script.prepare_invoke();
        inv.key(self.keys.account(account))
            .arg(self.keys.prefix())
            .arg(self.me.to_string())
            .arg(next.hex())
            .arg(self.ttl_ms())
            .arg(name)
            .arg(account)
            .arg(new_player.0)
            .arg(self.backplane.publish_command());
        let reply: Value = self.backplane.script(&inv).await.map_err(|_| ResumeError::Unavailable)?;
        let Value::Array(items) = reply else { return Err(ResumeError::Unavailable) };
        match text(&items, 0).as_str() {
            "ok" => self.claimed(&items, next),
            "new" => Ok(Claimed::fresh_account(new_player, name, next, account)),
            _ => Err(ResumeError::Unavailable),
        }
    }

    /// The session a claim or a sign-in took over, from the script's reply.
    fn claimed(&self, items: &[Value], next: Ticket) -> Result<Claimed, ResumeError> {
        let text = |i: usize| text(items, i);
        let player = PlayerId(text(1).parse().map_err(|_| ResumeError::Invalid)?);
        let owner = u32::from_str_radix(&text(3), 16).map(ShardId).ok();
        let generation = text(4).parse().unwrap_or(1);
        // Where the player left its owner (parked since the last claim, so never
        // older than the owner's snapshots, which lag when its publisher does);
        // else where that owner last simulated it.
        let parked = match (text(6).parse::<f32>(), text(7).parse::<f32>()) {
            (Ok(x), Ok(y)) if x.is_finite() && y.is_finite() => Some((x, y)),
            _ => None,
        };
        // Else where it was placed when welcomed (a player killed within a
        // tick of its welcome is in no snapshot yet).
        let placed = match (text(8).parse::<f32>(), text(9).parse::<f32>()) {
            (Ok(x), Ok(y)) if x.is_finite() && y.is_finite() => Some((x, y)),
            _ => None,
        };
        let position = parked
            .or_else(|| match items.get(5) {
                Some(Value::BulkString(snap)) => position_in(snap, player),
                _ => None,
            })
            .or(placed);
        Ok(Claimed {
            player,
            name: text(2),
            position,
            generation,
            previous_owner: owner.filter(|o| *o != self.me),
            ticket: next,
            account: Some(text(10)).filter(|a| !a.is_empty()),
            fresh: false,
        })
    }

    /// Of `players` (with the session generation this shard holds), those whose
    /// session another shard (or a later claim) owns now.
    ///
    /// Errors: Redis unreachable (the caller keeps publishing fenced off).
    pub async fn lost(&self, players: &[(PlayerId, u64)]) -> Result<Vec<PlayerId>, RedisError> {
        if players.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for (p, _) in players {
            pipe.cmd("HMGET").arg(self.keys.session(*p)).arg("owner").arg("gen");
        }
        let rows: Vec<(Option<String>, Option<u64>)> = self.backplane.pipe(&pipe).await?;
        let me = self.me.to_string();
        Ok(players
            .iter()
            .zip(rows)
            .filter(|((_, gen), (owner, now_gen))| {
                owner.as_deref().is_some_and(|o| o != me) || now_gen.is_some_and(|g| g > *gen)
            })
            .map(|((p, _), _)| *p)
            .collect())
    }
}

/// Item `i` of a script's reply, as text ("" when absent or not text).
fn text(items: &[Value], i: usize) -> String {
    match items.get(i) {
        Some(Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
        Some(Value::SimpleString(s)) => s.clone(),
        _ => String::new(),
    }
}

/// Parses a control message: `takeover <player> <gen> <new owner hex>`.
pub fn parse_takeover(msg: &str) -> Option<(PlayerId, u64, ShardId)> {
    let mut it = msg.split_ascii_whitespace();
    if it.next()? != "takeover" {
        return None;
    }
    let player = PlayerId(it.next()?.parse().ok()?);
    let gen = it.next()?.parse().ok()?;
    let owner = ShardId(u32::from_str_radix(it.next()?, 16).ok()?);
    Some((player, gen, owner))
}

/// Where `player` stands in a snapshot frame, world units.
pub fn position_in(snapshot: &[u8], player: PlayerId) -> Option<(f32, f32)> {
    let Ok(ServerMsg::Snapshot(s)) = decode(snapshot) else { return None };
    let bounds = s.bounds()?;
    let p = s.players()?.iter().find(|p| player_id(p) == player)?;
    Some(quantize::world_position(bounds, p.x(), p.y()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::snapshot::{PlayerEntry, SnapshotEncoder, SnapshotHeader};
    use mino_protocol::wire::Bounds;
    use mino_protocol::Tick;

    #[test]
    fn takeover_messages_parse() {
        assert_eq!(parse_takeover("takeover 7 3 0000000a"), Some((PlayerId(7), 3, ShardId(10))));
        assert_eq!(parse_takeover("takeover x 3 a"), None);
        assert_eq!(parse_takeover("hello"), None);
    }

    #[test]
    fn position_is_read_from_a_snapshot() {
        let header = SnapshotHeader {
            shard_id: ShardId(1),
            tick: Tick(1),
            server_time_ms: 0,
            tick_hz: 20,
            bounds: Bounds::new(0.0, 0.0, 1000.0, 1000.0),
            cell: 0,
        };
        let snap = SnapshotEncoder::new().encode(
            &header,
            [PlayerEntry { id: PlayerId(5), x: 250.0, y: 750.0, heading: 0, moving: false, input_seq: 0 }],
        );
        let (x, y) = position_in(&snap, PlayerId(5)).expect("found");
        assert!((x - 250.0).abs() < 0.02 && (y - 750.0).abs() < 0.02);
        assert_eq!(position_in(&snap, PlayerId(6)), None);
        assert_eq!(position_in(b"garbage", PlayerId(5)), None);
    }
}
