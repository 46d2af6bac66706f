//! One player's entry in a snapshot or a cell: 10 bytes on the wire
//! ([`wire::PlayerState`]): the id, the quantized position, the heading and
//! the flags (walking; the last input applied, for client-side prediction).

use crate::ids::PlayerId;
use crate::quantize;
use crate::wire;

/// Bit 0 of [`wire::PlayerState::flags`]: the player is walking.
pub const FLAG_MOVING: u8 = 1;

/// Bits 1-7 of [`wire::PlayerState::flags`]: the low 7 bits of the last
/// `Input.seq` applied for the player, shifted left by one.
pub const INPUT_SEQ_SHIFT: u8 = 1;

/// The input sequence number (low 7 bits) a snapshot entry's flags echo.
pub fn input_seq(flags: u8) -> u8 {
    flags >> INPUT_SEQ_SHIFT
}

/// One player's state in world units, before quantization.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayerEntry {
    /// The player.
    pub id: PlayerId,
    /// Position, world units.
    pub x: f32,
    /// Position, world units.
    pub y: f32,
    /// Facing, radians-free 0..=255 (see [`quantize::heading`]).
    pub heading: u8,
    /// Walking this tick.
    pub moving: bool,
    /// The low 7 bits of the last Input.seq applied.
    pub input_seq: u8,
}

impl PlayerEntry {
    /// The quantized wire form over `bounds`.
    pub fn to_wire(&self, bounds: &wire::Bounds) -> wire::PlayerState {
        let (x, y) = quantize::position(bounds, self.x, self.y);
        wire::PlayerState::new(
            self.id.0 as u16,
            (self.id.0 >> 16) as u16,
            x,
            y,
            self.heading,
            (self.input_seq << INPUT_SEQ_SHIFT) | if self.moving { FLAG_MOVING } else { 0 },
        )
    }
}

/// Player id of an entry.
pub fn player_id(p: &wire::PlayerState) -> PlayerId {
    PlayerId(p.id_lo() as u32 | (p.id_hi() as u32) << 16)
}
