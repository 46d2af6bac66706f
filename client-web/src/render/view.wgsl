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
  // Area of interest: the centre of the view radius's circle (the followed
  // player) and the radius, world units; radius 0 without area of interest.
  focus: vec2f,
  view_radius: f32,
  _pad: f32,
}

// How far a body fades out beyond the view radius, world units, and the dim
// of the floor beyond it (area of interest: the server sends little past it).
const VIEW_FADE: f32 = 12.0;
const VIEW_DIM: f32 = 0.45;

// 1 inside the view radius's circle, fading to 0 over VIEW_FADE beyond it; 1
// everywhere without area of interest.
fn in_view(w: vec2f) -> f32 {
  if (view.view_radius <= 0.0) {
    return 1.0;
  }
  return 1.0 - smoothstep(view.view_radius, view.view_radius + VIEW_FADE, length(w - view.focus));
}

@group(0) @binding(0) var<uniform> view: View;
