// The world's floor, drawn as one full-screen triangle: a 50-unit grid inside
// the bounds, a darker outside, and a bright line on the bounds themselves;
// with area of interest, dimmed beyond the view radius with a faint line on it.

struct FloorOut {
  @builtin(position) position: vec4f,
  // World position of the pixel, world units.
  @location(0) world: vec2f,
}

@vertex
fn vs_floor(@builtin(vertex_index) vi: u32) -> FloorOut {
  var clip = array<vec2f, 3>(vec2f(-1.0, -1.0), vec2f(3.0, -1.0), vec2f(-1.0, 3.0));
  var out: FloorOut;
  out.position = vec4f(clip[vi], 0.0, 1.0);
  out.world = view.center + clip[vi] / view.scale;
  return out;
}

@fragment
fn fs_floor(in: FloorOut) -> @location(0) vec4f {
  let w = in.world;
  // World units per device pixel.
  let px = 1.0 / view.px_per_unit;
  let centre = (view.bounds_min + view.bounds_max) * 0.5;
  let half = (view.bounds_max - view.bounds_min) * 0.5;
  let q = abs(w - centre) - half;
  // Signed distance to the bounds' rectangle (negative inside).
  let dist = length(max(q, vec2f(0.0))) + min(max(q.x, q.y), 0.0);
  var color = vec3f(0.035, 0.04, 0.055);
  if (dist < 0.0) {
    let g = abs(fract((w - view.bounds_min) / 50.0 + 0.5) - 0.5) * 50.0;
    let line = 1.0 - smoothstep(0.0, px, min(g.x, g.y));
    color = mix(vec3f(0.085, 0.10, 0.13), vec3f(0.13, 0.15, 0.19), line);
  }
  let border = 1.0 - smoothstep(px, 2.0 * px, abs(dist));
  color = mix(color, vec3f(0.45, 0.55, 0.70), border);
  if (view.view_radius > 0.0) {
    let edge = length(w - view.focus) - view.view_radius;
    color = color * mix(VIEW_DIM, 1.0, 1.0 - smoothstep(0.0, 2.0 * px, edge));
    color = mix(color, vec3f(0.25, 0.55, 0.70), 0.5 * (1.0 - smoothstep(px, 2.0 * px, abs(edge))));
  }
  return vec4f(color, 1.0);
}
