//! One player's entry in a snapshot or a cell: 10 bytes on the wire
//! ([`wire::PlayerState`]): the id, the quantized position, the heading and
//! the flags (walking; the last input applied, for client-side prediction).

use crate::ids::PlayerId;
use crate::quantize;
use crate::wire;

/// Bit 0 of [`wire::PlayerState::flags`]: the player is walking
/// (`EntryFlag.Moving` of the schema, which the browser client reads too).
pub const FLAG_MOVING: u8 = wire::EntryFlag::Moving.0;

/// Bits 1-7 of [`wire::PlayerState::flags`]: the low 7 bits of the last
/// `Input.seq` applied for the player, shifted left by this
/// (`EntryFlagShift.InputSeqShift` of the schema).
pub const INPUT_SEQ_SHIFT: u8 = wire::EntryFlagShift::InputSeqShift.0;

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
        self.quantized(bounds).to_wire()
    }

    /// The quantized state over `bounds`.
    pub fn quantized(&self, bounds: &wire::Bounds) -> Entry {
        let (x, y) = quantize::position(bounds, self.x, self.y);
        Entry { id: self.id, x, y, heading: self.heading, flags: flags(self.moving, self.input_seq) }
    }
}

/// The flags byte of a player walking or not, with input `input_seq`
/// (low 7 bits) applied last.
pub fn flags(moving: bool, input_seq: u8) -> u8 {
    (input_seq << INPUT_SEQ_SHIFT) | if moving { FLAG_MOVING } else { 0 }
}

/// One player's state exactly as the wire carries it: the id, the position
/// on the 16-bit grid over the world's bounds, the heading and the flags.
/// The simulation keeps players in this form (see [`crate::motion`]), so
/// what a socket is sent is what the server holds, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The player.
    pub id: PlayerId,
    /// Quantized position, `0..=65535` over the bounds' x span.
    pub x: u16,
    /// Quantized position, `0..=65535` over the bounds' y span.
    pub y: u16,
    /// Facing, 0..=255 (a full turn, counter-clockwise from +x).
    pub heading: u8,
    /// Bit 0: walking ([`FLAG_MOVING`]); bits 1-7: the last input applied.
    pub flags: u8,
}

impl Entry {
    /// Walking this tick.
    pub fn moving(&self) -> bool {
        self.flags & FLAG_MOVING != 0
    }

    /// The low 7 bits of the last Input.seq applied.
    pub fn input_seq(&self) -> u8 {
        input_seq(self.flags)
    }

    /// The wire struct (10 bytes).
    pub fn to_wire(&self) -> wire::PlayerState {
        wire::PlayerState::new(self.id.0 as u16, (self.id.0 >> 16) as u16, self.x, self.y, self.heading, self.flags)
    }

    /// The state a wire struct carries.
    pub fn from_wire(p: &wire::PlayerState) -> Entry {
        Entry { id: player_id(p), x: p.x(), y: p.y(), heading: p.heading(), flags: p.flags() }
    }

    /// Position in world units over `bounds`.
    pub fn position(&self, bounds: &wire::Bounds) -> (f32, f32) {
        quantize::world_position(bounds, self.x, self.y)
    }
}

/// Player id of an entry.
pub fn player_id(p: &wire::PlayerState) -> PlayerId {
    PlayerId(p.id_lo() as u32 | (p.id_hi() as u32) << 16)
}
