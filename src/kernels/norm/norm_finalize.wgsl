// Pass 2 of the large-row normalization: one invocation per row merges its chunks' statistics into
// (mean, 1 / sqrt(variance + epsilon)).
#include "norm/norm_common.wgsl"
@group(0) @binding(0) var<storage, read> partials: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> row_stats: array<vec2<f32>>;
@group(0) @binding(2) var<uniform> params: NormParams;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = id.y * nwg.x * 64u + id.x;
  if (r >= params.rows) { return; }
  var s = vec4<f32>(0.0);
  for (var c = 0u; c < params.chunks; c = c + 1u) { s = merge_stats(s, partials[r * params.chunks + c]); }
  let variance = s.z / max(s.x, 1.0);
  row_stats[r] = vec2<f32>(s.y, inverseSqrt(variance + params.epsilon));
}
