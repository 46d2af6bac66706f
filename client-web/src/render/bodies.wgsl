// Every player, in one instanced draw: 6 vertices (a quad) per instance, the
// instance attribute is (x, y, heading radians, style). Style bit 0: moving,
// bit 1: the local player (cyan with a white ring); bits 2-9: the player's
// hue index (render/hue.ts: others get their own colour, never the cyan).

// Other players' colours (render/hue.ts has the same numbers): hue index /
// 256 maps to HUE_FROM + that share of HUE_SPAN degrees.
const HUE_FROM: f32 = 225.0;
const HUE_SPAN: f32 = 300.0;
const SATURATION: f32 = 0.75;
const VALUE: f32 = 0.97;

fn hue_rgb(index: u32) -> vec3f {
  let h = ((HUE_FROM + f32(index) / 256.0 * HUE_SPAN) % 360.0) / 60.0;
  let k = (vec3f(5.0, 3.0, 1.0) + h) % vec3f(6.0);
  return VALUE - VALUE * SATURATION * clamp(min(k, 4.0 - k), vec3f(0.0), vec3f(1.0));
}

struct BodyOut {
  @builtin(position) position: vec4f,
  // Position inside the quad, in body radii (the body is the unit disc).
  @location(0) local: vec2f,
  @location(1) @interpolate(flat) style: u32,
  @location(2) @interpolate(flat) facing: vec2f,
  // Area of interest: 1 within the view radius, fading to 0 beyond (the local player: always 1).
  @location(3) @interpolate(flat) shown: f32,
}

// Half-size of the quad in radii: room for the local player's ring.
const EXTENT: f32 = 1.4;

@vertex
fn vs_body(@builtin(vertex_index) vi: u32, @location(0) inst: vec4f) -> BodyOut {
  var corners = array<vec2f, 6>(
    vec2f(-1.0, -1.0), vec2f(1.0, -1.0), vec2f(-1.0, 1.0),
    vec2f(-1.0, 1.0), vec2f(1.0, -1.0), vec2f(1.0, 1.0),
  );
  let corner = corners[vi] * EXTENT;
  let world = inst.xy + corner * view.radius;
  var out: BodyOut;
  out.position = vec4f((world - view.center) * view.scale, 0.0, 1.0);
  out.local = corner;
  out.style = u32(inst.w);
  out.facing = vec2f(cos(inst.z), sin(inst.z));
  out.shown = select(in_view(inst.xy), 1.0, (out.style & 2u) != 0u);
  return out;
}

@fragment
fn fs_body(in: BodyOut) -> @location(0) vec4f {
  let d = length(in.local);
  // One device pixel, in radii.
  let aa = 1.0 / max(view.radius * view.px_per_unit, 1.0);
  let is_local = (in.style & 2u) != 0u;
  let base = select(hue_rgb(in.style >> 2u), vec3f(0.25, 0.82, 1.0), is_local);
  var alpha = 1.0 - smoothstep(1.0 - aa, 1.0 + aa, d);
  // A dark dot towards the heading.
  let m = length(in.local - in.facing * 0.55);
  let marker = 1.0 - smoothstep(0.24 - aa, 0.24 + aa, m);
  var color = mix(base, base * 0.35, marker);
  if (is_local) {
    let ring = 1.0 - smoothstep(0.08 - aa, 0.08 + aa, abs(d - 1.22));
    color = mix(color, vec3f(1.0), ring * (1.0 - alpha));
    alpha = max(alpha, ring);
  }
  alpha = alpha * in.shown;
  if (alpha <= 0.004) {
    discard;
  }
  // Premultiplied alpha.
  return vec4f(color * alpha, alpha);
}
