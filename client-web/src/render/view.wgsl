// The view uniform shared by every pipeline (written by render/camera.ts).
struct View {
  // View centre, world units.
  center: vec2f,
  // Clip-space units per world unit, x and y.
  scale: vec2f,
  // World bounds, world units.
  bounds_min: vec2f,
  bounds_max: vec2f,
  // Canvas size, device pixels.
  viewport: vec2f,
  // Body radius, world units.
  radius: f32,
  // Device pixels per world unit.
  px_per_unit: f32,
}

@group(0) @binding(0) var<uniform> view: View;
