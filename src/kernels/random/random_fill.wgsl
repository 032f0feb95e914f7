// Fills y with random draws, element i from Philox4x32-10 at counter (i, 0, 0, 0) under the key
// (random/random.h). UNIFORM: a + (b - a) u; NORMAL: a + b z with z from Box-Muller on two words;
// BERNOULLI: 1 where u < p[i], else 0 (INTEGER output: 32-bit words, as ints and bools are held).
#include "random/philox.wgsl"

struct Params {
  count: u32,
  key0: u32,
  key1: u32,
  y_offset: u32,
  p_offset: u32,
  a: f32,
  b: f32,
  _pad: u32,
}

#if BERNOULLI
{{P_ACCESS}}
#endif
#if INTEGER
@group(0) @binding({{Y_BINDING}}) var<storage, read_write> y_words: array<u32>;
fn store_y(i: u32, v: f32) {
  y_words[i] = u32(v);
}
#else
{{Y_ACCESS}}
#endif
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (i >= params.count) { return; }
  let bits = philox4x32_10(vec4<u32>(i, 0u, 0u, 0u), vec2<u32>(params.key0, params.key1));
#if NORMAL
  let u1 = 1.0 - unit_interval(bits.x);  // (0, 1]: log(u1) is finite
  let u2 = unit_interval(bits.y);
  let z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
  store_y(params.y_offset + i, params.a + params.b * z);
#endif
#if BERNOULLI
  store_y(params.y_offset + i, select(0.0, 1.0, unit_interval(bits.x) < load_p(params.p_offset + i)));
#endif
#if UNIFORM
  store_y(params.y_offset + i, params.a + (params.b - params.a) * unit_interval(bits.x));
#endif
}
