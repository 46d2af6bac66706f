//! Quantization of positions and headings for [`crate::wire::PlayerState`].
//!
//! Positions are 16-bit fractions of the world's bounds: with the default
//! 1000-unit world one step is 0.0153 world units, far below a pixel. Headings
//! are 8-bit fractions of a full turn (1.41 degrees a step).

use crate::wire::Bounds;
use std::f32::consts::TAU;

/// Quantizes `v` in `[min, max]` (clamped) to `0..=65535`.
pub fn quantize(v: f32, min: f32, max: f32) -> u16 {
    let span = max - min;
    if span <= 0.0 || !v.is_finite() {
        return 0;
    }
    let t = ((v - min) / span).clamp(0.0, 1.0);
    (t * 65535.0 + 0.5) as u16
}

/// Inverse of [`quantize`]: world units.
pub fn dequantize(q: u16, min: f32, max: f32) -> f32 {
    min + (q as f32 / 65535.0) * (max - min)
}

/// Quantizes a world position to `(x, y)` over `bounds`.
pub fn position(bounds: &Bounds, x: f32, y: f32) -> (u16, u16) {
    (quantize(x, bounds.min_x(), bounds.max_x()), quantize(y, bounds.min_y(), bounds.max_y()))
}

/// World position of a quantized `(x, y)` over `bounds`.
pub fn world_position(bounds: &Bounds, x: u16, y: u16) -> (f32, f32) {
    (dequantize(x, bounds.min_x(), bounds.max_x()), dequantize(y, bounds.min_y(), bounds.max_y()))
}

/// Heading of a direction vector as 0..=255 (a full turn, counter-clockwise from +x).
pub fn heading(dx: f32, dy: f32) -> u8 {
    let a = dy.atan2(dx).rem_euclid(TAU);
    ((a / TAU * 256.0).round() as u32 % 256) as u8
}

/// Angle in radians of a quantized heading.
pub fn heading_radians(h: u8) -> f32 {
    h as f32 / 256.0 * TAU
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_round_trips_within_one_step() {
        let (min, max) = (0.0, 1000.0);
        let step = (max - min) / 65535.0;
        for v in [0.0f32, 0.01, 1.0, 333.3, 999.99, 1000.0] {
            let back = dequantize(quantize(v, min, max), min, max);
            assert!((back - v).abs() <= step, "{v} -> {back}");
        }
    }

    #[test]
    fn quantize_clamps_out_of_bounds_and_nan() {
        assert_eq!(quantize(-5.0, 0.0, 10.0), 0);
        assert_eq!(quantize(50.0, 0.0, 10.0), 65535);
        assert_eq!(quantize(f32::NAN, 0.0, 10.0), 0);
    }

    #[test]
    fn heading_covers_the_compass() {
        assert_eq!(heading(1.0, 0.0), 0);
        assert_eq!(heading(0.0, 1.0), 64);
        assert_eq!(heading(-1.0, 0.0), 128);
        assert_eq!(heading(0.0, -1.0), 192);
        assert!((heading_radians(64) - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
    }
}
