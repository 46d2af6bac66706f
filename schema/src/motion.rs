//! The movement rule, integer-exact: how far a walking player moves in one
//! tick, in the wire's quantized units, so that the server's simulation, the
//! delta frames' prediction and the browser compute the same positions bit
//! for bit.
//!
//! A player stands on the 16-bit grid a [`wire::PlayerState`] carries
//! (`0..=65535` over the world's bounds on each axis) and faces one of 256
//! headings. Each tick a walking player moves by its heading's **step**, a
//! fixed integer vector, and each axis is clamped to `0..=65535` (a player
//! walking into a wall slides along it). So a walker's position after `n`
//! ticks of one heading is `clamp(start + n × step)`, per axis, exactly: the
//! delta frames predict it and send nothing while it walks straight.
//!
//! The step of heading `h` is `round(cos(h × 2π/256) × s_x)` and
//! `round(sin(h × 2π/256) × s_y)`, where `s` is the walking speed in
//! quantized units a tick (`speed / tick_hz × 65535 / span`, per axis). The
//! cosine and sine are evaluated with a fixed polynomial in IEEE-754 doubles
//! using only `+`, `×` and exact sign flips (no library `sin`/`cos`, whose
//! last bit differs between platforms), in one order, so the browser's
//! `net/motion.ts` gets the same table; `schema/fixtures/motion.json` pins it
//! and both languages test against it. Rounding is half away from zero.
//!
//! Source: the quantized-domain simulation the research note recommends
//! (`research/bandwidth.md` §5.3: "if the server simulates in the quantized
//! domain, a walker's residual is exactly 0 between turns").

use crate::wire::Bounds;

/// The largest quantized coordinate (the wire's 16 bits).
pub const Q_MAX: u16 = u16::MAX;

/// Headings a player can face (a full turn, counter-clockwise from +x).
pub const HEADINGS: usize = 256;

/// The per-tick step of every heading for one world, speed and tick rate.
#[derive(Clone, PartialEq, Eq)]
pub struct Motion {
    steps: Box<[(i32, i32); HEADINGS]>,
}

impl std::fmt::Debug for Motion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Motion").field("step_0", &self.steps[0]).field("step_64", &self.steps[64]).finish()
    }
}

impl Motion {
    /// The rule of a world spanning `bounds` (world units, as the Welcome
    /// gives them), where players walk at `speed` world units a second and
    /// the shard ticks at `tick_hz`. A zero-width axis or a zero rate moves
    /// nobody along it.
    pub fn new(bounds: &Bounds, speed: f32, tick_hz: u16) -> Motion {
        let per_tick = |span: f32| {
            let span = f64::from(span);
            if span > 0.0 && tick_hz > 0 && speed.is_finite() {
                f64::from(speed) * 65535.0 / f64::from(tick_hz) / span
            } else {
                0.0
            }
        };
        let sx = per_tick(bounds.max_x() - bounds.min_x());
        let sy = per_tick(bounds.max_y() - bounds.min_y());
        let mut steps = Box::new([(0, 0); HEADINGS]);
        for (h, step) in steps.iter_mut().enumerate() {
            let (c, s) = unit(h as u8);
            *step = (round_half_away(c * sx), round_half_away(s * sy));
        }
        Motion { steps }
    }

    /// The step of `heading`, quantized units a tick (x, y).
    pub fn step(&self, heading: u8) -> (i32, i32) {
        self.steps[usize::from(heading)]
    }

    /// Where a player at `at` stands after `ticks` ticks facing `heading`,
    /// walking if `moving` (else it stays), each axis clamped to the grid.
    pub fn advance(&self, at: (u16, u16), heading: u8, moving: bool, ticks: u32) -> (u16, u16) {
        if !moving || ticks == 0 {
            return at;
        }
        let (sx, sy) = self.step(heading);
        let n = i64::from(ticks);
        (axis(at.0, sx, n), axis(at.1, sy, n))
    }
}

/// `from + n × step`, clamped to the grid.
fn axis(from: u16, step: i32, n: i64) -> u16 {
    (i64::from(from) + i64::from(step) * n).clamp(0, i64::from(Q_MAX)) as u16
}

/// `v` rounded to the nearest integer, halves away from zero (the same
/// formula in the browser: `floor(|v| + 0.5)` with the sign put back).
fn round_half_away(v: f64) -> i32 {
    let r = (v.abs() + 0.5).floor();
    let r = if v < 0.0 { -r } else { r };
    r.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
}

