// Pass 2 of the large-row normalization: one workgroup per row merges its chunks' statistics into
// (mean, 1 / sqrt(variance + epsilon)). Each invocation merges every 256th chunk, then the workgroup
// merges the 256 (one invocation looping over a 4M-element row's 1024 chunks was a chain of 1024
// dependent loads: most of a GroupNorm's time).
#include "norm/norm_common.wgsl"
@group(0) @binding(0) var<storage, read> partials: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> row_stats: array<vec2<f32>>;
@group(0) @binding(2) var<uniform> params: NormParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let r = wg.y * nwg.x + wg.x;
  if (r >= params.rows) { return; }  // uniform per workgroup
  var s = vec4<f32>(0.0);
  for (var c = lid; c < params.chunks; c = c + 256u) { s = merge_stats(s, partials[r * params.chunks + c]); }
  workgroup_merge(lid, s);
  if (lid == 0u) {
    let t = shared_stats[0];
    let variance = t.z / max(t.x, 1.0);
    row_stats[r] = vec2<f32>(t.y, inverseSqrt(variance + params.epsilon));
  }
}
