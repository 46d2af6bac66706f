//! A bot's observable status: its [`BotState`] and what it last learned
//! (player id, position, welcomes, close code) and received (bytes, cell
//! bytes), written by the bot and its session, readable from other tasks (the
//! swarm, the scenarios, tests) while it runs.

use crate::event::Welcomed;
use mino_protocol::PlayerId;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

/// Where a bot is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BotState {
    /// Connecting or waiting for Welcome.
    Joining = 0,
    /// Welcomed and in a session.
    Connected = 1,
    /// Refused with Busy and waiting to retry.
    Busy = 2,
    /// Waiting before a reconnect after a failure.
    Retrying = 3,
    /// Done for good.
    Stopped = 4,
}

/// A bot's state, readable from other tasks while it runs.
#[derive(Debug, Default)]
pub struct BotShared {
    state: AtomicU8,
    player_id: AtomicU32,
    /// Welcomes received (high 32 bits) and the latest Welcome's shard (low
    /// 32 bits), in one word so that a reader never sees one without the
    /// other ([`BotShared::welcome`]).
    welcome: AtomicU64,
    x: AtomicU32,
    y: AtomicU32,
    has_position: AtomicBool,
    close_code: AtomicU32,
    ever_welcomed: AtomicBool,
    ever_busy: AtomicBool,
    bytes: AtomicU64,
    cell_bytes: AtomicU64,
}

impl BotShared {
    /// Current state.
    pub fn state(&self) -> BotState {
        match self.state.load(Relaxed) {
            0 => BotState::Joining,
            1 => BotState::Connected,
            2 => BotState::Busy,
            3 => BotState::Retrying,
            _ => BotState::Stopped,
        }
    }

    pub(crate) fn set_state(&self, s: BotState) {
        self.state.store(s as u8, Relaxed);
    }

    /// True while in a welcomed session.
    pub fn is_connected(&self) -> bool {
        self.state() == BotState::Connected
    }

    /// The player id of the latest Welcome.
    pub fn player_id(&self) -> Option<PlayerId> {
        match self.player_id.load(Relaxed) {
            0 => None,
            id => Some(PlayerId(id)),
        }
    }

    /// The shard of the latest Welcome (0 before any).
    pub fn shard_id(&self) -> u32 {
        self.welcome().1
    }

    /// Welcomes received so far and the shard of the latest (0 before any),
    /// read together: a Welcome arriving meanwhile is seen whole or not at all.
    pub fn welcome(&self) -> (u32, u32) {
        let w = self.welcome.load(Relaxed);
        ((w >> 32) as u32, w as u32)
    }

    /// The bot's last position seen in its own shard's snapshot, world units.
    pub fn position(&self) -> Option<(f32, f32)> {
        self.has_position
            .load(Relaxed)
            .then(|| (f32::from_bits(self.x.load(Relaxed)), f32::from_bits(self.y.load(Relaxed))))
    }

    pub(crate) fn set_position(&self, (x, y): (f32, f32)) {
        self.x.store(x.to_bits(), Relaxed);
        self.y.store(y.to_bits(), Relaxed);
        self.has_position.store(true, Relaxed);
    }

    /// The close code of the latest session the server closed.
    pub fn close_code(&self) -> Option<u16> {
        match self.close_code.load(Relaxed) {
            0 => None,
            c => Some(c as u16),
        }
    }

    /// Records the close code of a session the server closed.
    pub(crate) fn set_close_code(&self, code: u16) {
        self.close_code.store(u32::from(code), Relaxed);
    }

    /// Whether the bot was ever welcomed.
    pub fn ever_welcomed(&self) -> bool {
        self.ever_welcomed.load(Relaxed)
    }

    /// Whether the bot was ever refused with Busy.
    pub fn ever_busy(&self) -> bool {
        self.ever_busy.load(Relaxed)
    }

    /// Records a Busy refusal.
    pub(crate) fn refused_busy(&self) {
        self.ever_busy.store(true, Relaxed);
    }

    /// Welcomes received (first join plus resumes and rejoins).
    pub fn welcomes(&self) -> u32 {
        self.welcome().0
    }

    /// Records a Welcome: its player id and position, and the Connected state.
    pub(crate) fn welcomed(&self, w: &Welcomed) {
        self.player_id.store(w.player_id.0, Relaxed);
        self.set_position(w.position);
        self.ever_welcomed.store(true, Relaxed);
        // Only the bot's own task writes: a load and a store suffice.
        let count = u64::from(self.welcomes().wrapping_add(1));
        self.welcome.store(count << 32 | u64::from(w.shard_id.0), Relaxed);
        self.set_state(BotState::Connected);
    }

    /// Payload bytes of every message received in all sessions so far, bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Relaxed)
    }

    /// Of [`BotShared::bytes`], those of cells (area of interest), bytes.
    pub fn cell_bytes(&self) -> u64 {
        self.cell_bytes.load(Relaxed)
    }

    /// Counts one received message of `n` payload bytes.
    pub(crate) fn received(&self, n: usize) {
        self.bytes.fetch_add(n as u64, Relaxed);
    }

    /// Counts `n` bytes of received cells (a view frame's).
    pub(crate) fn received_cells(&self, n: usize) {
        self.cell_bytes.fetch_add(n as u64, Relaxed);
    }
}