/// Cosine and sine of heading `h` (`h × 2π / 256`), from the polynomials of
/// one octant and exact symmetries.
fn unit(h: u8) -> (f64, f64) {
    let quadrant = h / 64;
    let r = h % 64;
    let (c, s) = if r <= 32 {
        let x = f64::from(r) * (std::f64::consts::PI / 128.0);
        (cos_octant(x), sin_octant(x))
    } else {
        let x = f64::from(64 - r) * (std::f64::consts::PI / 128.0);
        (sin_octant(x), cos_octant(x))
    };
    match quadrant {
        0 => (c, s),
        1 => (-s, c),
        2 => (-c, -s),
        _ => (s, -c),
    }
}

/// sin(x) for x in [0, π/4]: its Taylor series to x^13 (error under 1e-13),
/// in Horner form.
fn sin_octant(x: f64) -> f64 {
    let x2 = x * x;
    let p = 1.0 / 6227020800.0;
    let p = -1.0 / 39916800.0 + x2 * p;
    let p = 1.0 / 362880.0 + x2 * p;
    let p = -1.0 / 5040.0 + x2 * p;
    let p = 1.0 / 120.0 + x2 * p;
    let p = -1.0 / 6.0 + x2 * p;
    let p = 1.0 + x2 * p;
    x * p
}

/// cos(x) for x in [0, π/4]: its Taylor series to x^14, in Horner form.
fn cos_octant(x: f64) -> f64 {
    let x2 = x * x;
    let p = -1.0 / 87178291200.0;
    let p = 1.0 / 479001600.0 + x2 * p;
    let p = -1.0 / 3628800.0 + x2 * p;
    let p = 1.0 / 40320.0 + x2 * p;
    let p = -1.0 / 720.0 + x2 * p;
    let p = 1.0 / 24.0 + x2 * p;
    let p = -1.0 / 2.0 + x2 * p;
    1.0 + x2 * p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world(side: f32) -> Bounds {
        Bounds::new(0.0, 0.0, side, side)
    }

    #[test]
    fn the_polynomials_match_the_library_within_a_hair() {
        for h in 0..=255u8 {
            let (c, s) = unit(h);
            let a = f64::from(h) * std::f64::consts::TAU / 256.0;
            assert!((c - a.cos()).abs() < 1e-12 && (s - a.sin()).abs() < 1e-12, "heading {h}: {c} {s}");
        }
    }

    #[test]
    fn a_step_is_the_speed_in_quantized_units() {
        // 120 units/s at 20 Hz is 6 units a tick; over 1,000 units that is
        // 6 × 65.535 = 393.21 quantized units.
        let m = Motion::new(&world(1000.0), 120.0, 20);
        assert_eq!(m.step(0), (393, 0));
        assert_eq!(m.step(64), (0, 393));
        assert_eq!(m.step(128), (-393, 0));
        assert_eq!(m.step(192), (0, -393));
        assert_eq!(m.step(32), (278, 278), "45 degrees: 393.21 / sqrt 2 = 278.04");
        for h in 0..=255u8 {
            let (x, y) = m.step(h);
            let len = f64::from(x).hypot(f64::from(y));
            assert!((len - 393.21).abs() < 0.71, "heading {h}: length {len}");
        }
    }

    #[test]
    fn walking_n_ticks_is_n_steps_clamped_per_axis() {
        let m = Motion::new(&world(1000.0), 120.0, 20);
        let mut at = (65_000u16, 100u16);
        for _ in 0..5 {
            at = m.advance(at, 32, true, 1);
        }
        assert_eq!(at, (65_535, 100 + 5 * 278), "slides along the east wall");
        assert_eq!(m.advance((65_000, 100), 32, true, 5), at, "one call for five ticks");
        assert_eq!(m.advance((1, 2), 200, false, 9), (1, 2), "standing");
    }

    #[test]
    fn a_degenerate_world_moves_nobody() {
        let m = Motion::new(&Bounds::new(5.0, 0.0, 5.0, 10.0), 120.0, 20);
        assert_eq!(m.step(0).0, 0);
        let still = Motion::new(&world(100.0), 120.0, 0);
        assert_eq!(still.step(10), (0, 0));
    }
}
